"""`python3 -m memorywalker.train BATCH --model MODEL --objective sft|rl|sdcc --steps N --out OUT [...]`: trains a
model on an exported batch (docs/batch-format.md) with torch.distributed data parallelism (DDP; gloo on CPU, NCCL
on GPUs), started by `torchrun` (RANK, WORLD_SIZE, LOCAL_RANK) or, with `--ranks R`, as R local processes.

Each rank holds whole packed sequences, assigned by their row counts (largest first, to the least loaded rank;
deterministic), with the sequences an SDCC pair links kept together. Every rank's loss divides by the whole
batch's counts (T targets, P KL pairs), so the ranks' losses sum to the single-process loss, and the gradient
DDP all-reduces (scaled by the world size, since DDP averages) is the single-process gradient, whatever the split.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import socket
import sys
from typing import Optional

import torch
import torch.distributed as dist

from .batch import Batch, block_mask, dense_mask, load_batch, select_sequences
from .families import FamilyModel, load_family, save_family
from .gpt2 import GPT2, load_gpt2
from .loss import packed_loss
from .safetensors_io import write_safetensors

PROG = "memorywalker.train"
#: The workbench's AdamW (docs/objectives.md): betas, eps, decoupled weight decay on tensors of >= 2 dims, global clip.
BETAS, EPS, WEIGHT_DECAY, CLIP = (0.9, 0.95), 1e-8, 0.1, 1.0
DTYPES = {"float32": torch.float32, "float64": torch.float64}


class InputError(Exception):
    """Invalid input (a batch or model that does not read, or that do not fit together): exit 2, one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors: exit 1 with one line, as `mw` does
        sys.stderr.write(f"{PROG}: {message} (see '{PROG} --help')\n")
        sys.exit(1)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = _Parser(prog=f"python3 -m {PROG}", description=__doc__.split("\n\n")[0])
    p.add_argument("batch", help="the batch file `mw export` wrote (memorywalker.batch/v1)")
    p.add_argument("--model", required=True, help="a model folder (config.json + safetensors: Llama, Qwen2, Qwen3) or a GPT-2 checkpoint (.safetensors)")
    p.add_argument("--objective", required=True, choices=["sft", "rl", "sdcc"], help="sft, rl (PPO-clipped, GRPO advantages), or sdcc (an sdcc batch)")
    p.add_argument("--task", choices=["sft", "rl"], default="sft", help="sdcc only: the student's task loss (default sft)")
    p.add_argument("--lambda", dest="lam", type=float, default=None, help="sdcc only: the KL weight (default 0.1)")
    p.add_argument("--epsilon", type=float, default=0.2, help="rl: the PPO clip range (default 0.2)")
    p.add_argument("--steps", type=int, required=True, help="updates to run; 0 with --grad-out: the first step's gradient only")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (default 1e-3); warm-up, then a cosine to lr/10")
    p.add_argument("--warmup", type=int, default=None, help="warm-up updates (default round(5%% of --steps))")
    p.add_argument("--out", help="where to write the trained model: a folder (for GPT-2: OUT/model.safetensors in the workbench's checkpoint format)")
    p.add_argument("--grad-out", help="write the first step's gradient (summed over ranks: the whole batch's) to this safetensors file")
    p.add_argument("--ranks", type=int, default=None, help="spawn R local processes (default: 1, or torchrun's WORLD_SIZE)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float32", help="the dtype of the weights while training (default float32)")
    p.add_argument("--attention", choices=["dense", "flex"], default="dense", help="dense tree mask (default) or FlexAttention's BlockMask (torch >= 2.5)")
    a = p.parse_args(argv)
    if a.steps < 0:
        p.error(f"--steps must be >= 0, got {a.steps}")
    if a.steps == 0 and not a.grad_out:
        p.error("--steps 0 needs --grad-out (it computes the first step's gradient and stops)")
    if a.steps > 0 and not a.out:
        p.error("--out is required (the folder the trained model is written to)")
    if a.objective != "sdcc" and a.lam is not None:
        p.error("--lambda goes with --objective sdcc")
    if a.ranks is not None and a.ranks < 1:
        p.error(f"--ranks must be >= 1, got {a.ranks}")
    if a.ranks is not None and "WORLD_SIZE" in os.environ:
        p.error("--ranks spawns its own processes; under torchrun leave it out")
    if a.lr <= 0 or not math.isfinite(a.lr):
        p.error(f"--lr must be a positive number, got {a.lr}")
    if a.warmup is not None and not 0 <= a.warmup <= a.steps:
        p.error(f"--warmup must lie in [0, --steps], got {a.warmup}")
    for path in (a.out, a.grad_out):
        parent = os.path.dirname(os.path.abspath(path)) if path else None
        if parent and not os.path.isdir(parent):
            p.error(f"the folder of {path} does not exist")
    if a.attention == "flex" and not flex_available():
        p.error(f"--attention flex needs FlexAttention (torch >= 2.5); this is torch {torch.__version__}")
    a.lam = 0.1 if a.lam is None else a.lam
    return a


