"""Data-parallel training on a tree batch (python3 -m memorywalker.train): two ranks give the single-process
gradient (float64, 1e-6 relative) for SFT, RL and SDCC on a two-rollout batch with edits whose packed sequences
differ in rows and targets, while the per-rank-normalised loss most DDP recipes write does not; the rank
assignment is balanced and keeps SDCC pairs together; a few two-rank updates lower the loss, and what they
write reloads in torch (a model folder) and scores in `mw score` (a GPT-2 checkpoint).

Why float64: the figure compared is max |g2 - g1| / max |g1| per tensor; float32's round-off alone (measured
below: the same single-process gradient in float32 against float64) is of the order of the 1e-6 tolerance, so
in float32 the test could not tell a summation order from a normalisation. In float64 two ranks agree to ~1e-16
and any normalisation error shows at its own size (here ~1e-1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

import memorywalker as mw
from memorywalker import train

from conftest import FIGURES, ROOT, mw as run_mw

TOLERANCE = 1e-6
OBJECTIVES = {"sft": ("packed-4d", 40, []), "rl": ("packed-4d", 40, []), "sdcc": ("sdcc", 20, ["--lambda", "0.5"])}


def relative(got: dict[str, torch.Tensor], want: dict[str, torch.Tensor]) -> tuple[float, str]:
    """The worst tensor's max |got - want| / max |want|."""
    assert sorted(got) == sorted(want)
    return max((((got[n].double() - w.double()).abs().max() / w.double().abs().max()).item(), n) for n, w in want.items())


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memorywalker.train", *args], cwd=ROOT / "python", capture_output=True, text=True)


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def per_rank_normalised(batch: mw.Batch, folder: str, objective: str, world: int) -> dict[str, torch.Tensor]:
    """What a plain DDP recipe computes: each rank's mean over its own targets (and pairs), averaged over ranks."""
    model = mw.load_family(folder, dtype=torch.float64)
    options = {"sft": dict(objective="sft"), "rl": dict(objective="ppo"), "sdcc": dict(objective="sdcc", task="sft", lam=0.5)}[objective]
    for share in train.rank_shares(batch, world):
        sub = mw.select_sequences(batch, [s for unit in share for s in unit])
        loss = mw.packed_loss(sub, model(sub.input_ids, sub.position_ids, mw.dense_mask(sub)), **options)
        (loss / world).backward()
    return {n: p.grad for n, p in model.named_parameters()}


def test_rank_shares_are_balanced_deterministic_and_keep_sdcc_pairs_together(export):
    b = mw.load_batch(str(export("packed-4d", max_tokens=64)))
    sizes = (b.seq_start[1:] - b.seq_start[:-1]).tolist()
    assert b.sequences >= 6
    for world in (2, 3):
        shares = train.rank_shares(b, world)
        assert shares == train.rank_shares(b, world)
        flat = sorted(s for share in shares for unit in share for s in unit)
        assert flat == list(range(b.sequences))
        loads = [sum(sizes[s] for unit in share for s in unit) for share in shares]
        assert max(loads) - min(loads) <= max(sizes), f"greedy largest-first: within one sequence ({loads})"
    # More ranks than sequences: the extra ranks hold nothing (and still join the all-reduce).
    assert train.rank_shares(b, b.sequences + 1)[-1] == []
    sdcc = mw.load_batch(str(export("sdcc", max_tokens=64)))
    seq = mw.sequence_of_rows(sdcc)
    owner = {s: r for r, share in enumerate(train.rank_shares(sdcc, 3)) for unit in share for s in unit}
    pairs = list(zip(seq[sdcc.sdcc_student_rows].tolist(), seq[sdcc.sdcc_teacher_rows].tolist()))
    assert len(pairs) > 5 and all(owner[a] == owner[b] for a, b in pairs)
    assert all(a == b for a, b in pairs), "mw export keeps a rollout's SDCC tree in one packed sequence (docs/batch-format.md)"


