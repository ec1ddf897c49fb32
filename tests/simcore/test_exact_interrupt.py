"""Stopping the exact solver: a request to stop ends the search with its best schedule so far
(verified, marked interrupted) long before its time limit; the solver's child process never
outlives its caller, whether the caller is interrupted while it waits or killed by SIGKILL.
Waits are on events (a pipe's line, a process's end), polled against generous deadlines."""

from __future__ import annotations

import itertools
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip(
    "ortools", reason="the exact solver needs OR-Tools (pip install 'autotune[exact]')"
)

from ortools.sat.python import cp_model  # noqa: E402

from simcore import Machine, Shape  # noqa: E402
from simcore.ga1.exact import FEASIBLE, OPTIMAL, ExactOptions, solve_optimum  # noqa: E402
from simcore.ga1.exact.apart import solve_apart  # noqa: E402
from simcore.ga1.exact.model import add_hint, build_model  # noqa: E402
from simcore.ga1.exact.plan import plan_of, relabel_by_first_use  # noqa: E402
from simcore.ga1.exact.solve import start_program  # noqa: E402

# 4 x 4 x 4 tiles on 8 slots: CP-SAT does not prove it in minutes (docs/benchmarks/optimum.md).
HARD, HARD_MACHINE = Shape(32, 32, 32), Machine(slots=8)
LONG = 600.0  # a time limit no run of these tests reaches
GONE_WITHIN = 60.0  # seconds a stopped or orphaned solver is given to disappear (a loaded machine)
ROOT = Path(__file__).resolve().parents[2]


def _gone(pid: int) -> bool:
    """The process has ended (a zombie waiting for its new parent to reap it counts)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _wait_until_gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_WITHIN
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        select.select([], [], [], 0.05)
    return _gone(pid)


def _polls(count: int):  # type: ignore[no-untyped-def]
    """A stop request that turns true on the `count`-th time it is asked."""
    asked = itertools.count(1)
    return lambda: next(asked) >= count


@pytest.mark.slow
def test_a_stop_ends_the_solve_with_its_best_so_far() -> None:
    options = ExactOptions(time_limit=LONG, workers=8, proof_limit=5.0)
    result = solve_optimum(HARD, HARD_MACHINE, options, stop=_polls(20))
    assert result.interrupted and result.status in (FEASIBLE, "start")
    assert result.verification.ok and result.wall_time < LONG / 2
    assert result.record()["interrupted"] is True


def test_a_solve_that_is_never_stopped_is_not_interrupted() -> None:
    result = solve_optimum(
        Shape(8, 8, 16), Machine(slots=4), ExactOptions(time_limit=None, work_limit=1.0)
    )
    assert not result.interrupted and result.status == OPTIMAL


class _Tell(cp_model.CpSolverSolutionCallback):  # type: ignore[misc]
    """Writes the solving process's id to a pipe at its first solution."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd, self.told = fd, False

    def on_solution_callback(self) -> None:
        if not self.told:
            os.write(self.fd, f"{os.getpid()}\n".encode())
            self.told = True


def hard_model():  # type: ignore[no-untyped-def]
    """The hard instance's model, its horizon and hint the general generator's default schedule
    (a first solution comes in a second or two)."""
    plan = plan_of(start_program(HARD, HARD_MACHINE), HARD_MACHINE, HARD)
    built = build_model(HARD, HARD_MACHINE, plan.makespan, 0)
    add_hint(built, relabel_by_first_use(plan))
    return built


def _hard_solver() -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = LONG
    return solver


@pytest.mark.slow
def test_an_interrupted_caller_leaves_no_solver_behind() -> None:
    read, write = os.pipe()
    built = hard_model()
    child: list[int] = []

    def second_ctrl_c() -> bool:
        if select.select([read], [], [], 0)[0]:
            child.append(int(os.read(read, 64).split()[0]))
            raise KeyboardInterrupt
        return False

    with pytest.raises(KeyboardInterrupt):
        solve_apart(built, _hard_solver(), _Tell(write), second_ctrl_c)
    assert child and child[0] != os.getpid() and _gone(child[0])


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_caller_killed_by_sigkill_leaves_no_solver_behind() -> None:
    script = textwrap.dedent(
        f"""
        import os
        from ortools.sat.python import cp_model
        from simcore.ga1.exact.apart import solve_apart
        from tests.simcore.test_exact_interrupt import hard_model

        class Tell(cp_model.CpSolverSolutionCallback):
            told = False
            def on_solution_callback(self):
                if not self.told:
                    print(os.getpid(), flush=True)
                    self.told = True

        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.max_time_in_seconds = {LONG}
        solve_apart(hard_model(), solver, Tell())
        """
    )
    caller = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert caller.stdout is not None
        solver_pid = int(caller.stdout.readline())  # the child solves: its first solution
        assert solver_pid != caller.pid and not _gone(solver_pid)
        os.kill(caller.pid, signal.SIGKILL)
        caller.wait()
        assert _wait_until_gone(solver_pid)
    finally:
        if caller.poll() is None:
            caller.kill()
            caller.wait()


class _Stopped(Exception):
    """What the test's Ctrl-C handler raises, as the command's raises KeyboardInterrupt."""


_ARMED: list[bool] = []  # a Ctrl-C to send from inside the next fork's callbacks


def _ctrl_c_inside_the_fork() -> None:
    if _ARMED:
        _ARMED.clear()
        # To the main thread: a signal to the process may land on another thread (a test
        # runner's), whose handler call the main thread makes wherever it is.
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        for _ in range(3):  # bytecodes after the signal: a handler not held runs here
            pass


os.register_at_fork(after_in_parent=_ctrl_c_inside_the_fork)


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks")
def test_a_ctrl_c_during_the_fork_is_not_swallowed_by_its_callbacks() -> None:
    asked: list[bool] = []

    def handler(_signum: int, _frame: object) -> None:
        asked.append(True)
        raise _Stopped

    previous = signal.signal(signal.SIGINT, handler)
    _ARMED.append(True)
    try:
        with pytest.raises(_Stopped):
            solve_apart(hard_model(), _hard_solver(), None, lambda: bool(asked))
    finally:
        _ARMED.clear()
        signal.signal(signal.SIGINT, previous)
    assert asked == [True]