def flex_available() -> bool:
    try:
        from torch.nn.attention.flex_attention import create_block_mask  # noqa: F401
    except ImportError:
        return False
    return True


def rank_shares(batch: Batch, world: int) -> list[list[list[int]]]:
    """Each rank's units of packed sequences: units (a sequence, or the sequences SDCC pairs link, kept together)
    by row count, largest first (ties: lower index first), each to the rank with the fewest rows so far (ties:
    the lower rank). Deterministic: every rank computes the same assignment from the same batch."""
    B = batch.sequences
    parent = list(range(B))

    def root(s):
        while parent[s] != s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    if "sdcc_student_rows" in batch.tensors and batch.sdcc_student_rows.shape[0] > 0:
        seq_of = lambda rows: torch.searchsorted(batch.seq_start[1:], rows, right=True).tolist()
        for a, b in zip(seq_of(batch.sdcc_student_rows), seq_of(batch.sdcc_teacher_rows)):
            parent[root(a)] = root(b)
    units: dict[int, list[int]] = {}
    for s in range(B):
        units.setdefault(root(s), []).append(s)
    sizes = (batch.seq_start[1:] - batch.seq_start[:-1]).tolist()
    ordered = sorted(units.values(), key=lambda u: (-sum(sizes[s] for s in u), u[0]))
    load, shares = [0] * world, [[] for _ in range(world)]
    for unit in ordered:
        r = min(range(world), key=lambda i: (load[i], i))
        shares[r].append(unit)
        load[r] += sum(sizes[s] for s in unit)
    return [sorted(units_of_rank) for units_of_rank in shares]


def load_model(path: str, dtype: torch.dtype):
    """A model folder (the three families) or a GPT-2 checkpoint file; invalid input raises InputError."""
    try:
        if os.path.isdir(path):
            return load_family(path, dtype=dtype)
        if not os.path.exists(path):
            raise InputError(f"{path}: no such model folder or checkpoint")
        return load_gpt2(path, dtype=dtype)
    except (ValueError, KeyError, OSError) as e:
        raise InputError(str(e) if str(e).startswith(path) else f"{path}: {e}") from None


def check_fits(batch: Batch, model, batch_path: str) -> None:
    vocab = model.config.vocab_size
    if batch.rows and int(batch.input_ids.max()) >= vocab:
        raise InputError(f"{batch_path}: token {int(batch.input_ids.max())} is outside the model's vocabulary of {vocab}")
    positions = model.config.n_positions if isinstance(model, GPT2) else model.config.max_position_embeddings
    if batch.rows and int(batch.position_ids.max()) >= positions:
        raise InputError(f"{batch_path}: position {int(batch.position_ids.max())} is beyond the model's {positions} positions")


def objective_options(args, batch: Batch) -> dict:
    T, P = int(batch.target_rows.shape[0]), int(batch.tensors.get("sdcc_student_rows", torch.zeros(0)).shape[0])
    ppo = {"sft": "sft", "rl": "ppo"}
    if args.objective == "sdcc":
        return dict(objective="sdcc", task=ppo[args.task], lam=args.lam, epsilon=args.epsilon, total_targets=T, total_pairs=P)
    return dict(objective=ppo[args.objective], epsilon=args.epsilon, total_targets=T, total_pairs=P)


def lr_at(step: int, peak: float, warmup: int, total: int) -> float:
    """The workbench's schedule (src/objectives/adamw.ts lrAt): linear warm-up, cosine to peak/10 at `total`."""
    low = peak / 10
    if step < warmup:
        return peak * (step + 1) / warmup
    if step >= total:
        return low
    return low + 0.5 * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) * (peak - low)


