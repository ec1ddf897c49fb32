"""Searches: what one study tunes, pure (no Optuna). A search samples a candidate through a
`suggest` function, grades it against the limits before anything runs, evaluates it once with
its oracle, and names the candidates every study starts from. `Problem` searches schedules
(and optionally machine parameters) for one GEMM; `autotune.codesign.Codesign` searches
machines for a whole workload. The run pipeline treats both alike (`Search`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol, Sequence

from simcore.ga1.machine import Machine
from simcore.ga1.schedules import ScheduleError
from simcore.shape import Shape

from search_spaces.base import Family, canonical_json
from search_spaces.domains import Choice, Param, Point, Value, grid
from search_spaces.machine import MachineSpace
from search_spaces.registry import check_shared_params
from search_spaces.workload import Gemm

# What an infeasible trial reports as its value: finite, and worse than any schedule.
INFEASIBLE_VALUE = 1e15
GRID_LIMIT = 200_000
# Every objective a search may name, and its direction. mxu_cycles is maximised: a slower matrix
# unit is the cheaper one, so it trades against cycles.
DIRECTIONS: dict[str, str] = {
    "cycles": "minimize", "tiles_moved": "minimize", "scratchpad_words": "minimize",
    "dma_words_per_cycle": "minimize", "mxu_cycles": "maximize", "words_per_mac": "minimize", "pes": "minimize",
}

Suggest = Callable[[Param], Value]


@dataclass(frozen=True)
class Candidate:
    family: str             # "" for a machine-only candidate (co-design)
    point: Point            # the schedule's parameters
    machine_point: Point    # the machine's searched parameters (empty without a machine space)

    def params(self) -> Point:
        """Everything that identifies the candidate, as Optuna records it."""
        head: Point = {"family": self.family} if self.family else {}
        return {**head, **self.point, **self.machine_point}

    def key(self) -> str:
        return canonical_json(self.params())


@dataclass(frozen=True)
class Entry:
    """One schedule on one machine for one GEMM: what a leaderboard row shows."""

    gemm: Gemm
    machine: dict[str, int]        # the machine record ({} where the family's parameters are its machine)
    family: str | None
    point: Point | None            # the canonical schedule parameters
    metrics: Mapping[str, object]  # what the oracle measured (empty when infeasible)
    extras: Mapping[str, object] = field(default_factory=dict)  # the search's own columns


class Search(Protocol):
    """What the pipeline needs from a search (`Problem`, `Codesign`)."""

    objectives: tuple[str, ...]
    families: tuple[Family, ...]

    def sample(self, suggest: Suggest) -> Candidate: ...
    def key_of(self, params: Mapping[str, object]) -> str | None: ...
    def evaluate(self, candidate: Candidate) -> dict[str, object]: ...
    def seeds(self) -> list[Candidate]: ...
    def grid(self) -> list[Candidate]: ...
    def constraints(self, attrs: Mapping[str, object]) -> dict[str, float]: ...
    def entries(self, attrs: Mapping[str, object]) -> list[Entry]: ...
    def canonical(self, candidate: Candidate) -> Candidate: ...
    def why_not(self, candidate: Candidate) -> str | None: ...


def directions(objectives: Sequence[str]) -> list[str]:
    return [DIRECTIONS[name] for name in objectives]


def worst(name: str) -> float:
    return -INFEASIBLE_VALUE if DIRECTIONS[name] == "maximize" else INFEASIBLE_VALUE


def objective_value(source: Mapping[str, object], name: str) -> float:
    """An objective from a trial's record or a leaderboard row: a measured metric, or a
    parameter of the machine the result was measured on."""
    machine = source.get("machine")
    if not isinstance(machine, Mapping):
        machine = source
    if name in source and source[name] is not None:
        return float(source[name])  # type: ignore[arg-type]
    if name == "scratchpad_words":
        return float(int(machine["slots"]) * int(machine["T"]) ** 2)  # type: ignore[call-overload]
    return float(machine[name])  # type: ignore[arg-type]


def objective_values(attrs: Mapping[str, object], objectives: Sequence[str]) -> float | tuple[float, ...]:
    """Optuna's values; an infeasible candidate gets a finite value worse than any real one."""
    feasible = bool(attrs.get("feasible"))
    values = [objective_value(attrs, name) if feasible else worst(name) for name in objectives]
    return values[0] if len(values) == 1 else tuple(values)


@dataclass(frozen=True)
class Assessment:
    machine: Machine
    violation: float  # 0 when feasible; otherwise how far over the limits

    @property
    def feasible(self) -> bool:
        return self.violation == 0


