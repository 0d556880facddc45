"""The open-model families in PyTorch: Llama 3.x / SmolLM2 (`LlamaForCausalLM`), Qwen2.5 (`Qwen2ForCausalLM`:
q/k/v biases) and Qwen3 (`Qwen3ForCausalLM`: RMSNorm of q and k per head before RoPE), configured from a
Hugging Face `config.json`, with Hugging Face's parameter names, so the model folders the workbench reads
(config.json + model.safetensors, or shards named by model.safetensors.index.json; BF16, F16 or F32) load
by name and the folders written here load in `transformers`. forward(input_ids, position_ids, mask) takes
the batch's tree mask: a boolean mask (True: may attend), an additive float mask (Hugging Face's 4D form),
or, where torch >= 2.5 has FlexAttention, a `BlockMask` (mw.block_mask).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from dataclasses import dataclass, field
from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

from .safetensors_io import read_header, read_torch_tensors, write_safetensors

FAMILY_ARCHITECTURES = ("LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM")
_MODEL_TYPES = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}
_DTYPE_NAMES = {"BF16": (torch.bfloat16, "bfloat16"), "F16": (torch.float16, "float16"), "F32": (torch.float32, "float32")}
WEIGHTS_INDEX = "model.safetensors.index.json"


@dataclass
class FamilyConfig:
    """What the modules need from `config.json` (Hugging Face's names); `raw` is the whole file, written back as is."""

    architecture: str
    vocab_size: int  # V
    hidden_size: int  # C
    intermediate_size: int  # FF, the SwiGLU width
    num_hidden_layers: int  # NL
    num_attention_heads: int  # NH
    num_key_value_heads: int  # NKV (grouped-query attention: NH % NKV == 0)
    head_dim: int  # HS
    rope_theta: float
    rope_scaling: dict  # {"rope_type": "none" | "linear" | "llama3", ...}
    rms_norm_eps: float
    tie_word_embeddings: bool
    max_position_embeddings: int
    qkv_bias: bool  # Qwen2, or attention_bias
    o_bias: bool  # attention_bias (Llama, Qwen3)
    qk_norm: bool  # Qwen3
    raw: dict = field(default_factory=dict, repr=False)


def family_config(raw: dict, source: str = "config.json") -> FamilyConfig:
    """The config of one of the three families; anything they cannot represent is a ValueError naming it."""
    arch = next((a for a in raw.get("architectures") or [] if a in FAMILY_ARCHITECTURES), None) or _MODEL_TYPES.get(raw.get("model_type", ""))
    if arch is None:
        named = (raw.get("architectures") or [raw.get("model_type")])[0]
        raise ValueError(f"{source}: architecture {named!r} is not one of {', '.join(FAMILY_ARCHITECTURES)} (GPT-2 checkpoints: load_gpt2)")

    def need(key):
        if raw.get(key) is None:
            raise ValueError(f"{source}: {key} is missing")
        return raw[key]

    if raw.get("hidden_act", "silu") != "silu":
        raise ValueError(f"{source}: hidden_act {raw['hidden_act']!r} is not supported (silu)")
    if raw.get("mlp_bias"):
        raise ValueError(f"{source}: mlp_bias true is not supported")
    if raw.get("use_sliding_window"):
        raise ValueError(f"{source}: use_sliding_window true is not supported (full attention only)")
    heads = int(need("num_attention_heads"))
    kv_heads = int(raw.get("num_key_value_heads") or heads)
    if heads % kv_heads != 0:
        raise ValueError(f"{source}: num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}")
    hidden = int(need("hidden_size"))
    rope = raw.get("rope_parameters") or {}  # transformers 5 keeps theta and scaling together here
    theta = float(raw.get("rope_theta") or rope.get("rope_theta") or 10000.0)
    bias = bool(raw.get("attention_bias", False))
    return FamilyConfig(
        architecture=arch,
        vocab_size=int(need("vocab_size")),
        hidden_size=hidden,
        intermediate_size=int(need("intermediate_size")),
        num_hidden_layers=int(need("num_hidden_layers")),
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=int(raw.get("head_dim") or hidden // heads),
        rope_theta=theta,
        rope_scaling=_rope_scaling(raw.get("rope_scaling") or rope, source),
        rms_norm_eps=float(raw.get("rms_norm_eps", 1e-6)),
        tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
        max_position_embeddings=int(raw.get("max_position_embeddings", 2048)),
        qkv_bias=arch == "Qwen2ForCausalLM" or bias,
        o_bias=bias,
        qk_norm=arch == "Qwen3ForCausalLM",
        raw=dict(raw),
    )


def _rope_scaling(scaling: dict, source: str) -> dict:
    kind = scaling.get("rope_type") or scaling.get("type") or "default"
    if kind == "default":
        return {"rope_type": "none"}
    if kind == "linear":
        return {"rope_type": "linear", "factor": float(scaling["factor"])}
    if kind == "llama3":
        keys = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
        missing = [k for k in keys if k not in scaling]
        if missing:
            raise ValueError(f"{source}: rope_scaling llama3 needs {', '.join(missing)}")
        return {"rope_type": "llama3", **{k: float(scaling[k]) for k in keys}}
    raise ValueError(f"{source}: rope_scaling type {kind!r} is not supported (none, linear, llama3)")


def rope_inv_freq(config: FamilyConfig) -> torch.Tensor:
    """(HS/2,) float64 inverse frequencies after the config's scaling (Hugging Face's rope_init_fn, in float64)."""
    HS = config.head_dim
    inv = 1.0 / (config.rope_theta ** (torch.arange(0, HS, 2, dtype=torch.float64) / HS))
    s = config.rope_scaling
    if s["rope_type"] == "linear":
        return inv / s["factor"]
    if s["rope_type"] == "llama3":
        factor, low, high, old = s["factor"], s["low_freq_factor"], s["high_freq_factor"], s["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > old / low, inv / factor, inv)  # long wavelengths: divided by factor
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = (wavelen >= old / high) & (wavelen <= old / low)
        return torch.where(medium, smoothed, scaled)
    return inv


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope_cos_sin(config: FamilyConfig, position_ids: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin (..., T, HS) at the given positions (the tree depths of a batch, not arange(T))."""
    inv = rope_inv_freq(config).to(position_ids.device)
    angles = position_ids.to(torch.float64)[..., None] * inv  # (..., T, HS/2)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


class RMSNorm(nn.Module):
    def __init__(self, n: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x if x.dtype == torch.float64 else x.float()  # 16-bit inputs are normalised in float32, as Hugging Face does
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def _is_block_mask(mask) -> bool:
    return type(mask).__name__ == "BlockMask"


_FLEX = []


def _flex_attention():
    """FlexAttention (torch >= 2.5), compiled once: eager flex_attention materialises the scores."""
    if not _FLEX:
        from torch.nn.attention.flex_attention import flex_attention

        _FLEX.append(torch.compile(flex_attention))
    return _FLEX[0]


class Attention(nn.Module):
    def __init__(self, c: FamilyConfig):
        super().__init__()
        C, NH, NKV, HS = c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim
        self.NH, self.NKV, self.HS = NH, NKV, HS
        self.q_proj = nn.Linear(C, NH * HS, bias=c.qkv_bias)
        self.k_proj = nn.Linear(C, NKV * HS, bias=c.qkv_bias)
        self.v_proj = nn.Linear(C, NKV * HS, bias=c.qkv_bias)
        self.o_proj = nn.Linear(NH * HS, C, bias=c.o_bias)
        if c.qk_norm:
            self.q_norm = RMSNorm(HS, c.rms_norm_eps)
            self.k_norm = RMSNorm(HS, c.rms_norm_eps)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask) -> torch.Tensor:
        T = x.shape[-2]
        NH, NKV, HS = self.NH, self.NKV, self.HS
        q = self.q_proj(x).reshape(*x.shape[:-1], NH, HS)  # (..., T, NH, HS)
        k = self.k_proj(x).reshape(*x.shape[:-1], NKV, HS)
        v = self.v_proj(x).reshape(*x.shape[:-1], NKV, HS)
        if hasattr(self, "q_norm"):
            q, k = self.q_norm(q), self.k_norm(k)
        q, k, v = q.transpose(-2, -3), k.transpose(-2, -3), v.transpose(-2, -3)  # (..., NH|NKV, T, HS)
        cos, sin = cos.unsqueeze(-3), sin.unsqueeze(-3)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(NH // NKV, dim=-3)  # kv head j serves query heads j*G .. j*G+G-1
        v = v.repeat_interleave(NH // NKV, dim=-3)
        if _is_block_mask(mask):
            squeeze = q.dim() == 3
            q4, k4, v4 = (t.unsqueeze(0) if squeeze else t for t in (q, k, v))
            y = _flex_attention()(q4, k4, v4, block_mask=mask, scale=1 / math.sqrt(HS))
            y = y[0] if squeeze else y
        else:
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(HS)  # (..., NH, T, T)
            m = mask if mask.dim() == 4 else mask.unsqueeze(-3)
            scores = scores.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else scores + m.to(scores.dtype)
            p = torch.softmax(scores, dim=-1, dtype=torch.float32 if scores.dtype in (torch.float16, torch.bfloat16) else None)
            y = p.to(v.dtype) @ v  # (..., NH, T, HS)
        y = y.transpose(-2, -3).reshape(*x.shape[:-2], T, NH * HS)
        return self.o_proj(y)


class MLP(nn.Module):
    def __init__(self, c: FamilyConfig):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))  # SwiGLU


class DecoderLayer(nn.Module):
    def __init__(self, c: FamilyConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.mlp = MLP(c)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class FamilyModel(nn.Module):
    """forward(input_ids, position_ids, mask) -> logits: ids and positions (..., T); mask (T, T) or (..., T, T)
    boolean (True: the query row may attend to the key row, e.g. mw.dense_mask(batch)), or additive float
    (e.g. (B, 1, T, T) from mw.hf_inputs), or a FlexAttention BlockMask (torch >= 2.5, mw.block_mask).
    Parameter names are Hugging Face's: model.embed_tokens.weight, model.layers.N.self_attn.q_proj.weight, ...
    model.norm.weight, and lm_head.weight unless the config ties it to the embedding."""

    def __init__(self, config: FamilyConfig):
        super().__init__()
        self.config = config
        #: The dtype the folder stored ("BF16", "F16", "F32"): what save_family writes back by default.
        self.stored_dtype = "F32"
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.model.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.num_hidden_layers))
        self.model.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        if not config.tie_word_embeddings:
            self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def output_weight(self) -> torch.Tensor:
        return self.model.embed_tokens.weight if self.config.tie_word_embeddings else self.lm_head.weight

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor, mask) -> torch.Tensor:
        x = self.model.embed_tokens(input_ids)  # (..., T, C)
        cos, sin = rope_cos_sin(self.config, position_ids, x.dtype)
        for layer in self.model.layers:
            x = layer(x, cos, sin, mask)
        return self.model.norm(x) @ self.output_weight().T  # (..., T, V)


def read_config(folder: str) -> FamilyConfig:
    path = os.path.join(folder, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"{folder}: not a model folder (no config.json)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    return family_config(raw, path)


def weight_files(folder: str) -> list[str]:
    """The folder's safetensors files: the shards its index names (in order), or model.safetensors."""
    index = os.path.join(folder, WEIGHTS_INDEX)
    if os.path.exists(index):
        with open(index, encoding="utf-8") as f:
            weight_map = json.load(f).get("weight_map") or {}
        files = list(dict.fromkeys(weight_map.values()))
        if not files:
            raise ValueError(f"{index}: weight_map is empty")
        return [os.path.join(folder, name) for name in files]
    single = os.path.join(folder, "model.safetensors")
    if not os.path.exists(single):
        raise ValueError(f"{folder}: no model.safetensors and no {WEIGHTS_INDEX}")
    return [single]


def load_family(folder: str, dtype: Optional[torch.dtype] = torch.float32, device=None) -> FamilyModel:
    """A model folder of the three families, its weights cast to `dtype` (None: as stored). `stored_dtype`
    records what the folder held, so save_family writes the same by default."""
    config = read_config(folder)
    model = FamilyModel(config)
    want = {name: tuple(p.shape) for name, p in model.named_parameters()}
    got: dict[str, torch.Tensor] = {}
    stored: dict[str, int] = {}
    for path in weight_files(folder):
        if not os.path.exists(path):
            raise ValueError(f"{folder}: {os.path.basename(path)} named by {WEIGHTS_INDEX} is missing")
        header, _, _ = read_header(path)
        for entry in header.values():
            stored[entry["dtype"]] = stored.get(entry["dtype"], 0) + 1
        tensors, _ = read_torch_tensors(path)
        got.update(tensors)
    if config.tie_word_embeddings:
        got.pop("lm_head.weight", None)  # some writers keep the tied head; it is the embedding
    missing = [n for n in want if n not in got]
    unexpected = [n for n in got if n not in want and not n.endswith("rotary_emb.inv_freq")]
    if missing or unexpected:
        what = f"missing {missing[0]}" if missing else f"unexpected {unexpected[0]}"
        raise ValueError(f"{folder}: not a {config.architecture} folder of this config.json ({what}; {len(missing)} missing, {len(unexpected)} unexpected)")
    for name, shape in want.items():
        if tuple(got[name].shape) != shape:
            raise ValueError(f"{folder}: tensor {name}: expected shape {list(shape)}, got {list(got[name].shape)}")
    stored_dtype = max(stored, key=stored.get)
    if stored_dtype not in _DTYPE_NAMES:
        raise ValueError(f"{folder}: weights stored as {stored_dtype}; model folders hold BF16, F16 or F32")
    target = dtype or _DTYPE_NAMES[stored_dtype][0]
    model.load_state_dict({n: got[n].to(target) for n in want}, strict=True)
    model.stored_dtype = stored_dtype
    return model.to(dtype=target, device=device)


def save_family(
    model: FamilyModel, folder: str, dtype: Optional[str] = None, shards: int = 1, source: Optional[str] = None, metadata: Optional[dict] = None
) -> None:
    """Writes a model folder: config.json (the loaded one, torch_dtype set) and model.safetensors in `dtype`
    ("BF16", "F16", "F32"; default the dtype it was loaded from), or `shards` files with the index.
    `source`: a folder whose other files (tokenizer.json, generation_config.json, ...) are copied along."""
    dtype = dtype or model.stored_dtype
    if dtype not in _DTYPE_NAMES:
        raise ValueError(f"save_family: dtype {dtype!r} is not one of BF16, F16, F32")
    torch_dtype, name = _DTYPE_NAMES[dtype]
    os.makedirs(folder, exist_ok=True)
    if source is not None:
        for entry in sorted(os.listdir(source)):
            path = os.path.join(source, entry)
            if os.path.isfile(path) and not entry.endswith(".safetensors") and entry not in ("config.json", WEIGHTS_INDEX):
                shutil.copyfile(path, os.path.join(folder, entry))
    raw = dict(model.config.raw)
    raw["torch_dtype"] = name
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=2)
        f.write("\n")
    tensors = {n: p.detach().to(torch_dtype) for n, p in model.named_parameters()}
    meta = {"format": "pt", **(metadata or {})}
    for stale in os.listdir(folder):
        if stale == WEIGHTS_INDEX or (stale.startswith("model") and stale.endswith(".safetensors")):
            os.remove(os.path.join(folder, stale))
    if shards <= 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), tensors, meta)
        return
    names = list(tensors)
    per = math.ceil(len(names) / shards)
    weight_map, total = {}, 0
    for i in range(shards):
        part = names[i * per : (i + 1) * per]
        file = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        write_safetensors(os.path.join(folder, file), {n: tensors[n] for n in part}, meta)
        for n in part:
            weight_map[n] = file
            total += tensors[n].numel() * tensors[n].element_size()
    with open(os.path.join(folder, WEIGHTS_INDEX), "w", encoding="utf-8") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")


#: The tiny layouts the tests use, one per family, each exercising what sets its family apart.
TINY_LAYOUTS = {
    "qwen3": dict(architecture="Qwen3ForCausalLM", model_type="qwen3", dtype="BF16", tie=True, shards=1, head_dim=16),
    "llama": dict(architecture="LlamaForCausalLM", model_type="llama", dtype="F32", tie=False, shards=2, head_dim=8),
    "qwen2": dict(architecture="Qwen2ForCausalLM", model_type="qwen2", dtype="F16", tie=False, shards=1, head_dim=8),
}


def write_tiny_folder(folder: str, family: str, seed: int = 0, vocab_size: int = 272) -> FamilyConfig:
    """A tiny random model folder in `family`'s layout: qwen3 (BF16, tied head, q/k norms, head_dim 16 != C/NH),
    llama (F32, untied, 2 shards and the index, llama3 RoPE scaling), qwen2 (F16, q/k/v biases, linear
    RoPE scaling). Two layers, C 32, 4 query heads on 2 key/value heads. Weights wide enough that the
    log-probabilities spread (not Hugging Face's 0.02 init)."""
    layout = TINY_LAYOUTS[family]
    raw = {
        "architectures": [layout["architecture"]],
        "model_type": layout["model_type"],
        "_name_or_path": f"tiny-{family}",
        "vocab_size": vocab_size,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": layout["head_dim"],
        "hidden_act": "silu",
        "rope_theta": 10000.0 if family != "llama" else 500000.0,
        "rope_scaling": None,
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": layout["tie"],
        "max_position_embeddings": 256,
        "bos_token_id": 0,
        "eos_token_id": 1,
    }
    if family == "llama":
        raw["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
        raw["attention_bias"] = False
    if family == "qwen2":
        raw["rope_scaling"] = {"type": "linear", "factor": 2.0}
        raw["use_sliding_window"] = False
    config = family_config(raw)
    model = FamilyModel(config)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith(".bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
            elif name == "model.embed_tokens.weight":
                p.copy_(0.4 * torch.randn(p.shape, generator=g))  # also the tied head: logits of std about 2
            else:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[-1]))
    model.stored_dtype = layout["dtype"]
    save_family(model, folder, shards=layout["shards"])
    return config
