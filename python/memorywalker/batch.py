"""A `memorywalker.batch/v1` file (written by `mw export`, docs/batch-format.md) as torch tensors,
and its attention mask in the forms trainers take: a FlexAttention `mask_mod`, a dense boolean
mask, a FlexAttention `BlockMask`. Key row k is visible to query row q iff both lie in the same
packed sequence and k <= q < subtree_end[k].
"""

from __future__ import annotations

import json
from typing import Callable, Optional

import torch

from .safetensors_io import read_safetensors

BATCH_FORMAT = "memorywalker.batch/v1"
IGNORE_INDEX = -100


class Batch:
    """The tensors of a batch file (by name, also as attributes) and its metadata."""

    def __init__(self, tensors: dict[str, torch.Tensor], metadata: dict[str, str]):
        self.tensors = tensors
        self.metadata = metadata
        self.method: str = metadata["method"]
        self.vocab: int = int(metadata["vocab"])
        self.tokenizer: str = metadata.get("tokenizer", "byte")
        self.rollout_ids: list[str] = json.loads(metadata.get("rollout_ids", "[]"))
        self.groups: list[str] = json.loads(metadata.get("groups", "[]"))
        self.label_collisions: int = int(metadata.get("label_collisions", "0"))

    def __getattr__(self, name: str) -> torch.Tensor:
        tensors = self.__dict__.get("tensors", {})
        if name in tensors:
            return tensors[name]
        raise AttributeError(name)

    @property
    def rows(self) -> int:
        """N: rows of all packed sequences together."""
        return int(self.tensors["input_ids"].shape[0])

    @property
    def sequences(self) -> int:
        """B: packed sequences."""
        return int(self.tensors["seq_start"].shape[0]) - 1

    def to(self, device) -> "Batch":
        return Batch({k: v.to(device) for k, v in self.tensors.items()}, self.metadata)

    def __repr__(self) -> str:
        return f"Batch({self.method}, {self.rows} rows in {self.sequences} packed sequences, {len(self.rollout_ids)} rollouts)"


def load_batch(path: str, device=None) -> Batch:
    """Reads a batch file; int32 tensors become int64 (what embedding and indexing want), float32 stays."""
    arrays, metadata = read_safetensors(path)
    if metadata.get("format") != BATCH_FORMAT:
        raise ValueError(f"{path}: not a {BATCH_FORMAT} file (format {metadata.get('format')!r})")
    tensors = {}
    for name, array in arrays.items():
        t = torch.from_numpy(array)
        if t.dtype == torch.int32:
            t = t.long()
        tensors[name] = t if device is None else t.to(device)
    return Batch(tensors, metadata)


def sequence_of_rows(batch: Batch) -> torch.Tensor:
    """(N,) the packed sequence each row lies in."""
    rows = torch.arange(batch.rows, device=batch.seq_start.device)
    return torch.searchsorted(batch.seq_start[1:], rows, right=True)


