"""The ONNX file of a model folder for bench/open-models.ts: the Python tier's torch model
(python/memorywalker/families.py) loaded from the folder in float32 and exported with torch.onnx.export
(no `onnx` package needed). Inputs: input_ids, position_ids (1, T) int64 and mask (T, T) bool (True: the
row may attend to the key); output: logits (1, T, V). T is fixed at export (--tokens): torch 1.13's tracer
bakes the sequence length into the grouped-query attention's repeat, so a graph with a dynamic T fails at
another length.
    PYTHONPATH=python python3 bench/_onnx_export.py FOLDER OUT.onnx --tokens T [--layers L]
--layers keeps the first L decoder layers (the same tensors, the rest dropped)."""

import argparse
import time

import torch

from memorywalker.families import load_family


def _repeat_interleave(x: torch.Tensor, repeats: int, dim: int) -> torch.Tensor:
    """x.repeat_interleave(repeats, dim) as unsqueeze, expand and reshape: torch 1.13 exports
    repeat_interleave over a negative dim into a graph whose shapes onnxruntime refuses."""
    d = dim % x.dim()
    shape = list(x.shape)
    grown = x.unsqueeze(d + 1).expand(*shape[: d + 1], repeats, *shape[d + 1 :])
    return grown.reshape(*shape[:d], shape[d] * repeats, *shape[d + 1 :])


torch.Tensor.repeat_interleave = _repeat_interleave  # the attention's GQA repeat, for this export only

parser = argparse.ArgumentParser()
parser.add_argument("folder")
parser.add_argument("out")
parser.add_argument("--tokens", type=int, required=True)
parser.add_argument("--layers", type=int, default=None)
args = parser.parse_args()

started = time.time()
model = load_family(args.folder, dtype=torch.float32).eval()
if args.layers is not None:
    model.model.layers = model.model.layers[: args.layers]
T = args.tokens
ids = torch.zeros(1, T, dtype=torch.int64)
positions = torch.arange(T, dtype=torch.int64).unsqueeze(0)
mask = torch.ones(T, T, dtype=torch.bool).tril()
with torch.no_grad():
    torch.onnx.export(
        model,
        (ids, positions, mask),
        args.out,
        input_names=["input_ids", "position_ids", "mask"],
        output_names=["logits"],
        opset_version=14,
        do_constant_folding=False,
    )
print(f"exported {args.out} ({len(model.model.layers)} layers) in {time.time() - started:.1f} s")