def test_a_pair_across_sequences_keeps_them_on_one_rank(export):
    """mw export keeps a rollout's SDCC tree in one packed sequence; were a pair to span two, they move together."""
    b = mw.load_batch(str(export("sdcc", max_tokens=128)))
    tensors = dict(b.tensors)
    last = int(b.seq_start[-2])  # a teacher row in the last sequence, paired with a student row of the first
    tensors["sdcc_student_rows"] = torch.cat([b.sdcc_student_rows, torch.tensor([1])])
    tensors["sdcc_teacher_rows"] = torch.cat([b.sdcc_teacher_rows, torch.tensor([last])])
    linked = mw.Batch(tensors, b.metadata)
    shares = train.rank_shares(linked, 2)
    together = [unit for share in shares for unit in share if 0 in unit][0]
    assert b.sequences - 1 in together
    with pytest.raises(ValueError, match="an SDCC pair spans"):
        mw.select_sequences(linked, [0])


@pytest.mark.parametrize("objective", list(OBJECTIVES))
def test_two_ranks_give_the_single_process_gradient(tiny_folders, two_rollouts, export, tmp_path, objective):
    method, max_tokens, extra = OBJECTIVES[objective]
    path = str(export(method, "two.jsonl", max_tokens))
    b = mw.load_batch(path)
    folder = str(tiny_folders["qwen3"])
    # The batch a per-rank normalisation gets wrong: two packed sequences of different rows and targets, one per rank.
    shares = train.rank_shares(b, 2)
    assert [len(share) for share in shares] == [1, 1]
    rows = [int(b.seq_start[s + 1] - b.seq_start[s]) for s in range(2)]
    targets = [mw.select_sequences(b, [s]).target_rows.shape[0] for s in range(2)]
    assert rows[0] != rows[1] and targets[0] != targets[1]
    if objective == "sdcc":
        pairs = [mw.select_sequences(b, [s]).sdcc_student_rows.shape[0] for s in range(2)]
        assert pairs[0] != pairs[1] and min(pairs) > 0
    args = [path, "--model", folder, "--objective", objective, *extra, "--steps", "0", "--dtype", "float64"]
    one, two = tmp_path / "ranks1.safetensors", tmp_path / "ranks2.safetensors"
    assert train.main([*args, "--ranks", "1", "--grad-out", str(one)]) == 0  # the same code, in this process
    run = cli(*args, "--ranks", "2", "--grad-out", str(two))
    assert run.returncode == 0, run.stderr
    assert lines(run.stdout)[0]["ranks"] == 2
    g1, meta1 = mw.read_torch_tensors(str(one))
    g2, meta2 = mw.read_torch_tensors(str(two))
    assert (meta1["kind"], meta1["ranks"], meta2["ranks"], meta2["objective"]) == ("gradient", "1", "2", objective)
    assert float(meta1["loss"]) == pytest.approx(float(meta2["loss"]), rel=1e-12)
    assert g1["model.embed_tokens.weight"].dtype == torch.float64
    assert min(g.abs().max().item() for g in g1.values()) > 1e-6, "every tensor has a real gradient"
    rel, where = relative(g2, g1)
    naive, naive_where = relative(per_rank_normalised(b, folder, objective, 2), g1)
    FIGURES[f"max relative Δ gradient, --ranks 2 vs --ranks 1, {objective} (float64)"] = f"{rel:.2e} ({where})"
    FIGURES[f"max relative Δ gradient, per-rank-normalised 2 ranks vs --ranks 1, {objective}"] = f"{naive:.2e} ({naive_where})"
    assert rel <= TOLERANCE
    assert naive > 100 * TOLERANCE, "the per-rank normalisation reweights the sequences: the check can fail"
    if objective == "sft":  # why float64: float32's round-off alone, the same single-process gradient
        model = mw.load_family(folder, dtype=torch.float32)
        mw.packed_loss(b, model(b.input_ids, b.position_ids, mw.dense_mask(b)), "sft").backward()
        f32, where32 = relative({n: p.grad for n, p in model.named_parameters()}, g1)
        FIGURES["max relative Δ gradient, float32 vs float64, one process, sft"] = f"{f32:.2e} ({where32})"
        assert f32 > 1e-9


