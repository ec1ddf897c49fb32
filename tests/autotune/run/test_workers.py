"""A worker process of `--workers N` (autotune.run.workers) on its own: it fails in one line,
does nothing once asked to stop, and leaves quietly when terminated while it starts."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
from pathlib import Path

import pytest

from autotune.interrupt import children_ignore_ctrl_c
from autotune.run.jobs import StudySettings
from autotune.run.workers import INTERRUPTED, _worker

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
