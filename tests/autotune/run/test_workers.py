"""A worker process of `--workers N` (autotune.run.workers) on its own: it fails in one line,
does nothing once asked to stop, and leaves quietly when terminated while it starts."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autotune.interrupt import children_ignore_ctrl_c
from autotune.run.jobs import StudySettings
from autotune.run.workers import INTERRUPTED, _worker
from tests.helpers.waiting import PATIENCE

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow  # a spawned process per case


def _run_worker(storage: Path, stopped: bool, terminate: bool = False) -> int | None:
    """Worker 0 on study "s" in `storage` (its search is never reached), its exit status."""
    context = multiprocessing.get_context("spawn")
    flag = context.RawValue(ctypes.c_bool, stopped)
    settings = StudySettings("s", str(storage), "random", 0, ("minimize",))
    worker = context.Process(
        target=_worker, args=(settings, None, 10, None, 0, False, flag, os.getpid())
    )
    with children_ignore_ctrl_c():  # as the run starts its workers
        worker.start()
    if terminate:
        worker.terminate()  # held until the worker can take it, then it leaves
    worker.join()
    return worker.exitcode


def test_a_worker_that_cannot_open_its_storage_says_so_in_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    code = _run_worker(tmp_path / "gone" / "study.journal", stopped=False)
    err = capfd.readouterr().err
    assert code == 1
    assert (
        err.startswith("autotune: error: worker 0: cannot open storage")
        and len(err.strip().splitlines()) == 1
    ), err


def test_a_worker_asked_to_stop_before_it_opened_the_study_touches_nothing(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    code = _run_worker(tmp_path / "study.journal", stopped=True)
    assert code == 0 and capfd.readouterr().err == ""
    assert list(tmp_path.iterdir()) == []  # no journal, no lease


def test_a_worker_terminated_while_it_starts_leaves_quietly(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    code = _run_worker(tmp_path / "study.journal", stopped=False, terminate=True)
    assert code == INTERRUPTED and capfd.readouterr().err == ""


def _report_mask(conn: Any) -> None:
    conn.send(sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))


_FIRST_START = """
import multiprocessing, signal
from autotune.run.workers import start
from tests.autotune.run.test_workers import _report_mask
context = multiprocessing.get_context("spawn")
receive, send = context.Pipe(duplex=False)
worker = context.Process(target=_report_mask, args=(send,))
start([worker])
print(receive.recv())
worker.join()
"""


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks")
def test_the_first_worker_of_a_process_starts_with_the_stop_signals_blocked() -> None:
    """In a fresh process (multiprocessing's helper not started yet), the first worker begins
    with Ctrl-C and SIGTERM blocked: one sent while it imports waits for it to take it over."""
    child = subprocess.run(
        [sys.executable, "-c", _FIRST_START],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert child.returncode == 0, child.stderr
    blocked = set(eval(child.stdout))  # noqa: S307 - a list of ints printed by the child
    assert {int(signal.SIGINT), int(signal.SIGTERM)} <= blocked


_TERMINATED_IN_A_CALLBACK = """
import ctypes, os, signal
from autotune.interrupt import leave_on_terminate
leave_on_terminate()
@ctypes.CFUNCTYPE(None)
def callback():
    os.kill(os.getpid(), signal.SIGTERM)  # taken inside the callback, as numba's are
callback()
print("left later")
"""


def test_a_terminate_taken_inside_a_callback_from_c_prints_nothing() -> None:
    child = subprocess.run(
        [sys.executable, "-c", _TERMINATED_IN_A_CALLBACK],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert child.returncode == 0 and child.stderr == "", child.stderr
