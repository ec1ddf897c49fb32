"""Worker processes sharing one study (`--workers N`), and how Ctrl-C reaches them.

Workers ignore Ctrl-C, so that one pressed while they are still importing does not kill them
with a traceback (they start with it blocked, and the parent receives it). The parent holds the
request: the first Ctrl-C sets a flag every worker reads (each finishes its trial in flight), a
second one terminates them (killed if they have not left within `TERMINATE_WAIT`), a third kills
them at once; each leaves cleanly: Optuna marks its trial in flight failed, its lease and run
record are let go. The flag is shared memory without a lock (autotune.interrupt says why), and a
worker whose parent is gone stops too: no worker outlives the run. A study whose best reaches its
proven lower bound stops them as well, through the storage each reads before asking for a trial
(a stop, not an interrupt: the trials in flight finish and the run exits 0). A worker that fails
says so in one line; after a stop it leaves without a word."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import sys
from multiprocessing import resource_tracker
from typing import TYPE_CHECKING, Any, Callable

from autotune.errors import AutotuneError
from autotune.interrupt import STOP, children_ignore_ctrl_c, ignore_ctrl_c, leave_on_terminate

if TYPE_CHECKING:
    from autotune.run.jobs import StudySettings
    from autotune.search.problem import Search

TERMINATE_WAIT = 5.0  # seconds a terminated worker has to leave before it is killed
INTERRUPTED = 130  # a worker's exit status when it left on a stop


def run_workers(
    settings: StudySettings,
    search: Search,
    target: int,
    timeout: float | None,
    workers: int,
    progress: bool,
    setup: Callable[[], None] | None = None,
    bound: int | None = None,
) -> None:
    """Run `workers` processes on the study until the budget is spent, a stop is requested or
    (with a `bound`) the study's best equals its proven lower bound; each calls `setup` first
    (the front end's logging: a spawned process starts with defaults)."""
    context = multiprocessing.get_context("spawn")
    stop = context.RawValue(ctypes.c_bool, False)
    processes = [
        context.Process(
            target=_worker,
            args=(settings, search, target, timeout, i, progress and i == 0, stop, os.getpid()),
            kwargs={"setup": setup, "bound": bound},
        )
        for i in range(workers)
    ]
    with STOP.shared_with(stop, leave=lambda: _kill(processes)):
        try:
            start(processes)
            while any(p.is_alive() for p in processes):
                for process in processes:
                    process.join(timeout=0.2)
        except KeyboardInterrupt:
            _terminate(processes)
            raise
    failed = [p.exitcode for p in processes if p.exitcode not in (0, None)]
    if failed:
        print(
            f"autotune: warning: {len(failed)} worker(s) exited with status {failed}",
            file=sys.stderr,
        )


def start(processes: list[Any]) -> None:
    """Start the processes, each with Ctrl-C and SIGTERM blocked until it takes them over."""
    # multiprocessing's helper process is started here, not by the first start: starting it
    # unblocks both signals, and a worker started after it in the block would begin unguarded.
    resource_tracker.ensure_running()
    for process in processes:
        with children_ignore_ctrl_c():
            process.start()


def _terminate(processes: list[Any]) -> None:
    """A second Ctrl-C: every worker leaves now (killed if it does not within the wait)."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        if process.pid is not None:
            process.join(timeout=TERMINATE_WAIT)
            if process.is_alive():
                process.kill()
                process.join()


def _kill(processes: list[Any]) -> None:
    """Leaving at once (a third Ctrl-C, from a signal handler): no worker may outlive the run."""
    for process in processes:
        try:
            if process.pid is not None:
                process.kill()
        except (OSError, ValueError, AssertionError):
            pass  # already gone


def _worker(
    settings: StudySettings,
    search: Search,
    target: int,
    timeout: float | None,
    index: int,
    progress: bool,
    stop: Any,
    parent: int,
    setup: Callable[[], None] | None = None,
    bound: int | None = None,
) -> None:
    ignore_ctrl_c()
    code = 0
    try:
        try:
            leave_on_terminate()  # a terminate sent while this process started arrives here
            STOP.follow(stop, parent)
            if setup is not None:
                setup()
            _work(settings, search, target, timeout, index, progress, bound)
        except Exception as exc:  # reported in one line, never a traceback after a stop
            code = 1
            if not STOP.requested:
                if not isinstance(exc, AutotuneError):
                    raise
                print(f"autotune: error: worker {index}: {exc}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        code = INTERRUPTED
    finally:
        STOP.forced = True  # leaving: a terminate from now on must not raise where none is caught
    sys.exit(code)


def _work(
    settings: StudySettings,
    search: Search,
    target: int,
    timeout: float | None,
    index: int,
    progress: bool,
    bound: int | None = None,
) -> None:
    from autotune.run.objective import Objective
    from autotune.run.optimise import at_bound
    from autotune.run.study import open_study, provenance

    if STOP.requested:  # asked to stop while starting: the study is not touched
        return
    shared, study = open_study(settings, search, seed_offset=index)
    try:
        shared.join(study, target)
        shared.optimize(
            study,
            Objective(search, study, provenance(settings), shared),
            target,
            timeout,
            progress,
            at_bound(bound) if bound is not None else None,
        )
    finally:
        shared.close(study)