def mask_mod(batch: Batch) -> Callable:
    """FlexAttention's mask_mod(b, h, q_idx, kv_idx) over the N rows as one flattened sequence."""
    subtree_end = batch.subtree_end
    sequence = sequence_of_rows(batch)

    def visible(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (q_idx < subtree_end[kv_idx]) & (sequence[q_idx] == sequence[kv_idx])

    return visible


def dense_mask(batch: Batch, sequence: Optional[int] = None) -> torch.Tensor:
    """Boolean (N, N) mask, True where query row q may attend to key row k; or one packed sequence's (T, T)."""
    if sequence is not None:
        local = packed_sequence(batch, sequence)
        rows = torch.arange(local["input_ids"].shape[0], device=batch.seq_start.device)
        q, k = rows[:, None], rows[None, :]
        return (k <= q) & (q < local["subtree_end"][None, :])
    rows = torch.arange(batch.rows, device=batch.seq_start.device)
    seq = sequence_of_rows(batch)
    q, k = rows[:, None], rows[None, :]
    return (k <= q) & (q < batch.subtree_end[None, :]) & (seq[:, None] == seq[None, :])


def block_mask(batch: Batch, sequence: Optional[int] = None, block_size: int = 128, device=None):
    """FlexAttention's BlockMask of the batch (torch >= 2.5): the flattened N rows, or one packed sequence."""
    try:
        from torch.nn.attention.flex_attention import create_block_mask
    except ImportError:
        raise RuntimeError(
            f"block_mask needs FlexAttention's create_block_mask (torch >= 2.5); this is torch {torch.__version__}. "
            "dense_mask(batch) is the same mask as a boolean tensor, and mask_mod(batch) the same function."
        ) from None
    if sequence is None:
        mod, n = mask_mod(batch), batch.rows
    else:
        local = packed_sequence(batch, sequence)
        end, n = local["subtree_end"], int(local["input_ids"].shape[0])

        def mod(b, h, q_idx, kv_idx):
            return (kv_idx <= q_idx) & (q_idx < end[kv_idx])

    return create_block_mask(mod, B=None, H=None, Q_LEN=n, KV_LEN=n, device=device or str(batch.input_ids.device), BLOCK_SIZE=block_size)


def packed_sequence(batch: Batch, b: int) -> dict[str, torch.Tensor]:
    """Packed sequence b with its row indices made local: input_ids, position_ids, subtree_end, labels,
    label_physical_ids, rollout_logprobs, physical_ids, rollout_index (each (T,)), and its targets'
    rows, tokens, physical ids and rollout logprobs."""
    lo, hi = int(batch.seq_start[b]), int(batch.seq_start[b + 1])
    out = {name: batch.tensors[name][lo:hi] for name in ("input_ids", "position_ids", "labels", "label_physical_ids", "rollout_logprobs", "physical_ids", "rollout_index")}
    out["subtree_end"] = batch.subtree_end[lo:hi] - lo
    inside = (batch.target_rows >= lo) & (batch.target_rows < hi)
    out["target_rows"] = batch.target_rows[inside] - lo
    for name in ("target_tokens", "target_physical_ids", "target_rollout_logprobs"):
        out[name] = batch.tensors[name][inside]
    return out


def target_logprobs(batch: Batch, logits: torch.Tensor) -> torch.Tensor:
    """(T,) log-probability of every target under logits (N, V): log_softmax at its predictor row."""
    rows = torch.log_softmax(logits[batch.target_rows], dim=-1)
    return rows.gather(-1, batch.target_tokens[:, None])[:, 0]


def hf_inputs(batch: Batch, b: int, dtype: torch.dtype = torch.float32, device=None) -> dict[str, torch.Tensor]:
    """Packed sequence b as the keyword arguments of a Hugging Face causal LM's forward (eager or SDPA
    attention): input_ids (1, T), position_ids (1, T) (the tree depths), and attention_mask (1, 1, T, T),
    the tree mask in `transformers`' 4D additive form: 0 where the query row may attend, the dtype's
    minimum elsewhere (a 4D mask is taken as is, not combined with a causal one). The logits row
    packed_sequence(batch, b)["target_rows"][j] predicts target_tokens[j]."""
    seq = packed_sequence(batch, b)
    allowed = dense_mask(batch, sequence=b)
    mask = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device).masked_fill(~allowed, torch.finfo(dtype).min)
    out = {"input_ids": seq["input_ids"][None], "position_ids": seq["position_ids"][None], "attention_mask": mask[None, None]}
    return out if device is None else {k: v.to(device) for k, v in out.items()}


def select_sequences(batch: Batch, sequences: list[int]) -> Batch:
    """A Batch of the given packed sequences only (in the given order), every row index made local to it:
    what one rank of a data-parallel run holds. Per-rollout tensors (rewards, groups) stay whole, so
    advantages are the whole batch's. An SDCC pair must lie within the selected sequences."""
    ranges = [(int(batch.seq_start[b]), int(batch.seq_start[b + 1])) for b in sequences]
    rows = torch.cat([torch.arange(lo, hi) for lo, hi in ranges]) if ranges else torch.zeros(0, dtype=torch.long)
    new_index = torch.full((batch.rows + 1,), -1, dtype=torch.long)  # old row -> new row, -1: not selected
    new_index[rows] = torch.arange(rows.shape[0])
    tensors = dict(batch.tensors)
    for name in ("input_ids", "position_ids", "labels", "label_physical_ids", "rollout_logprobs", "physical_ids", "rollout_index"):
        tensors[name] = batch.tensors[name][rows]
    # subtree_end is exclusive and may equal its sequence's end: shift by the sequence's move, not by lookup.
    shift = torch.cat([torch.full((hi - lo,), new - lo, dtype=torch.long) for (lo, hi), new in zip(ranges, _starts(ranges))]) if ranges else rows
    tensors["subtree_end"] = batch.subtree_end[rows] + shift
    tensors["seq_start"] = torch.tensor(_starts(ranges) + [int(rows.shape[0])], dtype=torch.long)
    kept = new_index[batch.target_rows] >= 0
    tensors["target_rows"] = new_index[batch.target_rows[kept]]
    for name in ("target_tokens", "target_physical_ids", "target_rollout_logprobs"):
        tensors[name] = batch.tensors[name][kept]
    if "sdcc_student_rows" in batch.tensors:
        student, teacher = new_index[batch.sdcc_student_rows], new_index[batch.sdcc_teacher_rows]
        if bool(((student >= 0) != (teacher >= 0)).any()):
            raise ValueError("select_sequences: an SDCC pair spans a selected and an unselected packed sequence")
        pair = student >= 0
        tensors["sdcc_student_rows"], tensors["sdcc_teacher_rows"] = student[pair], teacher[pair]
    return Batch(tensors, batch.metadata)


def _starts(ranges: list[tuple[int, int]]) -> list[int]:
    starts, at = [], 0
    for lo, hi in ranges:
        starts.append(at)
        at += hi - lo
    return starts
