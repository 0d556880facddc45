"""memorywalker: exact conditioning-tree batches from `mw export` (memorywalker.batch/v1) for PyTorch
trainers: the batch and its tree attention mask, the workbench's GPT-2 and the Llama / Qwen2 / Qwen3
families, its objectives, and data-parallel training on a batch (python3 -m memorywalker.train)."""

from .batch import (
    BATCH_FORMAT,
    IGNORE_INDEX,
    Batch,
    block_mask,
    dense_mask,
    hf_inputs,
    load_batch,
    mask_mod,
    packed_sequence,
    select_sequences,
    sequence_of_rows,
    target_logprobs,
)
from .families import FamilyConfig, FamilyModel, family_config, load_family, save_family, write_tiny_folder
from .gpt2 import GPT2, GPT2Config, load_gpt2, read_gpt2_tensors
from .loss import grpo_advantages, packed_loss, sdcc_kl, target_advantages, token_loss
from .safetensors_io import read_safetensors, read_torch_tensors, write_safetensors

__all__ = [
    "BATCH_FORMAT",
    "IGNORE_INDEX",
    "Batch",
    "FamilyConfig",
    "FamilyModel",
    "GPT2",
    "GPT2Config",
    "block_mask",
    "dense_mask",
    "family_config",
    "grpo_advantages",
    "hf_inputs",
    "load_batch",
    "load_family",
    "load_gpt2",
    "mask_mod",
    "packed_loss",
    "packed_sequence",
    "read_gpt2_tensors",
    "read_safetensors",
    "read_torch_tensors",
    "save_family",
    "sdcc_kl",
    "select_sequences",
    "sequence_of_rows",
    "target_advantages",
    "target_logprobs",
    "token_loss",
    "write_safetensors",
    "write_tiny_folder",
]
