"""CP-SAT run in a child process: a crash inside the solver becomes an ExactError, a request to
stop reaches the search at once, and the child never outlives its caller.

OR-Tools 9.15's portfolio, interleaved in one thread with several workers, has ended the process
with a segmentation fault or an abort on some models of this package (a CP-SAT defect in its LP,
seen on the decision questions of 16x16x24 with 6 slots). A crash in the child leaves the caller
alive: it raises `SolverCrash`, naming the signal and the settings that avoid it. The child is
forked (Linux and macOS), so the model is not copied or pickled; it sends back only the status,
the bound and the solution as a plan.

Stopping. The caller passes `stop`, a function that says whether it has been asked to stop (its
Ctrl-C or SIGTERM handler sets it); it is polled every POLL_SECONDS while the child solves, and
once true the child is told over a pipe and calls CP-SAT's `stop_search`: the search ends as at
a time limit and its best so far comes back. The child ignores Ctrl-C and SIGTERM (a terminal
sends Ctrl-C to the whole process group: the caller decides) and CP-SAT is told not to catch
them. An exception in the caller while it waits (a second Ctrl-C) kills the child before it
propagates.

The child never outlives the caller, even one killed by SIGKILL: on Linux the kernel kills it
when the caller dies (PR_SET_PDEATHSIG; the signal comes when the thread that started the child
ends, so a caller starts it from a thread that outlives the solve, as the main thread does), and
everywhere the child watches its end of the pipe: when the caller dies the pipe closes, and the
child exits at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from simcore.ga1.exact.plan import Plan

POLL_SECONDS = 0.05  # how often the caller asks `stop` while the child solves
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

Stop = Callable[[], bool]  # asked to stop (Ctrl-C, SIGTERM): the search ends with its best so far


class SolverCrash(RuntimeError):
    """CP-SAT ended its process without an answer."""


@dataclass(frozen=True)
class Solved:
    """What a solve returns: CP-SAT's status code, its bound on the objective (0 when there is
    no objective or no bound) and the solution as a plan (None when there is none)."""

    code: int
    bound: int
    plan: Plan | None


def solve_apart(built: Any, solver: Any, callback: Any = None, stop: Stop | None = None) -> Solved:
    """`solver.solve(built.model, callback)` in a forked child; SolverCrash if the child dies.
    With `stop`, the search ends (as at a time limit) once `stop()` is true."""
    from ortools.sat.python import cp_model

    from simcore.ga1.exact import model as exact_model

    def solve() -> Solved:
        code = solver.solve(built.model, callback)
        found = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        bound = 0
        if found or code == cp_model.UNKNOWN:
            bound = int(round(solver.best_objective_bound))
        return Solved(code, bound, exact_model.read_plan(built, solver) if found else None)

    if "fork" not in multiprocessing.get_all_start_methods():
        return _solve_here(solve, solver, stop)
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    orders, order = context.Pipe(duplex=False)  # the caller's stop order; closed when it dies
    caller = os.getpid()

    def child() -> None:
        order.close()  # the caller's end: only the caller may keep it open
        receiver.close()
        _die_with(caller)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        solver.parameters.catch_sigint_signal = False
        solved = threading.Event()
        threading.Thread(target=_obey, args=(orders, solver, solved), daemon=True).start()
        answer = solve()
        solved.set()
        sender.send(answer)
        sender.close()

    process = context.Process(target=child, daemon=True)
    waited = False
    try:
        with _signals_held():
            process.start()
        sender.close()
        orders.close()
        answer = _wait(receiver, order, stop)
        waited = True
    finally:
        if process.pid is not None:
            if not waited:  # interrupted while waiting: the search is abandoned
                process.kill()
            process.join()
        receiver.close()
        order.close()
    if answer is None:
        code = process.exitcode or 0
        name = signal.Signals(-code).name if code < 0 else f"exit code {code}"
        raise SolverCrash(
            f"CP-SAT ended without an answer ({name}); run again with one worker or another seed"
        )
    return answer


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held pending while the child is forked: a handler that ran inside
    the fork's callbacks would have its interrupt swallowed there, and the solve would go on."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _wait(receiver: Any, order: Any, stop: Stop | None) -> Solved | None:
    """The child's answer (None when it died without one), telling it to stop once `stop()`."""
    told = False
    while not receiver.poll(POLL_SECONDS):
        if stop is not None and not told and stop():
            try:
                order.send(True)
            except OSError:  # the child has already gone: its answer or its end is in the pipe
                pass
            told = True
    try:
        answer: Solved = receiver.recv()
    except EOFError:
        return None
    return answer


def _obey(orders: Any, solver: Any, solved: threading.Event) -> None:
    """In the child: stop the search on the caller's order, again until it has stopped (an order
    that comes before the search begins would be forgotten); leave at once if the caller dies."""
    try:
        orders.recv()
    except (EOFError, OSError):  # the caller is gone: nobody waits for an answer
        os._exit(1)
    while not solved.is_set():
        solver.stop_search()
        solved.wait(POLL_SECONDS)


def _die_with(caller: int) -> None:
    """In the child: be killed by the kernel when the caller dies (Linux); exit now if it
    already has."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the pipe alone watches the caller
            pass
    if os.getppid() != caller:
        os._exit(1)


def _solve_here(solve: Callable[[], Solved], solver: Any, stop: Stop | None) -> Solved:
    """Where processes cannot be forked: in this process, a thread stopping the search once
    `stop()`."""
    if stop is None:
        return solve()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL_SECONDS):
            if stop():
                solver.stop_search()
                return

    threading.Thread(target=watch, daemon=True).start()
    try:
        return solve()
    finally:
        done.set()
