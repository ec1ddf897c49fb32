"""`solve_optimum`: the exact model solved by CP-SAT, its schedule simulated and verified."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from simcore.ga1.asm import to_text
from simcore.ga1.exact.plan import Plan, PlanError, plan_of, program_of, relabel_by_first_use
from simcore.ga1.generator import default_params, general
from simcore.ga1.lower_bounds import io_bound_tiles, lower_bound
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.verify import Verification, verify_matmul
from simcore.shape import Shape

OPTIMAL, FEASIBLE, START = "optimal", "feasible", "start"


class ExactError(ValueError):
    """The exact solver cannot take this instance (too few slots, a start outside its scope,
    OR-Tools not installed) or found a schedule that does not run as modelled."""


@dataclass(frozen=True)
class ExactOptions:
    """How CP-SAT runs.

    `time_limit` (wall seconds) and `work_limit` (CP-SAT's deterministic time) each stop the
    search; `workers` is CP-SAT's portfolio size; `interleave` runs that portfolio in one thread,
    worker after worker, so that the search does not depend on thread timing; `seed` is CP-SAT's
    random seed. `copies` caps the residencies of each tile and the parts of each accumulator
    (None: the exact model); with a cap the optimum is the best of a smaller class and the
    solver's bound is not a bound on every schedule. `use_lower_bound` adds lower_bound(shape,
    machine) as a constraint (a proven bound on the same scope, it only speeds up the proof)."""

    time_limit: float | None = 10.0
    work_limit: float | None = None
    workers: int = 1
    interleave: bool = True
    seed: int = 0
    copies: int | None = None
    use_lower_bound: bool = True

    def __post_init__(self) -> None:
        for name in ("time_limit", "work_limit"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ExactError(f"{name} must be positive, got {value!r}")
        if self.workers < 1:
            raise ExactError(f"workers must be at least 1, got {self.workers}")
        if self.copies is not None and self.copies < 1:
            raise ExactError(f"copies must be at least 1, got {self.copies}")


@dataclass(frozen=True)
class ExactResult:
    """The schedule the solver returns, with what is proven about it.

    `cycles` are the returned program's, as the ordinary simulator runs it; `verification` is
    its exact check (numpy's product, hazard replay). `objective` is the solver's best makespan
    (None: it found none, and `program` is the starting schedule, status "start"); `bound` a
    proven lower bound on every schedule of the scope (the solver's, or lower_bound's when the
    model was capped). `status` is "optimal" (the model's optimum, proven), "feasible" (stopped
    by a limit) or "start"."""

    shape: Shape
    machine: Machine
    status: str
    cycles: int
    objective: int | None
    bound: int
    start_cycles: int
    program: Program
    verification: Verification
    wall_time: float
    complete: bool  # the model had every copy a schedule can use (no cap)
    options: ExactOptions

    @property
    def proven(self) -> bool:
        """`cycles` is the optimum of every schedule in the scope."""
        return self.complete and self.cycles == self.bound

    @property
    def gap(self) -> float:
        """How far the schedule may be from the optimum: cycles / bound - 1."""
        return self.cycles / self.bound - 1

    def record(self) -> dict[str, object]:
        """The result as plain data (JSON): what was proven, how it was run, the program as text."""
        return {
            "shape": str(self.shape),
            "machine": self.machine.as_dict(),
            "status": self.status,
            "cycles": self.cycles,
            "objective": self.objective,
            "bound": self.bound,
            "proven": self.proven,
            "complete": self.complete,
            "start_cycles": self.start_cycles,
            "wall_time": round(self.wall_time, 3),
            "verified": self.verification.ok,
            "verification": self.verification.describe(),
            "options": asdict(self.options),
            "program": to_text(self.program),
        }


def start_program(shape: Shape, machine: Machine) -> Program:
    """The general generator's default schedule: the solver's first solution and horizon."""
    if machine.slots < 3:
        raise ExactError(
            f"a tile product needs 3 slots (A, B and C); the scratchpad has {machine.slots}"
        )
    return general(shape, machine, default_params(shape, machine))


def solve_optimum(
    shape: Shape,
    machine: Machine,
    options: ExactOptions = ExactOptions(),
    start: Program | None = None,
) -> ExactResult:
    """The fastest schedule of C = A @ B on `machine`, or the best found and a proven bound.

    `start` (a matmul program of loads, stores, zeros and products, e.g. the tuner's best) is the
    solver's first solution; by default the general generator's default schedule. The result's
    program is always simulated and verified; a verified schedule slower than the solver said
    is an ExactError (the model would be wrong)."""
    started = time.perf_counter()
    first = start if start is not None else start_program(shape, machine)
    try:
        plan = plan_of(first, machine, shape)
    except PlanError as exc:
        raise ExactError(f"the starting schedule is outside the exact model: {exc}") from None
    try:
        from simcore.ga1.exact import model as exact_model
    except ModuleNotFoundError:
        raise ExactError("the exact solver needs OR-Tools: pip install 'autotune[exact]'") from None
    known = lower_bound(shape, machine)
    lower = min(known, plan.makespan) if options.use_lower_bound else 0
    least = io_bound_tiles(shape, machine) if options.use_lower_bound else 0
    built = exact_model.build_model(shape, machine, plan.makespan, lower, options.copies, least)
    complete = options.copies is None
    exact_model.add_hint(built, relabel_by_first_use(plan))
    solver = _solver(options)
    code = solver.solve(built.model)
    solved = code in (exact_model.cp_model.OPTIMAL, exact_model.cp_model.FEASIBLE)
    bound = (
        int(round(solver.best_objective_bound))
        if solved or code == exact_model.cp_model.UNKNOWN
        else 0
    )
    bound = max(bound, known) if complete else known
    if solved:
        found = exact_model.read_plan(built, solver)
        program, status, objective = (
            program_of(found, machine),
            _status(code, exact_model),
            found.makespan,
        )
    else:
        program, status, objective = first, START, None
    verification, _ = verify_matmul(machine, program, shape)
    _check(verification, objective, plan, bound)
    return ExactResult(
        shape,
        machine,
        status,
        verification.cycles,
        objective,
        bound,
        plan.makespan,
        program,
        verification,
        time.perf_counter() - started,
        complete,
        options,
    )


def _solver(options: ExactOptions):  # type: ignore[no-untyped-def]
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    params = solver.parameters
    params.random_seed = options.seed
    params.num_workers = options.workers
    params.interleave_search = options.interleave and options.workers > 1
    if options.time_limit is not None:
        params.max_time_in_seconds = options.time_limit
    if options.work_limit is not None:
        params.max_deterministic_time = options.work_limit
    return solver


def _status(code: int, exact_model) -> str:  # type: ignore[no-untyped-def]
    return OPTIMAL if code == exact_model.cp_model.OPTIMAL else FEASIBLE


def _check(verification: Verification, objective: int | None, plan: Plan, bound: int) -> None:
    """The returned program must be correct, no slower than modelled and no faster than proven
    possible (either would mean the model is not the machine)."""
    if not verification.ok:
        raise ExactError(f"the exact schedule failed verification: {verification.describe()}")
    promised = plan.makespan if objective is None else objective
    if verification.cycles > promised:
        raise ExactError(
            f"the exact schedule runs in {verification.cycles} cycles, the model said {promised}"
        )
    if verification.cycles < bound:
        raise ExactError(
            f"the exact schedule runs in {verification.cycles} cycles, "
            f"below the proven bound {bound}"
        )
