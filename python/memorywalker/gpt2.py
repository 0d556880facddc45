"""The workbench's GPT-2 (docs/model.md) in PyTorch: token and learned position embeddings indexed by
explicit position ids, pre-LayerNorm blocks (eps 1e-5) of multi-head attention under an arbitrary
boolean mask and a tanh-GELU MLP of width 4C, final LayerNorm, head tied to wte. Parameters keep
Hugging Face's names and Conv1D layout (y = x @ W + b, W (in, out)), so the workbench's checkpoints
(and gradients from `mw verify --grad-out`) load by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from .safetensors_io import read_safetensors

_BUFFERS = (".attn.bias", ".attn.masked_bias")  # GPT-2's causal mask and fill value, not parameters


@dataclass
class GPT2Config:
    vocab_size: int
    n_embd: int
    n_layer: int
    n_head: int
    n_positions: int


class Block(nn.Module):
    def __init__(self, c: GPT2Config):
        super().__init__()
        C = c.n_embd
        self.n_head = c.n_head
        self.ln_1 = nn.LayerNorm(C, eps=1e-5)
        self.ln_2 = nn.LayerNorm(C, eps=1e-5)
        self.attn = nn.Module()
        self.attn.c_attn = _Conv1D(C, 3 * C)
        self.attn.c_proj = _Conv1D(C, C)
        self.mlp = nn.Module()
        self.mlp.c_fc = _Conv1D(C, 4 * C)
        self.mlp.c_proj = _Conv1D(4 * C, C)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        T, C = x.shape[-2], x.shape[-1]
        NH, HS = self.n_head, C // self.n_head
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(C, dim=-1)  # (..., T, C) each
        heads = lambda t: t.reshape(*t.shape[:-1], NH, HS).transpose(-2, -3)  # (..., NH, T, HS)
        q, k, v = heads(q), heads(k), heads(v)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(HS)  # (..., NH, T, T)
        scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v  # (..., NH, T, HS)
        y = y.transpose(-2, -3).reshape(*x.shape[:-1], C)
        x = x + self.attn.c_proj(y)
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh"))


class _Conv1D(nn.Module):
    """GPT-2's linear layer: weight (in, out)."""

    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight + self.bias


class GPT2(nn.Module):
    """forward(input_ids, position_ids, mask) -> logits: ids and positions (..., T), mask (..., T, T) boolean
    (True: query row may attend to key row), e.g. dense_mask(batch) for a whole batch as one sequence."""

    def __init__(self, config: GPT2Config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_positions, config.n_embd)
        self.h = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd, eps=1e-5)

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.wte(input_ids) + self.wpe(position_ids)  # (..., T, C)
        for block in self.h:
            x = block(x, mask)
        return self.ln_f(x) @ self.wte.weight.T  # (..., T, V)


def read_gpt2_tensors(path: str) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """A GPT-2 safetensors file's parameters by name without the `transformer.` prefix, and its metadata."""
    arrays, metadata = read_safetensors(path)
    tensors = {}
    for name, array in arrays.items():
        name = name[len("transformer.") :] if name.startswith("transformer.") else name
        if name.endswith(_BUFFERS) or name == "lm_head.weight":
            continue
        tensors[name] = torch.from_numpy(array)
    return tensors, metadata


def load_gpt2(path: str, dtype: torch.dtype = torch.float32, device=None) -> GPT2:
    """A workbench (or Hugging Face) GPT-2 checkpoint; the config from `__metadata__`, else from the shapes."""
    tensors, metadata = read_gpt2_tensors(path)
    V, C = tensors["wte.weight"].shape
    n_layer = 1 + max(int(name.split(".")[1]) for name in tensors if name.startswith("h."))
    config = GPT2Config(
        vocab_size=int(metadata.get("vocab_size", V)),
        n_embd=int(metadata.get("n_embd", C)),
        n_layer=int(metadata.get("n_layer", n_layer)),
        n_head=int(metadata.get("n_head", max(1, C // 64))),
        n_positions=int(metadata.get("n_positions", tensors["wpe.weight"].shape[0])),
    )
    model = GPT2(config)
    missing, unexpected = model.load_state_dict({k: v.to(dtype) for k, v in tensors.items()}, strict=False)
    if missing or unexpected:
        raise ValueError(f"{path}: not a GPT-2 checkpoint of this layout (missing {missing[:3]}, unexpected {unexpected[:3]})")
    return model.to(dtype=dtype, device=device)
