"""memorywalker: exact conditioning-tree batches from `mw export` (memorywalker.batch/v1) for PyTorch
trainers: the batch and its tree attention mask, the workbench's GPT-2, and its objectives."""

from .batch import BATCH_FORMAT, IGNORE_INDEX, Batch, block_mask, dense_mask, load_batch, mask_mod, packed_sequence, sequence_of_rows, target_logprobs
from .gpt2 import GPT2, GPT2Config, load_gpt2, read_gpt2_tensors
from .loss import grpo_advantages, packed_loss, sdcc_kl, target_advantages, token_loss
from .safetensors_io import read_safetensors

__all__ = [
    "BATCH_FORMAT",
    "IGNORE_INDEX",
    "Batch",
    "GPT2",
    "GPT2Config",
    "block_mask",
    "dense_mask",
    "grpo_advantages",
    "load_batch",
    "load_gpt2",
    "mask_mod",
    "packed_loss",
    "packed_sequence",
    "read_gpt2_tensors",
    "read_safetensors",
    "sdcc_kl",
    "sequence_of_rows",
    "target_advantages",
    "target_logprobs",
    "token_loss",
]
