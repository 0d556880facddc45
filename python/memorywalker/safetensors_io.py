"""Reading safetensors files (batches and GPT-2 checkpoints) into numpy arrays.

The `safetensors` package is used when it is installed; otherwise the format is simple enough to
read here: u64 little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
then the raw little-endian data.
"""

from __future__ import annotations

import json

import numpy as np

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}


def read_safetensors(path: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every tensor of the file as a writable numpy array (BF16 widened to float32), and `__metadata__`."""
    try:
        from safetensors import safe_open
    except ImportError:
        return _read(path)
    with safe_open(path, framework="np") as f:
        return {name: f.get_tensor(name) for name in f.keys()}, dict(f.metadata() or {})


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
