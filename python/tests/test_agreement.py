"""Proof in PyTorch that the exported batches are the workbench's: torch GPT-2 on `mw export`'s batch
gives every target the log-probability `mw score` (WGSL) gives it, for every method, on generated
rollouts with edits, binned into several packed sequences."""

from __future__ import annotations

import json

import pytest
import torch

import memorywalker as mw

from conftest import FIGURES, mw as run_mw

TOLERANCE = 1e-4


def scores(fixtures, method: str) -> dict[tuple[int, int], float]:
    """(rollout index, physical id) -> `mw score`'s logprob."""
    out = json.loads(run_mw("score", "--ckpt", str(fixtures / "ckpt.safetensors"), str(fixtures / "rollouts.jsonl"), "--method", method, "--json"))
    return {(r, t["id"]): t["logprob"] for r, rollout in enumerate(out) for t in rollout["targets"]}


def torch_logprobs(batch: mw.Batch, model: mw.GPT2, rows: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        logits = model(batch.input_ids, batch.position_ids, mw.dense_mask(batch))
    return torch.log_softmax(logits[rows], dim=-1).gather(-1, tokens[:, None])[:, 0]


@pytest.fixture(scope="module")
def model(fixtures):
    return mw.load_gpt2(str(fixtures / "ckpt.safetensors"))


@pytest.mark.parametrize("method", ["naive-compressed", "naive-full", "logit-tree", "packed-4d"])
def test_torch_logprobs_equal_mw_score(fixtures, export, model, method):
    b = mw.load_batch(str(export(method, max_tokens=128)))
    got = torch_logprobs(b, model, b.target_rows, b.target_tokens)
    rollout = b.rollout_index[b.target_rows]
    want = scores(fixtures, method)
    keys = list(zip(rollout.tolist(), b.target_physical_ids.tolist()))
    assert sorted(keys) == sorted(want), "the batch scores exactly the targets mw score scores"
    delta = max(abs(g - want[k]) for g, k in zip(got.tolist(), keys))
    FIGURES[f"max |Δ logprob| torch vs mw score, {method}"] = f"{delta:.2e} over {len(keys)} targets"
    assert delta <= TOLERANCE


def test_sdcc_student_scores_like_naive_compressed_and_teacher_like_logit_tree(fixtures, export, model):
    b = mw.load_batch(str(export("sdcc", max_tokens=128)))
    assert b.sdcc_student_rows.shape[0] > 5
    # The student's targets: naive-compressed.
    got = torch_logprobs(b, model, b.target_rows, b.target_tokens)
    keys = list(zip(b.rollout_index[b.target_rows].tolist(), b.target_physical_ids.tolist()))
    compressed = scores(fixtures, "naive-compressed")
    assert sorted(keys) == sorted(compressed)
    student = max(abs(g - compressed[k]) for g, k in zip(got.tolist(), keys))
    # The teacher row of each diverging leaf: its live prefix, as logit-tree scores it.
    which = {row: j for j, row in enumerate(b.target_rows.tolist())}
    pairs = [which[row] for row in b.sdcc_student_rows.tolist()]
    leaf_tokens = b.target_tokens[pairs]
    teacher = torch_logprobs(b, model, b.sdcc_teacher_rows, leaf_tokens)
    tree = scores(fixtures, "logit-tree")
    leaf_keys = [keys[j] for j in pairs]
    teacher_delta = max(abs(g - tree[k]) for g, k in zip(teacher.tolist(), leaf_keys))
    FIGURES["max |Δ logprob| torch vs mw score, sdcc student (naive-compressed)"] = f"{student:.2e} over {len(keys)} targets"
    FIGURES["max |Δ logprob| torch vs mw score, sdcc teacher (logit-tree)"] = f"{teacher_delta:.2e} over {len(leaf_keys)} diverging leaves"
    assert student <= TOLERANCE and teacher_delta <= TOLERANCE
    # Where the live prefix differs from the final one, the scores differ: the pairs are real.
    assert (teacher - got[pairs]).abs().max() > 1e-3
