"""The Python tier's fixtures: the repository's `mw` (node bin/mw.js) and the TypeScript helpers
(src/testing/python-fixtures.ts) run as subprocesses, a seeded tiny checkpoint and generated rollouts
with edits written once per session, and the agreement figures printed at the end of the run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

NODE = os.environ.get("MW_NODE") or shutil.which("node")
#: The figures the tests measured, printed after the run (and kept in .reports when MW_PYTHON_FIGURES names a file).
FIGURES: dict[str, str] = {}


def node(*args: str, input: str | None = None) -> str:
    """Runs node with the repository's TypeScript hook; stdout, or the failure with its stderr."""
    if NODE is None:
        raise RuntimeError("node not found: the Python tier runs mw and the TypeScript helpers with it (set MW_NODE)")
    env = {**os.environ, "MW_CACHE_DIR": os.path.join(tempfile.gettempdir(), "mw-test-cache")}
    run = subprocess.run([NODE, *args], cwd=ROOT, env=env, input=input, capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"node {' '.join(args)} exited {run.returncode}:\n{run.stderr}")
    return run.stdout


#: What runs mw: the bundle `npm test` builds (scripts/cli-bundle.mjs, the same main) when MW_CLI names it, else bin/mw.js.
MW_ENTRY = os.environ.get("MW_CLI") or "bin/mw.js"


def mw(*args: str) -> str:
    return node(MW_ENTRY, *args)


def helper(*args: str, input: str | None = None) -> str:
    return node("--import", "./scripts/register.mjs", "src/testing/python-fixtures.ts", *args, input=input)


@pytest.fixture(scope="session")
def fixtures(tmp_path_factory) -> Path:
    """ckpt.safetensors (tiny, random wide weights), rollouts.jsonl (8 generated rollouts with edits) and <id>.json each."""
    directory = tmp_path_factory.mktemp("fixtures")
    helper("fixtures", str(directory))
    return directory


@pytest.fixture(scope="session")
def export(fixtures):
    """export(method, file="rollouts.jsonl", max_tokens=None) -> path of `mw export`'s batch, made once."""
    made: dict[tuple, Path] = {}

    def run(method: str, file: str = "rollouts.jsonl", max_tokens: int | None = None) -> Path:
        key = (method, file, max_tokens)
        if key not in made:
            out = fixtures / f"{Path(file).stem}.{method}.{max_tokens or 'all'}.safetensors"
            mw("export", str(fixtures / file), "--method", method, "--out", str(out), *(["--max-tokens", str(max_tokens)] if max_tokens else []))
            made[key] = out
        return made[key]

    return run


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    import torch

    terminalreporter.write_sep("=", f"memorywalker agreement figures (torch {torch.__version__})")
    for name, value in FIGURES.items():
        terminalreporter.write_line(f"{name}: {value}")
    path = os.environ.get("MW_PYTHON_FIGURES")
    if path:
        Path(path).write_text(json.dumps(FIGURES, indent=2) + "\n")


def _act(tokens, logprobs):
    return {"op": "append", "role": "act", "tokens": tokens, "logprobs": logprobs}


def _append(role, tokens):
    return {"op": "append", "role": role, "tokens": tokens}


#: Two token-level rollouts of one group (rewards 1 and 0: GRPO advantages +1 and -1) with a summary edit and a
#: later edit that drops a turn, so each has diverging leaves; 10 and 8 targets, packed-4d tries of 26 and 19 rows.
TWO_ROLLOUTS = [
    {
        "format": "memorywalker.rollout/v1", "id": "long", "vocab": 272, "reward": 1, "group": "g",
        "events": [
            _append("prompt", [10, 11, 12]),
            _act([20, 21, 22], [-1.25, -0.5, -2.0]),
            _append("obs", [30, 31, 32, 33]),
            _act([23, 24], [-0.75, -1.5]),
            {"op": "edit", "view": [{"keep": [0, 3]}, {"insert": {"role": "summary", "tokens": [40, 41]}}, {"keep": [10, 12]}]},
            _append("obs", [34, 35]),
            _act([25, 26, 27], [-0.25, -3.0, -1.0]),
            {"op": "edit", "view": [{"keep": [0, 3]}, {"keep": [12, 14]}, {"keep": [16, 19]}]},
            _act([28, 29], [-0.5, -2.5]),
        ],
    },
    {
        "format": "memorywalker.rollout/v1", "id": "short", "vocab": 272, "reward": 0, "group": "g",
        "events": [
            _append("prompt", [13, 14]),
            _act([50, 51], [-1.0, -0.25]),
            _append("obs", [60, 61, 62]),
            _act([52, 53, 54], [-2.0, -0.5, -1.75]),
            {"op": "edit", "view": [{"keep": [0, 2]}, {"insert": {"role": "summary", "tokens": [70]}}, {"keep": [7, 10]}]},
            _act([55, 56], [-0.75, -1.25]),
            {"op": "edit", "view": [{"keep": [0, 2]}, {"keep": [10, 11]}, {"keep": [11, 13]}]},
            _act([57], [-3.0]),
        ],
    },
]


@pytest.fixture(scope="session")
def two_rollouts(fixtures) -> Path:
    """fixtures/two.jsonl: TWO_ROLLOUTS, for the data-parallel tests (export it with `export(method, "two.jsonl", N)`)."""
    path = fixtures / "two.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TWO_ROLLOUTS))
    return path


@pytest.fixture(scope="session")
def tiny_folders(tmp_path_factory) -> dict[str, Path]:
    """One tiny random model folder per family (memorywalker.families.TINY_LAYOUTS), vocabulary 272."""
    from memorywalker.families import TINY_LAYOUTS, write_tiny_folder

    root = tmp_path_factory.mktemp("folders")
    out = {}
    for seed, family in enumerate(TINY_LAYOUTS):
        write_tiny_folder(str(root / family), family, seed=11 + seed)
        out[family] = root / family
    return out