def test_two_rank_training_lowers_the_loss_and_the_folder_reloads(tiny_folders, two_rollouts, export, tmp_path):
    path = str(export("packed-4d", "two.jsonl", 40))
    folder, out = str(tiny_folders["qwen3"]), tmp_path / "trained"
    run = cli(path, "--model", folder, "--objective", "sft", "--steps", "4", "--lr", "0.01", "--ranks", "2", "--out", str(out))
    assert run.returncode == 0, run.stderr
    steps = lines(run.stdout)
    losses = [s["loss"] for s in steps if "loss" in s]
    assert len(losses) == 5 and steps[-1] == {"wrote": str(out)}
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    trained = mw.load_family(str(out), dtype=None)
    assert trained.stored_dtype == "BF16" and trained.model.embed_tokens.weight.dtype == torch.bfloat16
    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == ["Qwen3ForCausalLM"] and config["torch_dtype"] == "bfloat16" and config["tie_word_embeddings"]
    b = mw.load_batch(path)
    with torch.no_grad():
        before = mw.packed_loss(b, mw.load_family(folder)(b.input_ids, b.position_ids, mw.dense_mask(b)), "sft").item()
        after = mw.packed_loss(b, mw.load_family(str(out))(b.input_ids, b.position_ids, mw.dense_mask(b)), "sft").item()
    FIGURES["qwen3 tiny, 4 updates on 2 ranks, sft loss"] = f"{losses[0]:.4f} -> {losses[-1]:.4f} (reloaded BF16 folder: {before:.4f} -> {after:.4f})"
    assert after == pytest.approx(losses[-1], abs=0.05) and after < before - 0.5


def test_two_rank_gpt2_checkpoint_scores_in_mw_score(fixtures, two_rollouts, export, tmp_path):
    path = str(export("packed-4d", "two.jsonl", 40))
    ckpt, out = str(fixtures / "ckpt.safetensors"), tmp_path / "gpt2"
    run = cli(path, "--model", ckpt, "--objective", "rl", "--steps", "2", "--lr", "0.003", "--ranks", "2", "--out", str(out))
    assert run.returncode == 0, run.stderr
    losses = [s["loss"] for s in lines(run.stdout) if "loss" in s]
    assert losses[-1] < losses[0]
    written = out / "model.safetensors"
    tensors, meta = mw.read_gpt2_tensors(str(written))
    assert (meta["model_type"], meta["step"], meta["objective"], meta["n_head"]) == ("gpt2", "2", "rl", "2")
    scored = json.loads(run_mw("score", "--ckpt", str(written), str(two_rollouts), "--method", "packed-4d", "--json"))
    want = {(r, t["id"]): t["logprob"] for r, rollout in enumerate(scored) for t in rollout["targets"]}
    b = mw.load_batch(path)
    model, original = mw.load_gpt2(str(written)), mw.load_gpt2(ckpt)
    with torch.no_grad():
        got = mw.target_logprobs(b, model(b.input_ids, b.position_ids, mw.dense_mask(b)))
        moved = (got - mw.target_logprobs(b, original(b.input_ids, b.position_ids, mw.dense_mask(b)))).abs().max().item()
    keys = list(zip(b.rollout_index[b.target_rows].tolist(), b.target_physical_ids.tolist()))
    delta = max(abs(g - want[k]) for g, k in zip(got.tolist(), keys))
    FIGURES["GPT-2 trained on 2 ranks: max |Δ logprob| torch vs mw score of its checkpoint"] = f"{delta:.2e} (training moved them by up to {moved:.2f})"
    assert delta <= 1e-4 and moved > 1e-2


