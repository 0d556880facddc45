"""The batch file read in Python: the worked example's packed batch as docs/batch-format.md draws it,
the reader without the `safetensors` package, and the three mask forms agreeing on every method."""

from __future__ import annotations

import pytest
import torch

import memorywalker as mw
from memorywalker import safetensors_io

from conftest import ROOT, mw as run_mw

METHODS = ["naive-compressed", "naive-full", "logit-tree", "packed-4d", "sdcc"]


@pytest.fixture(scope="module")
def worked(tmp_path_factory):
    out = tmp_path_factory.mktemp("worked") / "worked.safetensors"
    run_mw("export", str(ROOT / "fixtures/worked-example.json"), "--method", "packed-4d", "--out", str(out))
    return out


def test_worked_example_packed_batch(worked):
    b = mw.load_batch(str(worked))
    assert (b.method, b.vocab, b.rows, b.sequences, b.rollout_ids, b.label_collisions) == ("packed-4d", 272, 21, 1, ["worked-example"], 0)
    assert b.physical_ids.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 7, 8, 11, 12, 13, 14, 13, 14, 15, 16]
    assert b.position_ids.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 2, 3, 4, 5, 6, 7, 8, 9, 4, 5, 6, 7]
    assert b.subtree_end.tolist() == [21, 21, 9, 9, 9, 9, 9, 9, 9, 21, 21, 17, 17, 17, 17, 17, 17, 21, 21, 21, 21]
    assert b.seq_start.tolist() == [0, 21]
    labelled = [(i, v) for i, v in enumerate(b.labels.tolist()) if v != mw.IGNORE_INDEX]
    assert labelled == [(1, 20), (2, 21), (6, 22), (7, 23), (14, 24), (15, 25), (18, 26), (19, 27)]
    assert b.label_physical_ids[[1, 14, 19]].tolist() == [2, 13, 16]
    # Target 13 (row 15) is predicted by row 14, which sees its live prefix 0,1,9,10,7,8,11,12 and itself.
    seen = mw.dense_mask(b)[14].nonzero()[:, 0]
    assert b.physical_ids[seen].tolist() == [0, 1, 9, 10, 7, 8, 11, 12]
    assert torch.isnan(b.rollout_logprobs[0]) and b.rollout_logprobs[1].item() == -1.5
    assert b.rollout_rewards.tolist() == [1.0]


def test_own_reader_reads_what_the_safetensors_package_would(worked, fixtures):
    """The ~30-line reader is what runs when `safetensors` is absent: dtypes, shapes, values, metadata."""
    tensors, metadata = safetensors_io._read(str(worked))
    assert metadata["format"] == mw.BATCH_FORMAT
    assert tensors["input_ids"].dtype.str == "<i4" and tensors["input_ids"].shape == (21,)
    assert tensors["rollout_logprobs"].dtype.str == "<f4"
    assert tensors["subtree_end"].tolist()[:3] == [21, 21, 9]
    ckpt, meta = safetensors_io._read(str(fixtures / "ckpt.safetensors"))
    assert ckpt["transformer.wte.weight"].shape == (272, 32) and meta["n_head"] == "2"
    via, _ = safetensors_io.read_safetensors(str(fixtures / "ckpt.safetensors"))
    for name, array in ckpt.items():
        assert (via[name] == array).all()


@pytest.mark.parametrize("method", METHODS)
def test_mask_mod_on_index_grids_equals_dense_mask(export, method):
    b = mw.load_batch(str(export(method, max_tokens=128)))
    assert b.sequences > 1
    rows = torch.arange(b.rows)
    grid = mw.mask_mod(b)(0, 0, rows[:, None], rows[None, :])
    dense = mw.dense_mask(b)
    assert grid.shape == (b.rows, b.rows)
    assert torch.equal(grid, dense)
    # Each packed sequence's own mask is the diagonal block; nothing crosses between sequences.
    for s in range(b.sequences):
        lo, hi = int(b.seq_start[s]), int(b.seq_start[s + 1])
        assert torch.equal(mw.dense_mask(b, sequence=s), dense[lo:hi, lo:hi])
        assert not dense[lo:hi, :lo].any() and not dense[hi:, lo:hi].any()
    assert int(b.seq_start[-1]) == b.rows and (b.seq_start[1:] - b.seq_start[:-1]).max() <= 128


def test_block_mask_needs_flex_attention(export):
    b = mw.load_batch(str(export("packed-4d")))
    try:
        from torch.nn.attention.flex_attention import create_block_mask  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match=r"torch >= 2\.5.*this is torch"):
            mw.block_mask(b)
        return
    block = mw.block_mask(b, block_size=128, device="cpu")
    rows = torch.arange(b.rows)
    assert torch.equal(block.mask_mod(0, 0, rows[:, None], rows[None, :]), mw.dense_mask(b))
