"""Reading and writing safetensors files: batches, GPT-2 checkpoints and model folders' weights.

The format is simple enough to handle here: u64 little-endian header length, a JSON header
{name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the raw little-endian data.
`read_safetensors` gives numpy arrays (the `safetensors` package is used when installed);
`read_torch_tensors` gives torch tensors in their stored dtype (BF16 as torch.bfloat16, F16 as
torch.float16), reading one tensor at a time from the file rather than the whole file at once.
"""

from __future__ import annotations

import json
from typing import Optional

import numpy as np
import torch

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}
_TORCH = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
_NAMES = {dtype: name for name, dtype in _TORCH.items()}


def read_safetensors(path: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every tensor of the file as a writable numpy array (BF16 widened to float32), and `__metadata__`."""
    try:
        from safetensors import safe_open
    except ImportError:
        return _read(path)
    with safe_open(path, framework="np") as f:
        return {name: f.get_tensor(name) for name in f.keys()}, dict(f.metadata() or {})


def read_header(path: str) -> tuple[dict[str, dict], dict[str, str], int]:
    """The header's tensor entries, `__metadata__`, and the byte offset where the data begins."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError(f"{path}: not a safetensors file ({len(head)} bytes)")
        n = int.from_bytes(head, "little")
        raw = f.read(n)
    if len(raw) < n:
        raise ValueError(f"{path}: not a safetensors file (header of {n} bytes, file shorter)")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{path}: not a safetensors file (the header is not JSON)") from None
    metadata = header.pop("__metadata__", None) or {}
    return header, metadata, 8 + n


def read_torch_tensors(path: str, names: Optional[set[str]] = None) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The file's tensors (or those in `names`) as torch tensors in their stored dtype, and `__metadata__`."""
    header, metadata, base = read_header(path)
    tensors = {}
    with open(path, "rb") as f:
        for name, entry in header.items():
            if names is not None and name not in names:
                continue
            dtype = entry["dtype"]
            if dtype not in _TORCH:
                raise ValueError(f"{path}: tensor {name}: dtype {dtype} is not readable here")
            begin, end = entry["data_offsets"]
            f.seek(base + begin)
            raw = bytearray(f.read(end - begin))
            if len(raw) != end - begin:
                raise ValueError(f"{path}: tensor {name}: the file ends inside its data")
            if dtype == "BF16":  # numpy has no bfloat16: the same 16 bits, reinterpreted by torch
                t = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16) if raw else torch.zeros(0, dtype=torch.bfloat16)
            else:
                t = torch.from_numpy(np.frombuffer(raw, dtype=_DTYPES[dtype]).copy())
            tensors[name] = t.reshape(entry["shape"])
    return tensors, metadata


def write_safetensors(path: str, tensors: dict[str, torch.Tensor], metadata: Optional[dict[str, str]] = None) -> None:
    """Writes torch tensors (any of F64/F32/F16/BF16 and the integer types) in the given order, with `__metadata__`."""
    header: dict[str, object] = {}
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    blobs, offset = [], 0
    for name, t in tensors.items():
        t = t.detach().to("cpu").contiguous()
        if t.dtype not in _NAMES:
            raise ValueError(f"write_safetensors: tensor {name}: dtype {t.dtype} has no safetensors name here")
        data = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().astype(_DTYPES[_NAMES[t.dtype]], copy=False).tobytes()
        header[name] = {"dtype": _NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # the data starts 8-byte aligned, as the safetensors package writes it
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little"))
        f.write(raw)
        for blob in blobs:
            f.write(blob)


def _read(path: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: not a safetensors file ({len(data)} bytes)")
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", None) or {}
    base = 8 + n
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw = data[base + begin : base + end]
        dtype = entry["dtype"]
        if dtype == "BF16":
            array = (np.frombuffer(raw, dtype="<u2").astype("<u4") << 16).view("<f4")
        elif dtype in _DTYPES:
            array = np.frombuffer(raw, dtype=_DTYPES[dtype]).copy()
        else:
            raise ValueError(f"{path}: tensor {name}: dtype {dtype} is not readable here")
        tensors[name] = array.reshape(entry["shape"])
    return tensors, metadata