def test_bad_input_is_one_line(tiny_folders, two_rollouts, export, tmp_path, capsys):
    path = str(export("packed-4d", "two.jsonl", 40))
    qwen3, out = str(tiny_folders["qwen3"]), str(tmp_path / "o")
    assert train.main([str(tmp_path / "none.safetensors"), "--model", qwen3, "--objective", "sft", "--steps", "1", "--out", out]) == 2
    assert train.main([path, "--model", str(tmp_path), "--objective", "sft", "--steps", "1", "--out", out]) == 2
    assert train.main([path, "--model", qwen3, "--objective", "sdcc", "--steps", "1", "--out", out]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(str(tmp_path / "none.safetensors") + ":")
    assert err[1] == f"{tmp_path}: not a model folder (no config.json)"
    assert err[2] == f"{path}: --objective sdcc needs a batch exported with --method sdcc, this one is packed-4d"
    with pytest.raises(SystemExit) as usage:
        train.main([path, "--objective", "sft", "--steps", "1"])
    assert usage.value.code == 1
    assert capsys.readouterr().err.startswith("memorywalker.train: the following arguments are required: --model")
    # A NaN weight: the first gradient is not finite; exit 4 after writing the last good weights (here: none applied).
    broken = mw.load_family(qwen3)
    with torch.no_grad():
        broken.model.norm.weight[0] = float("nan")
    mw.save_family(broken, str(tmp_path / "nan"))
    assert train.main([path, "--model", str(tmp_path / "nan"), "--objective", "sft", "--steps", "3", "--out", out]) == 4
    assert capsys.readouterr().err.strip() == f"memorywalker.train: stopped: the gradient of update 0 is not finite; {out} holds the weights after 0 updates"
    assert mw.read_torch_tensors(str(tmp_path / "o" / "model.safetensors"))[1]["step"] == "0"
    if not train.flex_available():  # torch 1.13: the FlexAttention path says what it needs
        with pytest.raises(SystemExit) as flex:
            train.main([path, "--model", qwen3, "--objective", "sft", "--steps", "1", "--out", out, "--attention", "flex"])
        assert flex.value.code == 1
        assert f"--attention flex needs FlexAttention (torch >= 2.5); this is torch {torch.__version__}" in capsys.readouterr().err


def test_started_like_torchrun_gives_the_same_gradient(tiny_folders, two_rollouts, export, tmp_path):
    """The environment torchrun gives each process (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT):
    two processes started that way write the single-process gradient."""
    path = str(export("packed-4d", "two.jsonl", 40))
    args = [path, "--model", str(tiny_folders["qwen3"]), "--objective", "sft", "--steps", "0", "--dtype", "float64"]
    one, two = tmp_path / "ranks1.safetensors", tmp_path / "torchrun.safetensors"
    assert train.main([*args, "--grad-out", str(one)]) == 0
    port = str(train.free_port())
    ranks = [
        subprocess.Popen([sys.executable, "-m", "memorywalker.train", *args, "--grad-out", str(two)], cwd=ROOT / "python", stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, "RANK": str(r), "LOCAL_RANK": str(r), "WORLD_SIZE": "2",
                                                                "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port})
        for r in range(2)
    ]
    outs = [p.communicate(timeout=180) for p in ranks]
    assert [p.returncode for p in ranks] == [0, 0], [err for _, err in outs]
    assert lines(outs[0][0])[0]["ranks"] == 2 and outs[1][0] == ""  # rank 0 reports, rank 1 stays quiet
    rel, where = relative(mw.read_torch_tensors(str(two))[0], mw.read_torch_tensors(str(one))[0])
    FIGURES["max relative Δ gradient, 2 processes started as torchrun starts them vs --ranks 1, sft (float64)"] = f"{rel:.2e} ({where})"
    assert rel <= TOLERANCE


def test_a_rank_without_sequences_joins_with_a_zero_gradient(tiny_folders, two_rollouts, export, tmp_path):
    """Three ranks on two packed sequences: the third holds nothing, still joins DDP's all-reduce, and the sum is
    the single-process gradient (up to the order of a three-way float64 sum)."""
    path = str(export("packed-4d", "two.jsonl", 40))
    b = mw.load_batch(path)
    assert train.rank_shares(b, 3)[2] == []
    args = [path, "--model", str(tiny_folders["qwen3"]), "--objective", "sft", "--steps", "0", "--dtype", "float64"]
    one, three = tmp_path / "ranks1.safetensors", tmp_path / "ranks3.safetensors"
    assert train.main([*args, "--grad-out", str(one)]) == 0
    run = cli(*args, "--ranks", "3", "--grad-out", str(three))
    assert run.returncode == 0, run.stderr
    rel, where = relative(mw.read_torch_tensors(str(three))[0], mw.read_torch_tensors(str(one))[0])
    FIGURES["max relative Δ gradient, --ranks 3 (one rank empty) vs --ranks 1, sft (float64)"] = f"{rel:.2e} ({where})"
    assert rel <= TOLERANCE
