"""A tuning problem and its candidates: pure, no Optuna. The objective samples a candidate,
`assess` checks it against the slot and word arithmetic, `evaluate` simulates it."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from simcore.machine import Machine
from simcore.schedules import ScheduleError, chapter_sweep
from simcore.shape import Shape
from simcore.simulate import simulate

from search_spaces.base import Family, canonical_json
from search_spaces.domains import Param, Point
from search_spaces.machine import MachineSpace
from search_spaces.registry import check_shared_params

# What an infeasible trial reports as its value: finite, and worse than any schedule.
INFEASIBLE_VALUE = 1e15


@dataclass(frozen=True)
class Problem:
    shape: Shape
    machine: Machine                      # the base machine (what --slots/--machine say)
    families: tuple[Family, ...]
    machine_space: MachineSpace | None = None

    def __post_init__(self) -> None:
        check_shared_params(self.params_by_family())

    def family(self, name: str) -> Family:
        for family in self.families:
            if family.name == name:
                return family
        raise KeyError(f"unknown schedule family {name!r}")

    def params_by_family(self) -> dict[str, tuple[Param, ...]]:
        return {f.name: f.params(self.shape, self.machine.T) for f in self.families}

    def machine_params(self) -> tuple[Param, ...]:
        return self.machine_space.params() if self.machine_space else ()


@dataclass(frozen=True)
class Candidate:
    family: str
    point: Point            # the schedule's parameters
    machine_point: Point    # the machine's searched parameters (empty without --search-machine)

    def params(self) -> Point:
        """Everything that identifies the candidate, as Optuna records it."""
        return {"family": self.family, **self.point, **self.machine_point}

    def key(self) -> str:
        return canonical_json(self.params())


@dataclass(frozen=True)
class Assessment:
    machine: Machine
    slots_needed: int
    violation: float  # 0 when feasible; otherwise how far over the limits, in slots

    @property
    def feasible(self) -> bool:
        return self.violation == 0


@dataclass(frozen=True)
class Evaluation:
    """What the tuner records for a candidate."""

    feasible: bool
    violation: float
    slots_needed: int
    machine: Machine
    cycles: int | None = None
    tiles_moved: int | None = None
    loads: int | None = None
    stores: int | None = None
    mxu_util: float | None = None
    dma_busy: float | None = None
    lower_bound: int | None = None

    @property
    def value(self) -> float:
        return float(self.cycles) if self.feasible and self.cycles is not None else INFEASIBLE_VALUE

    def attrs(self) -> dict[str, object]:
        return {
            "feasible": self.feasible, "violation": self.violation, "slots_needed": self.slots_needed,
            "cycles": self.cycles, "tiles_moved": self.tiles_moved, "loads": self.loads,
            "stores": self.stores, "mxu_util": self.mxu_util, "dma_busy": self.dma_busy,
            "lower_bound": self.lower_bound, "machine": self.machine.as_dict(),
        }


def assess(problem: Problem, candidate: Candidate) -> Assessment:
    """Feasibility from slot and word arithmetic only: nothing is compiled or simulated."""
    machine = problem.machine_space.apply(problem.machine, candidate.machine_point) if problem.machine_space else problem.machine
    need = problem.family(candidate.family).slots_needed(candidate.point, problem.shape, machine)
    violation = float(max(0, need - machine.slots))
    if problem.machine_space:
        violation += problem.machine_space.violation(machine)
    return Assessment(machine, need, violation)


def build_program(problem: Problem, candidate: Candidate, machine: Machine):
    return problem.family(candidate.family).build(candidate.point, problem.shape, machine)


def evaluate(problem: Problem, candidate: Candidate) -> Evaluation:
    """Simulate a feasible candidate (timing only); an infeasible one is never simulated."""
    found = assess(problem, candidate)
    if not found.feasible:
        return Evaluation(False, found.violation, found.slots_needed, found.machine)
    try:
        program = build_program(problem, candidate, found.machine)
    except ScheduleError:
        # The cheap slot count was optimistic: the compiler found the working set too big.
        return Evaluation(False, 1.0, found.machine.slots + 1, found.machine)
    result = simulate(found.machine, program)
    return Evaluation(
        feasible=True, violation=0.0, slots_needed=found.slots_needed, machine=found.machine,
        cycles=result.cycles, tiles_moved=result.tiles_moved, loads=result.loads,
        stores=result.stores, mxu_util=result.mxu_util, dma_busy=result.dma_busy,
        lower_bound=bound_cycles(problem.shape, found.machine),
    )


@functools.lru_cache(maxsize=256)
def bound_cycles(shape: Shape, machine: Machine) -> int:
    """The best known lower bound on cycles for any schedule (TEMP: until lower_bounds lands)."""
    try:
        from simcore.lower_bounds import lower_bound
    except ModuleNotFoundError:
        from simcore.bounds import simple_bounds
        return simple_bounds(shape, machine).best
    return lower_bound(shape, machine)


@functools.lru_cache(maxsize=256)
def chapter_best(shape: Shape, machine: Machine) -> tuple[int, str] | None:
    """The chapter's best hand-written schedule on this machine: (cycles, label), or None when
    none of its schedules fits."""
    best: tuple[int, str] | None = None
    for schedule in chapter_sweep():
        if schedule.slots_needed(shape, machine) > machine.slots:
            continue
        cycles = simulate(machine, schedule.build(shape, machine)).cycles
        if best is None or cycles < best[0]:
            best = (cycles, schedule.label(shape, machine))
    return best
