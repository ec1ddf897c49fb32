"""The environment: variables numba reads when it loads either work or are refused in one line
naming the variable; nothing is created."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import autotune
from autotune.errors import PlanError
from tests.autotune.hostile.conftest import Hostile

TUNE = ["--shape", "16x16x16", "--space", "chapter", "--trials", "3", "--study", "fresh"]


@pytest.mark.parametrize("threads", ["0", "-1"])
def test_numba_without_threads_is_named(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    monkeypatch.setenv("NUMBA_NUM_THREADS", threads)
    line = hostile.refuses(TUNE, f"NUMBA_NUM_THREADS={threads}")
    assert "--space" not in line


def test_numba_without_threads_is_named_by_the_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMBA_NUM_THREADS", "0")
    with pytest.raises(PlanError, match="NUMBA_NUM_THREADS=0"):
        autotune.tune("16x16x16", trials=3, storage=":memory:")


def test_numba_disabled_runs_the_engine_as_python(tmp_path: Path) -> None:
    """The engine is imported afresh (it reads the variable once), in a process of its own."""
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    env.pop("NUMBA_NUM_THREADS", None)
    argv = [*TUNE, "--results", str(tmp_path / "results")]
    run = subprocess.run(
        [sys.executable, "-m", "autotune", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert "verified" in run.stdout and "yes" in run.stdout
