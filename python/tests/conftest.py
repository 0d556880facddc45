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


def mw(*args: str) -> str:
    return node("bin/mw.js", *args)


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