def gradient_names(model) -> dict[str, str]:
    """Parameter name -> the name written: Hugging Face's for the families, the workbench checkpoint's for GPT-2."""
    return {n: (f"transformer.{n}" if isinstance(model, GPT2) else n) for n, _ in model.named_parameters()}


def write_gpt2_checkpoint(model: GPT2, path: str, metadata: dict) -> None:
    """The workbench's checkpoint layout (docs/model.md): F32, transformer.* names in its order, config in __metadata__."""
    c, params = model.config, dict(model.named_parameters())
    order = ["wte.weight", "wpe.weight"]
    for i in range(c.n_layer):
        for part in ("ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj"):
            order += [f"h.{i}.{part}.weight", f"h.{i}.{part}.bias"]
    order += ["ln_f.weight", "ln_f.bias"]
    config = {"vocab_size": c.vocab_size, "n_embd": c.n_embd, "n_layer": c.n_layer, "n_head": c.n_head, "n_positions": c.n_positions}
    meta = {**metadata, "format": "pt", "producer": "memorywalker-python", "model_type": "gpt2", **config}
    write_safetensors(path, {f"transformer.{n}": params[n].detach().float() for n in order}, {k: str(v) for k, v in meta.items()})


def save(model, out: str, source: str, metadata: dict) -> None:
    os.makedirs(out, exist_ok=True)
    if isinstance(model, FamilyModel):
        save_family(model, out, source=source, metadata=metadata)
    else:
        write_gpt2_checkpoint(model, os.path.join(out, "model.safetensors"), metadata)


def run(args: argparse.Namespace, rank: int, world: int, device: torch.device) -> None:
    """One rank's training; every rank reads the same batch and model and computes the same assignment."""
    try:
        batch = load_batch(args.batch)
    except OSError as e:
        raise InputError(f"{args.batch}: {e.strerror or e}") from None
    except (ValueError, KeyError) as e:
        raise InputError(str(e) if str(e).startswith(args.batch) else f"{args.batch}: {e}") from None
    model = load_model(args.model, DTYPES[args.dtype])
    check_fits(batch, model, args.batch)
    if args.attention == "flex" and not isinstance(model, FamilyModel):
        raise InputError(f"{args.model}: --attention flex is for the model families; GPT-2 takes the dense mask")
    if batch.target_rows.shape[0] == 0:
        raise InputError(f"{args.batch}: the batch scores no target")
    if args.objective == "sdcc" and batch.method != "sdcc":
        raise InputError(f"{args.batch}: --objective sdcc needs a batch exported with --method sdcc, this one is {batch.method}")
    if "rl" in (args.objective, args.task if args.objective == "sdcc" else None) and bool(torch.isnan(batch.target_rollout_logprobs).any()):
        raise InputError(f"{args.batch}: rl needs every target's rollout logprob; this batch has targets without one")
    options = objective_options(args, batch)
    units = [select_sequences(batch, unit).to(device) for unit in rank_shares(batch, world)[rank]]
    model.to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    params = [p for _, p in model.named_parameters()]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": WEIGHT_DECAY},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.lr, betas=BETAS, eps=EPS)
    warmup = round(0.05 * args.steps) if args.warmup is None else args.warmup

    def local_step(train: bool) -> float:
        """Forward (and backward) of this rank's units; DDP all-reduces on the last backward only."""
        total = 0.0
        if not units:  # a rank without sequences still joins the all-reduce, with a zero gradient
            one = torch.zeros(1, dtype=torch.long, device=device)
            out = ddp(one, one, torch.ones(1, 1, dtype=torch.bool, device=device))
            if train:
                (out.sum() * 0).backward()
            return 0.0
        for i, sub in enumerate(units):
            sync = contextlib.nullcontext() if i == len(units) - 1 or not train else ddp.no_sync()
            with sync, (contextlib.nullcontext() if train else torch.no_grad()):
                mask = block_mask(sub, device=str(device)) if args.attention == "flex" else dense_mask(sub)
                logits = ddp(sub.input_ids, sub.position_ids, mask)
                loss = packed_loss(sub, logits, **options)
                if train:
                    (loss * world).backward()  # DDP averages over ranks; the sum of the ranks' losses is the loss
            total += loss.item()
        return total

    def global_sum(x: float) -> float:
        t = torch.tensor([x], dtype=torch.float64, device=device)
        dist.all_reduce(t)
        return float(t.item())

    names = gradient_names(model)
    stopped = None
    for step in range(max(args.steps, 1)):
        optimizer.zero_grad(set_to_none=False)
        loss = global_sum(local_step(train=True))
        if step == 0 and args.grad_out and rank == 0:
            grads = {names[n]: p.grad.detach().cpu() for n, p in model.named_parameters()}
            meta = {"kind": "gradient", "objective": args.objective, "ranks": str(world), "loss": repr(loss), "format": "pt"}
            write_safetensors(args.grad_out, grads, meta)
        if args.steps == 0:
            if rank == 0:
                print(json.dumps({"step": 0, "loss": loss, "ranks": world, "grad_out": args.grad_out}), flush=True)
            return
        norm = math.sqrt(sum(float(p.grad.double().pow(2).sum()) for p in params))
        if not math.isfinite(norm):  # the same on every rank (the gradient is all-reduced): all stop here
            stopped = step
            break
        for p in params:
            p.grad.mul_(min(1.0, CLIP / norm) if norm > 0 else 1.0)
        lr = lr_at(step, args.lr, warmup, args.steps)
        for g in optimizer.param_groups:
            g["lr"] = lr
        optimizer.step()
        if rank == 0:
            print(json.dumps({"step": step, "loss": loss, "lr": lr, "grad_norm": norm}), flush=True)
    done = args.steps if stopped is None else stopped
    final = global_sum(local_step(train=False)) if stopped is None else float("nan")
    if rank == 0:
        if stopped is None:
            print(json.dumps({"step": args.steps, "loss": final, "final": True}), flush=True)
        meta = {"step": done, "lr_peak": args.lr, "lr_warmup": warmup, "lr_total": args.steps, "lr_min": args.lr / 10}
        meta.update(objective=args.objective, method=batch.method, ranks=world)
        save(model.to("cpu"), args.out, args.model if os.path.isdir(args.model) else None, {k: str(v) for k, v in meta.items()})
        print(json.dumps({"wrote": args.out}), flush=True)
    if stopped is not None:
        raise RuntimeError(f"stopped: the gradient of update {stopped} is not finite; {args.out} holds the weights after {stopped} updates")


