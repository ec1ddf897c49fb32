"""`optimum` stops when asked: Ctrl-C or SIGTERM while CP-SAT solves ends the command long before
its time limit, with nothing written (neither the result file nor a trial in the --enqueue
study); and a parent killed by SIGKILL leaves no solver process behind. Waits are on events: a
line on stderr, a process's end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.waiting import PATIENCE, wait_until

pytest.importorskip("ortools", reason="the exact solver needs OR-Tools")

ROOT = Path(__file__).resolve().parents[3]
# 4 x 4 x 4 tiles on 8 slots: CP-SAT proves nothing about it within this limit.
SOLVE = ["optimum", "--shape", "32x32x32", "--slots", "8", "--time-limit", "600"]
SOLVE += ["--search-nodes", "0", "--out", "o.json"]


def _start(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "autotune", *SOLVE, *extra],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:
        if " start " in line:  # the model is built and the solver's child runs
            return process
    raise AssertionError(f"optimum ended before solving: {process.wait()}")


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(field) for field in text.split()]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


@pytest.mark.slow  # CP-SAT in a process
@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_a_stop_writes_nothing_not_even_into_the_study(
    tmp_path: Path, signum: signal.Signals, status: int
) -> None:
    process = _start(tmp_path, "--enqueue", "exact")
    solvers = _children(process.pid)
    process.send_signal(signum)
    _out, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == status, err
    assert "Traceback" not in err and "nothing written" in err
    assert not (tmp_path / "o.json").exists()
    journal = tmp_path / "results" / "exact" / "study.journal"
    assert not journal.exists() or "optimum" not in journal.read_text()
    for pid in solvers:
        wait_until(lambda pid=pid: _gone(pid), f"the solver {pid} to end")  # type: ignore[misc]


@pytest.mark.slow  # CP-SAT in a process
def test_no_solver_outlives_a_parent_killed_by_sigkill(tmp_path: Path) -> None:
    process = _start(tmp_path)
    wait_until(lambda: bool(_children(process.pid)), "the solver's child process", process)
    solvers = _children(process.pid)
    process.kill()
    process.communicate(timeout=PATIENCE)
    for pid in solvers:
        wait_until(lambda pid=pid: _gone(pid), f"the orphaned solver {pid} to end")  # type: ignore[misc]
    assert not (tmp_path / "o.json").exists()
