"""packed_loss against the workbench's float64 objectives (src/objectives: tokens.ts, sdcc.ts, grpo.ts)
on the same logits: the loss and its gradient with respect to every logit, for SFT, PPO-clipped RL
with GRPO advantages (with and without the k3 KL to a reference), and SDCC on either task."""

from __future__ import annotations

import json

import pytest
import torch

import memorywalker as mw

from conftest import FIGURES, helper


@pytest.fixture(scope="module")
def logits_of(fixtures):
    model = mw.load_gpt2(str(fixtures / "ckpt.safetensors"), dtype=torch.float64)

    def run(batch: mw.Batch) -> torch.Tensor:
        with torch.no_grad():
            return model(batch.input_ids, batch.position_ids, mw.dense_mask(batch))

    return run


def reference(cases: list[dict], advantages: dict | None = None) -> dict:
    return json.loads(helper("objectives", input=json.dumps({"cases": cases, "advantages": advantages})))


def case(batch: mw.Batch, logits: torch.Tensor, objective: dict, advantages=None, ref=None, sdcc_lambda=None) -> dict:
    T = batch.target_rows.shape[0]
    targets = []
    for j in range(T):
        t = {"row": int(batch.target_rows[j]), "token": int(batch.target_tokens[j]), "weight": 1 / T}
        if objective["kind"] == "ppo":
            t["rolloutLogprob"] = float(batch.target_rollout_logprobs[j])
            t["advantage"] = float(advantages[j])
            if ref is not None:
                t["refLogprob"] = float(ref[j])
        targets.append(t)
    N, V = logits.shape
    out = {"N": N, "V": V, "logits": logits.flatten().tolist(), "targets": targets, "objective": objective}
    if sdcc_lambda is not None:
        pairs = [{"studentRow": int(s), "teacherRow": int(t)} for s, t in zip(batch.sdcc_student_rows, batch.sdcc_teacher_rows)]
        out["sdcc"] = {"pairs": pairs, "lambda": sdcc_lambda}
    return out


def torch_side(batch: mw.Batch, logits: torch.Tensor, **options) -> tuple[float, torch.Tensor]:
    z = logits.clone().requires_grad_(True)
    loss = mw.packed_loss(batch, z, **options)
    loss.backward()
    return loss.item(), z.grad


def test_grpo_advantages_equal_the_workbench(export):
    b = mw.load_batch(str(export("packed-4d")))
    rewards = torch.nan_to_num(b.rollout_rewards.double(), nan=0.0)
    groups = [b.groups[g] if g >= 0 else None for g in b.rollout_groups.tolist()]
    # Plus a group of equal rewards and a rollout on its own: both advantage 0.
    rewards = torch.cat([rewards, torch.tensor([0.5, 0.5, 1.0], dtype=torch.float64)])
    groups = groups + ["same", "same", None]
    codes = torch.tensor([sorted(set(g for g in groups if g)).index(g) if g else -1 for g in groups])
    want = reference([], {"rewards": rewards.tolist(), "groups": groups})["advantages"]
    got = mw.grpo_advantages(rewards, codes)
    assert got[-3:].tolist() == [0.0, 0.0, 0.0]
    assert got.abs().max() > 0.5
    assert torch.allclose(got, torch.tensor(want, dtype=torch.float64), rtol=0, atol=1e-12)


def test_packed_loss_equals_the_float64_objectives(export, logits_of):
    packed = mw.load_batch(str(export("packed-4d", max_tokens=128)))
    sdcc = mw.load_batch(str(export("sdcc", max_tokens=128)))
    z_packed, z_sdcc = logits_of(packed), logits_of(sdcc)
    A_packed, A_sdcc = mw.target_advantages(packed), mw.target_advantages(sdcc)
    ref = (packed.target_rollout_logprobs.double() - 0.3).clamp(max=0)
    ref_sdcc = (sdcc.target_rollout_logprobs.double() + 0.2).clamp(max=0)
    runs = [
        ("sft", packed, z_packed, dict(objective="sft"), case(packed, z_packed, {"kind": "sft"})),
        ("ppo", packed, z_packed, dict(objective="ppo"), case(packed, z_packed, {"kind": "ppo"}, A_packed)),
        ("ppo, eps 0.1, k3 KL 0.05", packed, z_packed, dict(objective="ppo", epsilon=0.1, kl_coef=0.05, ref_logprobs=ref), case(packed, z_packed, {"kind": "ppo", "epsilon": 0.1, "klCoef": 0.05}, A_packed, ref)),
        ("sdcc on sft, lambda 0.3", sdcc, z_sdcc, dict(objective="sdcc", task="sft", lam=0.3), case(sdcc, z_sdcc, {"kind": "sft"}, sdcc_lambda=0.3)),
        ("sdcc on ppo, k3 KL 0.1", sdcc, z_sdcc, dict(objective="sdcc", task="ppo", kl_coef=0.1, ref_logprobs=ref_sdcc), case(sdcc, z_sdcc, {"kind": "ppo", "klCoef": 0.1}, A_sdcc, ref_sdcc, sdcc_lambda=0.1)),
    ]
    results = reference([c for *_, c in runs])["results"]
    worst = 0.0
    for (name, batch, z, options, _), want in zip(runs, results):
        loss, grad = torch_side(batch, z, **options)
        d_grad = (grad.flatten() - torch.tensor(want["dLogits"], dtype=torch.float64)).abs().max().item()
        assert abs(loss - want["loss"]) <= 1e-10 * max(1.0, abs(want["loss"])), name
        assert d_grad <= 1e-10, f"{name}: dLogits differ by {d_grad:.2e}"
        assert grad.abs().max() > 1e-4, f"{name}: a real gradient"
        worst = max(worst, d_grad)
    # The clip and the KL change the numbers: the cases are not the same objective five times.
    losses = [w["loss"] for w in results]
    assert len({round(v, 8) for v in losses}) == len(losses)
    FIGURES["packed_loss vs src/objectives (float64): max |Δ dLoss/dlogits|"] = f"{worst:.2e} over sft, ppo, ppo+k3, sdcc+sft, sdcc+ppo"


def test_sdcc_kl_is_zero_without_diverging_leaves(tmp_path, fixtures):
    from conftest import mw as run_mw

    out = tmp_path / "no-leaves.safetensors"
    run_mw("export", str(fixtures / "gen-902.json"), "--method", "sdcc", "--out", str(out))
    b = mw.load_batch(str(out))
    assert b.sdcc_student_rows.shape[0] == 0
    logits = torch.randn(b.rows, b.vocab, dtype=torch.float64, requires_grad=True)
    kl = mw.sdcc_kl(b, logits)
    assert kl.item() == 0.0
    assert mw.packed_loss(b, logits, "sdcc", lam=5.0).item() == mw.packed_loss(b, logits, "sft").item()
