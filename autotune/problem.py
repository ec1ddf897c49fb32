"""A tuning problem and its candidates: pure, no Optuna. The objective samples a candidate,
`assess` grades it against the machine's limits, `evaluate` runs the family's oracle."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from simcore.ga1.engine import chapter_generator
from simcore.ga1.machine import Machine
from simcore.ga1.schedules import ScheduleError, chapter_sweep
from simcore.shape import Shape

from search_spaces.base import Family, GA1Family, canonical_json
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
    violation: float  # 0 when feasible; otherwise how far over the limits

    @property
    def feasible(self) -> bool:
        return self.violation == 0


def machine_for(problem: Problem, candidate: Candidate) -> Machine:
    if problem.machine_space is None:
        return problem.machine
    return problem.machine_space.apply(problem.machine, candidate.machine_point)


def assess(problem: Problem, candidate: Candidate) -> Assessment:
    """Feasibility from slot and word arithmetic only: nothing is compiled or simulated."""
    machine = machine_for(problem, candidate)
    violation = problem.family(candidate.family).violation(candidate.point, problem.shape, machine)
    if problem.machine_space:
        violation += problem.machine_space.violation(machine)
    return Assessment(machine, violation)


def evaluate(problem: Problem, candidate: Candidate) -> dict[str, object]:
    """The attributes a trial records; an infeasible candidate is never simulated."""
    found = assess(problem, candidate)
    family = problem.family(candidate.family)
    attrs: dict[str, object] = {"feasible": found.feasible, "violation": found.violation}
    if isinstance(family, GA1Family):  # other oracles carry their machine in their own parameters
        attrs["machine"] = found.machine.as_dict()
    if not found.feasible:
        return attrs
    try:
        attrs.update(family.evaluate(candidate.point, problem.shape, found.machine))
    except ScheduleError:
        # The cheap slot count was optimistic: the compiler found the working set too big.
        attrs.update(feasible=False, violation=1.0)
    return attrs


@functools.lru_cache(maxsize=256)
def chapter_best(shape: Shape, machine: Machine) -> tuple[int, str] | None:
    """The chapter's best hand-written schedule on this machine: (cycles, label), or None when
    none of its schedules fits."""
    best: tuple[int, str] | None = None
    for schedule in chapter_sweep():
        if schedule.slots_needed(shape, machine) > machine.slots:
            continue
        cycles = chapter_generator(schedule, shape, machine).timing().cycles
        if best is None or cycles < best[0]:
            best = (cycles, schedule.label(shape, machine))
    return best
