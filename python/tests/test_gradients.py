"""Theorem 1 in PyTorch: the gradient of the SFT loss on the packed-4d batch (one forward) equals the
sum of the per-branch losses' gradients (LogitTree: one causal forward and backward per branch),
and equals the workbench's WGSL gradient of the same loss for the same checkpoint (`mw verify
--grad-out`). Per tensor max|a - b| / max|b|, the worst tensor counts."""

from __future__ import annotations

import torch

import memorywalker as mw

from conftest import FIGURES, mw as run_mw

TOLERANCE = 1e-4
#: Generated rollouts with diverging leaves, and gen-905, whose packed-4d batch has two targets on one predictor row.
ROLLOUTS = ["gen-903", "gen-905", "gen-908", "gen-913"]


def relative(got: dict[str, torch.Tensor], want: dict[str, torch.Tensor]) -> tuple[float, str]:
    worst, where = 0.0, ""
    for name, w in want.items():
        d = (got[name].double() - w.double()).abs().max().item()
        scale = w.double().abs().max().item()
        rel = 0.0 if d == 0 else (float("inf") if scale == 0 else d / scale)
        if where == "" or rel > worst:
            worst, where = rel, name
    return worst, where


def grads(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.grad.detach().clone() for name, p in model.named_parameters()}


def packed_gradient(fixtures, batch: mw.Batch, dtype=torch.float32) -> dict[str, torch.Tensor]:
    model = mw.load_gpt2(str(fixtures / "ckpt.safetensors"), dtype=dtype)
    logits = model(batch.input_ids, batch.position_ids, mw.dense_mask(batch))
    mw.packed_loss(batch, logits, "sft").backward()
    return grads(model)


def branch_gradient(fixtures, batch: mw.Batch) -> dict[str, torch.Tensor]:
    """LogitTree: each branch (a causal block of the logit-tree batch: rows sharing one subtree_end) in
    its own forward; loss_b = its targets' NLL summed over T, so the losses sum to the mean NLL."""
    model = mw.load_gpt2(str(fixtures / "ckpt.safetensors"))
    T = batch.target_rows.shape[0]
    ends = batch.subtree_end.tolist()
    start = 0
    branches = 0
    while start < batch.rows:
        end = ends[start]
        assert all(e == end for e in ends[start:end]), "a logit-tree block is causal: one subtree_end"
        rows = torch.arange(start, end)
        causal = torch.ones(end - start, end - start, dtype=torch.bool).tril()
        logits = model(batch.input_ids[rows], batch.position_ids[rows], causal)
        inside = (batch.target_rows >= start) & (batch.target_rows < end)
        lp = torch.log_softmax(logits[batch.target_rows[inside] - start], -1).gather(-1, batch.target_tokens[inside][:, None])
        if inside.any():
            (-lp.sum() / T).backward()
        branches += 1
        start = end
    assert branches > 1
    return grads(model)


def test_packed_4d_gradient_equals_sum_of_branch_gradients(fixtures, export):
    worst = (0.0, "")
    for name in [*ROLLOUTS, "rollouts"]:
        file = f"{name}.json" if name != "rollouts" else "rollouts.jsonl"
        packed = mw.load_batch(str(export("packed-4d", file)))
        tree = mw.load_batch(str(export("logit-tree", file)))
        assert packed.target_rows.shape == tree.target_rows.shape
        rel, tensor = relative(packed_gradient(fixtures, packed), branch_gradient(fixtures, tree))
        assert rel <= TOLERANCE, f"{name}: {tensor} differs by {rel:.2e}"
        worst = max(worst, (rel, f"{tensor}, {name}"))
    FIGURES["max relative Δ gradient, packed-4d vs sum of per-branch (torch, float32)"] = f"{worst[0]:.2e} ({worst[1]})"


def test_torch_gradient_equals_the_wgsl_gradient(fixtures, export):
    worst = (0.0, "")
    for name in ROLLOUTS:
        out = fixtures / f"{name}.grad.safetensors"
        run_mw("verify", str(fixtures / f"{name}.json"), "--ckpt", str(fixtures / "ckpt.safetensors"), "--grad-out", str(out), "--json")
        wgsl, metadata = mw.read_gpt2_tensors(str(out))
        assert (metadata["kind"], metadata["method"], metadata["rollout"]) == ("gradient", "packed-4d", name)
        torch_grads = packed_gradient(fixtures, mw.load_batch(str(export("packed-4d", f"{name}.json"))), dtype=torch.float64)
        assert sorted(wgsl) == sorted(torch_grads)
        rel, tensor = relative(wgsl, torch_grads)
        assert rel <= TOLERANCE, f"{name}: {tensor} differs by {rel:.2e}"
        worst = max(worst, (rel, f"{tensor}, {name}"))
    FIGURES["max relative Δ gradient, WGSL (mw verify --grad-out) vs torch float64"] = f"{worst[0]:.2e} ({worst[1]})"