@dataclass(frozen=True)
class Problem:
    """Schedules for one GEMM on a base machine, optionally with machine parameters searched."""

    shape: Shape
    machine: Machine                      # the base machine (what --slots/--machine say)
    families: tuple[Family, ...]
    machine_space: MachineSpace | None = None
    objectives: tuple[str, ...] = ("cycles",)
    gemm: Gemm | None = None              # its name and weight in a workload

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

    def the_gemm(self) -> Gemm:
        return self.gemm or Gemm(str(self.shape), self.shape, 1.0)

    def sample(self, suggest: Suggest) -> Candidate:
        """Family first, then that family's parameters, then the machine's (define-by-run); the
        family's unused parameters fixed, so equal schedules share one key."""
        family = str(suggest(Param("family", Choice(tuple(f.name for f in self.families)))))
        point: Point = {p.name: suggest(p) for p in self.family(family).params(self.shape, self.machine.T)}
        machine_point: Point = {p.name: suggest(p) for p in self.machine_params()}
        return self.canonical(Candidate(family, point, machine_point))

    def from_params(self, params: Mapping[str, object]) -> Candidate:
        """Rebuild a candidate from a trial's recorded parameters."""
        family = str(params["family"])
        point = {p.name: params[p.name] for p in self.family(family).params(self.shape, self.machine.T)}
        machine_point = {p.name: params[p.name] for p in self.machine_params() if p.name in params}
        return Candidate(family, point, machine_point)  # type: ignore[arg-type]

    def canonical(self, candidate: Candidate) -> Candidate:
        """The candidate with its family's unused parameters fixed (see Family.canonical)."""
        point = self.family(candidate.family).canonical(candidate.point, self.shape, self.machine.T)
        return Candidate(candidate.family, point, candidate.machine_point)

    def key_of(self, params: Mapping[str, object]) -> str | None:
        try:
            return self.canonical(self.from_params(params)).key()
        except KeyError:  # not all parameters sampled yet (a trial stopped while sampling)
            return None

    def machine_for(self, candidate: Candidate) -> Machine:
        return self.machine_space.apply(self.machine, candidate.machine_point) if self.machine_space else self.machine

    def assess(self, candidate: Candidate) -> Assessment:
        """Feasibility from slot and word arithmetic only: nothing is compiled or simulated."""
        machine = self.machine_for(candidate)
        violation = self.family(candidate.family).violation(candidate.point, self.shape, machine)
        if self.machine_space:
            violation += self.machine_space.violation(machine)
        return Assessment(machine, violation)

    def evaluate(self, candidate: Candidate) -> dict[str, object]:
        """The attributes a trial records; an infeasible candidate is never simulated. "point" is
        the canonical candidate: the leaderboard ranks each schedule once."""
        found = self.assess(candidate)
        family = self.family(candidate.family)
        attrs: dict[str, object] = {"feasible": found.feasible, "violation": found.violation}
        machine = family.machine_record(found.machine)
        if machine:  # other oracles carry their machine in their own parameters
            attrs["machine"] = machine
        if found.feasible:
            try:
                attrs.update(family.evaluate(candidate.point, self.shape, found.machine))
            except ScheduleError:
                # The cheap slot count was optimistic: the compiler found the working set too big.
                attrs.update(feasible=False, violation=1.0)
        return {**attrs, "point": candidate.params()}

    def constraints(self, attrs: Mapping[str, object]) -> dict[str, float]:
        # Optuna's constraint API: > 0 is infeasible, graded by how far over the limit.
        return {"slots_over": float(attrs["violation"])}  # type: ignore[arg-type]

    def seeds(self) -> list[Candidate]:
        """The chapter's sweep (and each family's own defaults), on the base machine."""
        machine_point = self.machine_space.seed_point(self.machine) if self.machine_space else {}
        return [Candidate(family.name, point, machine_point)
                for family in self.families for point in family.seed_points(self.shape, self.machine)]

    def grid(self) -> list[Candidate]:
        """Every feasible point of the space (for --sampler grid), the most promising first by the
        families' analytic estimates (the tile model), so a budget smaller than the grid simulates
        the best-looking points; ties keep a fixed order."""
        machine_points = list(grid(self.machine_params())) if self.machine_space else [{}]
        found: list[Candidate] = []
        for family in self.families:
            for point in grid(family.params(self.shape, self.machine.T)):
                for machine_point in machine_points:
                    candidate = Candidate(family.name, point, machine_point)
                    if self.assess(candidate).feasible:
                        found.append(candidate)
                    if len(found) > GRID_LIMIT:
                        raise GridTooLarge(f"the space has more than {GRID_LIMIT} feasible points: use --sampler tpe or random")
        return sorted(found, key=lambda c: (self._estimate(c), c.key()))

    def _estimate(self, candidate: Candidate) -> float:
        value = self.family(candidate.family).estimate(candidate.point, self.shape, self.assess(candidate).machine)
        return float("inf") if value is None else value

    def entries(self, attrs: Mapping[str, object]) -> list[Entry]:
        params = dict(attrs["point"])  # type: ignore[call-overload]
        machine = dict(attrs.get("machine") or {})  # type: ignore[call-overload]
        point = {k: v for k, v in params.items() if k != "family" and k not in machine}
        metrics = attrs if attrs.get("feasible") else {}
        return [Entry(self.the_gemm(), machine, str(params["family"]), point, metrics)]

    def why_not(self, candidate: Candidate) -> str | None:
        """Why `candidate` is not a point of this search (None when it is): for starting points."""
        try:
            family = self.family(candidate.family)
        except KeyError:
            return f"family {candidate.family!r} is not searched here (families: {', '.join(f.name for f in self.families)})"
        domains = {p.name: p.domain for p in family.params(self.shape, self.machine.T)}
        for params, given in ((domains, candidate.point), ({p.name: p.domain for p in self.machine_params()}, candidate.machine_point)):
            if sorted(params) != sorted(given):
                return f"{family.name} takes parameters {', '.join(sorted(params)) or '(none)'}, got {', '.join(sorted(given)) or '(none)'}"
            bad = [f"{k}={given[k]!r}" for k, domain in params.items() if not domain.contains(given[k])]
            if bad:
                return f"{', '.join(bad)} outside the space for {self.shape} on T={self.machine.T}"
        return None


class GridTooLarge(ValueError):
    """--sampler grid on a space with too many feasible points."""

