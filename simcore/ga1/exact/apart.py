"""CP-SAT run in a child process, so that a crash inside the solver becomes an ExactError.

OR-Tools 9.15's portfolio, interleaved in one thread with several workers, has ended the process
with a segmentation fault or an abort on some models of this package (a CP-SAT defect in its LP,
seen on the decision questions of 16x16x24 with 6 slots). A crash in the child leaves the caller
alive: it raises `SolverCrash`, naming the signal and the settings that avoid it. The child is
forked (Linux and macOS), so the model is not copied or pickled; it sends back only the status,
the bound and the solution as a plan.
"""

from __future__ import annotations

import multiprocessing
import signal
from dataclasses import dataclass
from typing import Any

from simcore.ga1.exact.plan import Plan


class SolverCrash(RuntimeError):
    """CP-SAT ended its process without an answer."""


@dataclass(frozen=True)
class Solved:
    """What a solve returns: CP-SAT's status code, its bound on the objective (0 when there is
    no objective or no bound) and the solution as a plan (None when there is none)."""

    code: int
    bound: int
    plan: Plan | None


def solve_apart(built: Any, solver: Any, callback: Any = None) -> Solved:
    """`solver.solve(built.model, callback)` in a forked child; SolverCrash if the child dies."""
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
        return solve()
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def child() -> None:
        sender.send(solve())
        sender.close()

    process = context.Process(target=child, daemon=True)
    process.start()
    sender.close()
    try:
        answer: Solved | None = receiver.recv()
    except EOFError:
        answer = None
    process.join()
    if answer is None:
        code = process.exitcode or 0
        name = signal.Signals(-code).name if code < 0 else f"exit code {code}"
        raise SolverCrash(
            f"CP-SAT ended without an answer ({name}); run again with one worker or another seed"
        )
    return answer
