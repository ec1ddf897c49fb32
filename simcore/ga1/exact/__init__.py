"""The exact solver: the optimum of a GA-1 matrix product on small instances (OR-Tools CP-SAT).

`solve_optimum(shape, machine, options, start)` models the machine's rules as the simulator has
them (model.py) and returns a schedule with its proven bound (solve.py; its options and result
in records.py); on the smallest instances `search_below` (timed.py) searches every program
exhaustively. OR-Tools is an optional dependency (the `exact` extra): it is imported when the
solver runs, not with this package.

The scope of the optimum: every program that computes C = A @ B with loads, stores, zeros and
products, running each tile product (i, j, k) once (reading A(i, k) and B(k, j) as loaded from
DRAM and accumulating into C(i, j)), where each accumulator starts with a zero and may be
stored and reloaded any number of times. Programs that add partial sums on the vector unit are
outside it. The chapter's schedules and every generated family lie inside it. Extra
instructions whose removal keeps the result (a load nothing reads, a partial store nothing
reloads) never make a program faster, since the timing rule never starts an instruction later
when another is removed; the model leaves them out.
"""

from __future__ import annotations

from simcore.ga1.exact.plan import Plan, PlanError, Residency, TimedProduct, plan_of, program_of
from simcore.ga1.exact.records import ExactError, ExactOptions, ExactResult
from simcore.ga1.exact.solve import (
    FEASIBLE,
    MAX_PRODUCTS,
    OPTIMAL,
    START,
    Progress,
    check_instance,
    check_solver,
    decide_below,
    proven_bounds,
    solve_optimum,
    start_program,
)
from simcore.ga1.exact.timed import Searched, search_below

__all__ = [
    "solve_optimum",
    "decide_below",
    "search_below",
    "Searched",
    "proven_bounds",
    "ExactOptions",
    "ExactResult",
    "ExactError",
    "OPTIMAL",
    "FEASIBLE",
    "START",
    "MAX_PRODUCTS",
    "Progress",
    "check_instance",
    "check_solver",
    "start_program",
    "Plan",
    "PlanError",
    "Residency",
    "TimedProduct",
    "plan_of",
    "program_of",
]
