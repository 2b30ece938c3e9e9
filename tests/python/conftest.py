"""Shared fixtures of the pipelens pytest suite (run by ctest: `ctest -L python`).

ctest sets PYTHONPATH to build/python and PIPELENS_CLI to the pipelens-cli it built; run by
hand: PYTHONPATH=build/python PIPELENS_CLI=build/app/pipelens-cli /usr/bin/python3 -m pytest
tests/python.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def cli_path() -> str:
    path = os.environ.get("PIPELENS_CLI") or str(REPO / "build" / "app" / "pipelens-cli")
    if not Path(path).is_file():
        raise RuntimeError(f"pipelens-cli not found at {path}: set PIPELENS_CLI")
    return path


@pytest.fixture(scope="session")
def cli() -> str:
    return cli_path()


def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """Runs pipelens-cli, failing the test with its stderr when it fails."""
    proc = subprocess.run([cli_path(), *args], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, f"pipelens-cli {' '.join(args)} failed: {proc.stderr}"
    return proc


def is_sweep(path: Path) -> bool:
    """A sweep spec (docs/sweeps.md) has an "axis"; a run config does not."""
    return "axis" in json.loads(path.read_text())


def example_configs() -> list[Path]:
    return sorted(p for p in EXAMPLES.glob("*.json") if not is_sweep(p))


def example_sweeps() -> list[Path]:
    return sorted(p for p in EXAMPLES.glob("*.json") if is_sweep(p))


@pytest.fixture
def chdir_repo(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Relative paths inside the examples (schedule files) resolve against the repository."""
    monkeypatch.chdir(REPO)
    return REPO


def small_config(**changes: object) -> dict:
    """A small, fast experiment (PD, RPD, LocalSGD on a 120 x 16 least-squares problem)."""
    cfg: dict = {
        "name": "small",
        "seed": 1,
        "stages": 4,
        "batch_size": 10,
        "backend": "cpu",
        "data": {"source": "synthetic", "kind": "random", "rows": 120, "dim": 16, "seed": 3},
        "objective": {"kind": "quadratic"},
        "budget": {"epochs": 4},
        "methods": [
            {"method": "pd", "step_size": 0.05},
            {"method": "rpd", "step_size": 0.05, "delta": 6},
            {"method": "localsgd", "step_size": 0.05, "local_steps": 2},
        ],
    }
    cfg.update(changes)
    return cfg

