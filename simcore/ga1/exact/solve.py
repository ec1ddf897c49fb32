"""`solve_optimum`: the exact model solved by CP-SAT, its schedule simulated and verified."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from simcore.ga1.exact.apart import Solved, SolverCrash, Stop, solve_apart
from simcore.ga1.exact.plan import Plan, PlanError, plan_of, program_of, relabel_by_first_use
from simcore.ga1.exact.records import ExactError, ExactOptions, ExactResult
from simcore.ga1.exact.timed import Searched, search_below
from simcore.ga1.exact.transfers import MAX_PRODUCTS as PEBBLE_PRODUCTS
from simcore.ga1.exact.transfers import fewest_transfers
from simcore.ga1.generator import default_params, general
from simcore.ga1.lower_bounds import compute_pipeline_bound, io_bound_tiles
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.verify import Verification, verify_matmul
from simcore.shape import Shape

OPTIMAL, FEASIBLE, START = "optimal", "feasible", "start"
# The largest instance the model takes, in tile products: 8 x 8 x 8 tiles, the largest measured
# (docs/benchmarks/optimum.md). Beyond it CP-SAT rarely improves on its starting schedule.
MAX_PRODUCTS = 512
# What `solve_optimum` reports as it goes: (cycles of the best schedule so far, proven bound, seconds).
Progress = Callable[[int, int, float], None]


def _never() -> bool:
    return False


def check_instance(shape: Shape, machine: Machine) -> None:
    """Raise ExactError when the exact model does not take the instance: too few slots for one
    tile product, or more tile products than MAX_PRODUCTS."""
    if machine.slots < 3:
        raise ExactError(
            f"a tile product needs 3 slots (A, B and C); the scratchpad has {machine.slots}"
        )
    Mt, Kt, Nt = shape.tiles(machine.T)
    if Mt * Kt * Nt > MAX_PRODUCTS:
        raise ExactError(
            f"{shape} is {Mt}x{Kt}x{Nt} tiles of {machine.T}x{machine.T}, {Mt * Kt * Nt} tile "
            f"products: the exact model takes at most {MAX_PRODUCTS}"
        )


def check_solver() -> None:
    """Raise ExactError when OR-Tools (the `exact` extra) is not installed."""
    try:
        import ortools.sat.python.cp_model  # noqa: F401
    except ModuleNotFoundError:
        raise ExactError("the exact solver needs OR-Tools: pip install 'autotune[exact]'") from None


def proven_bounds(
    shape: Shape, machine: Machine, pebble_products: int = PEBBLE_PRODUCTS
) -> tuple[int, int]:
    """Proven lower bounds on every schedule of the scope: (cycles, loads plus stores). The
    fewest transfers of the pebbling game where the instance has at most `pebble_products` tile
    products, else the I/O bound's; the cycles are lower_bound's or the DMA's time for those
    transfers."""
    fewest = fewest_transfers(shape, machine, pebble_products) or 0
    least = max(io_bound_tiles(shape, machine), fewest)
    # lower_bound is the pipeline bound or the I/O bound's cycles, and least is no fewer tiles
    return max(compute_pipeline_bound(shape, machine), least * machine.dma_cycles), least


def start_program(shape: Shape, machine: Machine) -> Program:
    """The general generator's default schedule: the solver's first solution and horizon."""
    check_instance(shape, machine)
    return general(shape, machine, default_params(shape, machine))


def solve_optimum(
    shape: Shape,
    machine: Machine,
    options: ExactOptions = ExactOptions(),
    start: Program | None = None,
    progress: Progress | None = None,
    stop: Stop | None = None,
) -> ExactResult:
    """The fastest schedule of C = A @ B on `machine`, or the best found and a proven bound.

    `start` (a matmul program of loads, stores, zeros and products, e.g. the tuner's best) is the
    solver's first solution; by default the general generator's default schedule. The result's
    program is always simulated and verified; a verified schedule slower than the solver said
    is an ExactError (the model would be wrong). `progress` is called with the starting
    schedule's cycles and the known bound once the model is built, then with each better
    schedule the solver finds (its makespan, the solver's bound then, seconds since the start).
    `stop` (e.g. set by a Ctrl-C handler) ends the search at once, as a time limit would: the
    result is the best schedule found by then, verified, marked `interrupted`; the later stages
    (the exhaustive search, the decision questions) are not begun."""
    started = time.perf_counter()
    stopped: Stop = stop or _never
    deadline = _deadline(options, started)
    check_instance(shape, machine)
    first = start if start is not None else start_program(shape, machine)
    try:
        plan = plan_of(first, machine, shape)
    except PlanError as exc:
        raise ExactError(f"the starting schedule is outside the exact model: {exc}") from None
    check_solver()
    from simcore.ga1.exact import model as exact_model

    known, least = proven_bounds(shape, machine, options.pebble_products)
    lower = min(known, plan.makespan) if options.use_lower_bound else 0
    least = least if options.use_lower_bound else 0
    built = exact_model.build_model(shape, machine, plan.makespan, lower, options.copies, least)
    complete = options.copies is None
    exact_model.add_hint(built, relabel_by_first_use(plan))
    solver = _solver(options)
    if progress is not None:
        progress(plan.makespan, known, time.perf_counter() - started)
    answer = _solve(
        built, solver, _reporter(exact_model, progress, known, complete, started), stopped
    )
    code, own, found = answer.code, answer.bound, answer.plan
    solved = found is not None
    bound = max(own, known) if complete else known
    status = _status(code, exact_model) if solved else START
    best = (found or plan).makespan
    searched = (
        _search(shape, machine, options, best, deadline, stopped)
        if complete and status != OPTIMAL and not stopped()
        else None
    )
    if searched is not None:
        best = searched.cycles or best
        if searched.complete:
            bound, status = max(bound, best), OPTIMAL
        elif searched.cycles is not None:
            status = FEASIBLE
        if progress is not None and searched.cycles is not None:
            progress(best, bound, time.perf_counter() - started)
    if complete and options.proof_limit is not None and status != OPTIMAL and not stopped():
        floor = bound if options.use_lower_bound else own
        better, floor, proved = _prove(
            shape, machine, options, best, floor, least, deadline, stopped
        )
        found, bound = better or found, max(bound, floor)
        searched = None if better is not None else searched
        status = OPTIMAL if proved else FEASIBLE if found is not None else status
        if progress is not None and better is not None:
            progress(better.makespan, bound, time.perf_counter() - started)
    objective: int | None
    if searched is not None and searched.program is not None:
        program, objective = searched.program, searched.cycles
    elif found is not None:
        program, objective = program_of(found, machine), found.makespan
    else:  # the start: proven optimal, or nothing better found
        program, objective = first, plan.makespan if status == OPTIMAL else None
    verification, _ = verify_matmul(machine, program, shape)
    _check(verification, plan.makespan if objective is None else objective, bound)
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
        interrupted=stopped() and status != OPTIMAL,
    )


def decide_below(
    shape: Shape, machine: Machine, cycles: int, options: ExactOptions, stop: Stop | None = None
) -> tuple[Program | None, int, bool]:
    """The decision questions alone, from a schedule of `cycles` known to exist (the model is
    not given it): (a faster schedule they found, verified, or None; the proven bound; whether
    the fastest schedule known is proven optimal). Asks with `proof_limit` of work each (5 units
    when None), after the exhaustive search where the instance is small enough for it (when the
    search ends, no question is asked). `stop` ends them as a time limit would."""
    deadline = _deadline(options, time.perf_counter())
    stopped: Stop = stop or _never
    check_instance(shape, machine)
    check_solver()
    known, least = proven_bounds(shape, machine, options.pebble_products)
    if known > cycles:
        raise ExactError(f"no schedule of the scope runs in {cycles} cycles: {known} is proven")
    if options.proof_limit is None:
        options = replace(options, proof_limit=5.0)
    searched = _search(shape, machine, options, cycles, deadline, stopped)
    faster: Program | None = None
    if searched is not None and searched.program is not None:
        faster, cycles = searched.program, searched.cycles or cycles
    if searched is not None and searched.complete:
        floor, better, proved = cycles, None, True
    else:
        better, floor, proved = _prove(
            shape, machine, options, cycles, known, least, deadline, stopped
        )
    if better is None:
        if faster is not None:
            _check(verify_matmul(machine, faster, shape)[0], cycles, floor)
        return faster, floor, proved
    program = program_of(better, machine)
    verification, _ = verify_matmul(machine, program, shape)
    _check(verification, better.makespan, floor)
    return program, floor, proved


def _deadline(options: ExactOptions, started: float) -> float | None:
    """When `time_limit` runs out for the whole solve (perf_counter time; None: never)."""
    return None if options.time_limit is None else started + options.time_limit


def _left(deadline: float | None) -> float | None:
    """Wall seconds left before `deadline` (None: no limit), at least 0."""
    return None if deadline is None else max(0.0, deadline - time.perf_counter())


def _search(
    shape: Shape,
    machine: Machine,
    options: ExactOptions,
    cycles: int,
    deadline: float | None,
    stop: Stop = _never,
) -> Searched | None:
    """The exhaustive search below `cycles` on instances small enough for it, in the time left
    of the solve's limit (None: not run)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    left = _left(deadline)
    if not options.search_nodes or Mt * Kt * Nt > options.search_products or left == 0:
        return None
    return search_below(shape, machine, cycles, options.search_nodes, left, stop)


def _prove(
    shape: Shape,
    machine: Machine,
    options: ExactOptions,
    cycles: int,
    floor: int,
    least: int,
    deadline: float | None,
    stop: Stop = _never,
) -> tuple[Plan | None, int, bool]:
    """Decision problems "a schedule of at most best - 1 cycles?" (makespan in [floor, best - 1],
    `floor` a proven bound, best = `cycles` at first), each with `proof_limit` of work, until one
    is infeasible (then no schedule of the scope beats best: the bound rises to it), one stops
    unanswered, or the solve's time limit runs out. Returns the better plan the decisions found
    (None: none), the bound and whether best is optimal."""
    from ortools.sat.python import cp_model

    from simcore.ga1.exact import model as exact_model

    better: Plan | None = None
    while floor < cycles:
        left = _left(deadline)
        if left == 0 or stop():
            break
        built = exact_model.build_model(
            shape, machine, cycles - 1, floor, least_transfers=least, objective=False
        )
        solver = _solver(replace(options, work_limit=options.proof_limit, time_limit=left))
        answer = _solve(built, solver, None, stop)
        if answer.code == cp_model.INFEASIBLE:
            floor = cycles
        elif answer.plan is not None:
            found = answer.plan  # its makespan: the last store's end
            ends = [r.end for r in found.residencies if r.store is not None]
            better = replace(found, makespan=max(ends))
            cycles = better.makespan
        else:
            break
    return better, floor, floor >= cycles


def _solve(built: object, solver: object, callback: object = None, stop: Stop = _never) -> Solved:
    """One CP-SAT solve, in a child process: a crash of the solver is an ExactError; `stop`
    ends it as a time limit would."""
    try:
        return solve_apart(built, solver, callback, stop)
    except SolverCrash as exc:
        raise ExactError(str(exc)) from None


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


def _reporter(  # type: ignore[no-untyped-def]
    exact_model, progress: Progress | None, known: int, complete: bool, started: float
):
    """A CP-SAT solution callback that passes each better schedule to `progress` (None: none),
    with the bound proven then: the solver's and `known`, or `known` alone when the model was
    capped (its bound proves nothing about other schedules)."""
    if progress is None:
        return None
    report: Progress = progress

    class Reporter(exact_model.cp_model.CpSolverSolutionCallback):  # type: ignore[misc, name-defined]
        def on_solution_callback(self) -> None:
            found = int(round(self.best_objective_bound))
            bound = max(known, found) if complete else known
            report(int(round(self.objective_value)), bound, time.perf_counter() - started)

    return Reporter()


def _status(code: int, exact_model) -> str:  # type: ignore[no-untyped-def]
    return OPTIMAL if code == exact_model.cp_model.OPTIMAL else FEASIBLE


def _check(verification: Verification, promised: int, bound: int) -> None:
    """The returned program must be correct, no slower than modelled or searched and no faster
    than proven possible (either would mean the model is not the machine)."""
    if not verification.ok:
        raise ExactError(f"the exact schedule failed verification: {verification.describe()}")
    if verification.cycles > promised:
        raise ExactError(
            f"the exact schedule runs in {verification.cycles} cycles, the model said {promised}"
        )
    if verification.cycles < bound:
        raise ExactError(
            f"the exact schedule runs in {verification.cycles} cycles, "
            f"below the proven bound {bound}"
        )
