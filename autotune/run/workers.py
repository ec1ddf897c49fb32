"""Worker processes sharing one study (`--workers N`), and how Ctrl-C reaches them.

Workers ignore Ctrl-C, so that one pressed while they are still importing does not kill them
with a traceback (they start with it blocked, and the parent receives it). The parent holds the
request: the first Ctrl-C sets an Event every worker watches (each finishes its trial in
flight), a second one terminates them, and each leaves cleanly: Optuna marks its trial in
flight failed, its lease and run record are let go."""

from __future__ import annotations

import multiprocessing
import sys
from typing import TYPE_CHECKING, Any, Callable

from autotune.interrupt import STOP, children_ignore_ctrl_c, ignore_ctrl_c, leave_on_terminate

if TYPE_CHECKING:
    from autotune.run.jobs import StudySettings
    from autotune.search.problem import Search

TERMINATE_WAIT = 5.0  # seconds a terminated worker has to leave before it is killed


def run_workers(
    settings: StudySettings,
    search: Search,
    target: int,
    timeout: float | None,
    workers: int,
    progress: bool,
    setup: Callable[[], None] | None = None,
) -> None:
    """Run `workers` processes on the study until the budget is spent or a stop is requested;
    each calls `setup` first (the front end's logging: a spawned process starts with defaults)."""
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    processes = [
        context.Process(
            target=_worker,
            args=(settings, search, target, timeout, i, progress and i == 0, stop, setup),
        )
        for i in range(workers)
    ]
    try:
        with STOP.shared_with(stop):
            for process in processes:
                with children_ignore_ctrl_c():
                    process.start()
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


def _worker(
    settings: StudySettings,
    search: Search,
    target: int,
    timeout: float | None,
    index: int,
    progress: bool,
    stop: Any,
    setup: Callable[[], None] | None,
) -> None:
    ignore_ctrl_c()
    leave_on_terminate()
    STOP.follow(stop)
    try:
        if setup is not None:
            setup()
        from autotune.run.objective import Objective
        from autotune.run.study import open_study, provenance

        shared, study = open_study(settings, search, seed_offset=index)
        try:
            shared.join(study, target)
            shared.optimize(
                study,
                Objective(search, study, provenance(settings), shared),
                target,
                timeout,
                progress,
            )
        finally:
            shared.close(study)
    except KeyboardInterrupt:
        sys.exit(130)