def _device(local_rank: int) -> torch.device:
    return torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")


def _rank_main(args: argparse.Namespace, rank: int, world: int, local_rank: int, init_method: str) -> None:
    device = _device(local_rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", init_method=init_method, rank=rank, world_size=world)
    try:
        run(args, rank, world, device)
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    try:
        if "WORLD_SIZE" in os.environ and "RANK" in os.environ:  # started by torchrun: MASTER_ADDR/PORT in the environment
            env = os.environ
            _rank_main(args, int(env["RANK"]), int(env["WORLD_SIZE"]), int(env.get("LOCAL_RANK", "0")), "env://")
        elif (args.ranks or 1) == 1:
            _rank_main(args, 0, 1, 0, f"tcp://127.0.0.1:{free_port()}")
        else:
            import torch.multiprocessing as mp

            # Each child reports its own failure; the parent turns a failed child into the exit status.
            # fork where it is safe (Linux, CUDA not yet initialised here): the children skip re-importing torch
            method = "fork" if sys.platform == "linux" and not torch.cuda.is_initialized() else "spawn"
            mp.start_processes(_spawned, args=(args.ranks, args, free_port()), nprocs=args.ranks, join=True, start_method=method)
    except InputError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    except RuntimeError as e:
        if str(e).startswith("stopped:"):
            sys.stderr.write(f"{PROG}: {e}\n")
            return 4
        raise
    except Exception as e:  # noqa: BLE001 - a spawned rank failed: its own message is already on stderr
        if type(e).__name__ == "ProcessExitedException" or type(e).__name__ == "ProcessRaisedException":
            code = getattr(e, "exit_code", None)
            return code if isinstance(code, int) and code > 0 else 70
        raise
    return 0


def _spawned(rank: int, world: int, args: argparse.Namespace, port: int) -> None:
    """A child of --ranks: input problems print one line and exit 2 (the parent returns the same status)."""
    try:
        _rank_main(args, rank, world, rank, f"tcp://127.0.0.1:{port}")
    except InputError as e:
        if rank == 0:
            sys.stderr.write(f"{e}\n")
        sys.exit(2)
    except RuntimeError as e:
        if str(e).startswith("stopped:"):
            if rank == 0:
                sys.stderr.write(f"{PROG}: {e}\n")
            sys.exit(4)
        raise


if __name__ == "__main__":
    sys.exit(main())
