"""CP-SAT in a child process: the same answer as in the caller's, and a solver that dies is an
error, with the caller alive. The fault is injected by a solution callback that kills its own
process, as a crash inside CP-SAT would."""

from __future__ import annotations

import os
import signal

import pytest

pytest.importorskip(
    "ortools", reason="the exact solver needs OR-Tools (pip install 'autotune[exact]')"
)

from ortools.sat.python import cp_model  # noqa: E402

from simcore import Machine, Shape  # noqa: E402
from simcore.ga1.exact import ExactError, ExactOptions, solve_optimum  # noqa: E402
from simcore.ga1.exact.apart import SolverCrash, solve_apart  # noqa: E402
from simcore.ga1.exact.model import build_model, read_plan  # noqa: E402

SHAPE, MACHINE = Shape(8, 8, 16), Machine(slots=4)


class _DieOnFirstSolution(cp_model.CpSolverSolutionCallback):  # type: ignore[misc]
    def on_solution_callback(self) -> None:
        os.kill(os.getpid(), signal.SIGKILL)


def _solver() -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_deterministic_time = 1.0
    return solver


def test_the_child_answers_as_the_caller_would():
    built = build_model(SHAPE, MACHINE, 400, 0)
    here = _solver()
    code = here.solve(built.model)
    apart = solve_apart(build_model(SHAPE, MACHINE, 400, 0), _solver())
    assert apart.code == code == cp_model.OPTIMAL
    assert apart.plan is not None and apart.plan.makespan == read_plan(built, here).makespan
    assert apart.bound == apart.plan.makespan


def test_a_solver_that_dies_is_an_error_and_the_caller_lives():
    built = build_model(SHAPE, MACHINE, 400, 0)
    with pytest.raises(SolverCrash, match="SIGKILL"):
        solve_apart(built, _solver(), _DieOnFirstSolution())


def test_the_exact_solver_reports_a_crash_as_its_own_error(monkeypatch):
    def crash(*_args: object) -> None:
        raise SolverCrash("CP-SAT ended without an answer (SIGSEGV)")

    monkeypatch.setattr("simcore.ga1.exact.solve.solve_apart", crash)
    with pytest.raises(ExactError, match="SIGSEGV"):
        solve_optimum(SHAPE, MACHINE, ExactOptions(time_limit=None, work_limit=0.1))
