"""Searches: what one study tunes, pure (no Optuna). A search samples a candidate through a
`suggest` function, grades it against the limits before anything runs, evaluates it once with
its oracle, and names the candidates every study starts from. `Problem` searches schedules
(and optionally machine parameters) for one GEMM; `autotune.search.codesign.Codesign` searches
machines for a whole workload. The run pipeline treats both alike (`Search`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Protocol

from autotune.errors import Infeasible
from autotune.oracles.base import Oracle
from autotune.oracles.capabilities import EnergyAndArea, MachineSpace
from autotune.oracles.measures import AREA, ENERGY, Measure
from autotune.record import Evaluation
from autotune.search.objectives import measures_of, overshoot
from search_spaces.base import Family, canonical_json
from search_spaces.domains import Choice, IntRange, Param, Point, Value, conditional_order, grid
from search_spaces.registry import check_shared_params
from simcore.shape import Shape
from workloads import Gemm

GRID_LIMIT = 200_000
# How a trial's parameters are suggested. "flat": every parameter of the family, in declaration
# order (the samplers tpe, random, grid and nsga2). "conditional": the
# parameters a condition depends on first, and a parameter only where it matters (Param.unless).
ENCODINGS: tuple[str, ...] = ("flat", "conditional")

Suggest = Callable[[Param], Value]


@dataclass(frozen=True)
class Candidate:
    family: str  # "" for a machine-only candidate (co-design)
    point: Point  # the schedule's parameters
    machine_point: Point  # the machine's searched parameters (empty without a machine space)

    def params(self) -> Point:
        """Everything that identifies the candidate, as Optuna records it."""
        head: Point = {"family": self.family} if self.family else {}
        return {**head, **self.point, **self.machine_point}

    def key(self) -> str:
        return canonical_json(self.params())

    def moved(self, part: str, values: Point) -> Candidate:
        """The candidate with its `part` ("point" or "machine_point") replaced by `values`."""
        if part == "point":
            return replace(self, point=values)
        return replace(self, machine_point=values)


@dataclass(frozen=True)
class Entry:
    """One schedule on one machine for one GEMM: what a leaderboard row shows."""

    gemm: Gemm
    machine: dict[str, int]  # the machine record ({} where the family's parameters are its machine)
    family: str | None
    point: Point | None  # the canonical schedule parameters
    metrics: Mapping[str, object]  # what was measured (an infeasible candidate's: what was)
    extras: Mapping[str, object] = field(default_factory=dict)  # the search's own columns


class Search(Protocol):
    """What the pipeline needs from a search (`Problem`, `Codesign`)."""

    @property
    def objectives(self) -> tuple[str, ...]: ...
    @property
    def families(self) -> tuple[Family, ...]: ...
    @property
    def measures(self) -> tuple[Measure, ...]: ...  # the objectives' declarations

    def sample(self, suggest: Suggest) -> Candidate: ...
    def key_of(self, params: Mapping[str, object]) -> str | None: ...
    def from_params(self, params: Mapping[str, object]) -> Candidate: ...
    def neighbours(self, candidate: Candidate) -> list[tuple[int, Candidate]]: ...
    def fits(self, candidate: Candidate) -> bool: ...
    def all_params(self) -> tuple[Param, ...]: ...
    def adopt(
        self, params: Mapping[str, object], shape: Shape, machine: Any
    ) -> Candidate | None: ...
    def evaluate(self, candidate: Candidate) -> Evaluation: ...
    def seeds(self) -> list[Candidate]: ...
    def grid(self) -> list[Candidate]: ...
    def constraints(self, evaluation: Evaluation) -> dict[str, float]: ...
    def entries(self, evaluation: Evaluation) -> list[Entry]: ...
    def canonical(self, candidate: Candidate) -> Candidate: ...
    def why_not(self, candidate: Candidate) -> str | None: ...


@dataclass(frozen=True)
class Assessment:
    machine: Any
    violation: float  # 0 when feasible; otherwise how far over the limits
    limits: Mapping[str, float] = field(default_factory=dict)  # each limit's overshoot
    costs: Mapping[str, float] = field(default_factory=dict)  # what grading computed (area_mm2)

    @property
    def feasible(self) -> bool:
        return self.violation == 0


@dataclass(frozen=True)
class Problem:
    """Schedules for one GEMM on a base machine, optionally with machine parameters searched."""

    shape: Shape
    machine: Any  # the oracle's base machine
    families: tuple[Family, ...]
    oracle: Oracle
    machine_space: MachineSpace | None = None
    objectives: tuple[str, ...] = ("cycles",)
    gemm: Gemm | None = None  # its name and weight in a workload
    encoding: str = "flat"  # how a trial suggests its parameters (ENCODINGS)
    area_budget: float | None = None  # mm2, graded before the candidate runs
    energy_budget: float | None = None  # pJ, graded once it has run

    def __post_init__(self) -> None:
        if self.encoding not in ENCODINGS:
            raise ValueError(f"unknown encoding {self.encoding!r} (known: {', '.join(ENCODINGS)})")
        check_shared_params(self.params_by_family())

    @property
    def measures(self) -> tuple[Measure, ...]:
        return measures_of(self.oracle, self.objectives)

    @property
    def T(self) -> int:
        """The tile edge the families count the shape in."""
        return self.oracle.tile_edge(self.machine)

    def family(self, name: str) -> Family:
        """A family searched here, or one of the oracle's families of imported schedules (whose
        trials are ranked and verified, but never drawn)."""
        try:
            return self.searched(name)
        except KeyError:
            imported = self.oracle.family(name)
            if imported is not None and imported.imported:
                return imported
            raise

    def searched(self, name: str) -> Family:
        """A family this search draws from."""
        for family in self.families:
            if family.name == name:
                return family
        raise KeyError(f"unknown schedule family {name!r}")

    def family_param(self) -> Param:
        return Param("family", Choice(tuple(f.name for f in self.families)))

    def all_params(self) -> tuple[Param, ...]:
        """Every parameter a candidate may suggest: the family, each family's, the machine's."""
        return (
            self.family_param(),
            *(p for f in self.families for p in f.params(self.shape, self.T)),
            *self.machine_params(),
        )

    def params_by_family(self) -> dict[str, tuple[Param, ...]]:
        return {f.name: f.params(self.shape, self.T) for f in self.families}

    def machine_params(self) -> tuple[Param, ...]:
        return self.machine_space.params() if self.machine_space else ()

    def the_gemm(self) -> Gemm:
        return self.gemm or Gemm(str(self.shape), self.shape, 1.0)

    def sample(self, suggest: Suggest) -> Candidate:
        """Family first, then that family's parameters, then the machine's (define-by-run); the
        family's unused parameters fixed, so equal schedules share one key. The conditional
        encoding suggests only the parameters that matter (a rotating window never suggests a
        block's tail), the flat one all of them."""
        family = str(suggest(self.family_param()))
        params = self.family(family).params(self.shape, self.T)
        point: Point = {}
        if self.encoding == "flat":
            point = {p.name: suggest(p) for p in params}
        else:
            for p in conditional_order(params):
                point[p.name] = suggest(p) if p.used(point) else p.unless.fixed  # type: ignore[union-attr]
            point = {p.name: point[p.name] for p in params}
        machine_point: Point = {p.name: suggest(p) for p in self.machine_params()}
        return self.canonical(Candidate(family, point, machine_point))

    def from_params(self, params: Mapping[str, object]) -> Candidate:
        """Rebuild a candidate from a trial's recorded parameters (a parameter the conditional
        encoding did not suggest takes its fixed value)."""
        family = str(params["family"])
        declared = self.family(family).params(self.shape, self.T)
        point: Point = {}
        for p in conditional_order(declared):
            point[p.name] = params[p.name] if p.name in params or p.used(point) else p.unless.fixed  # type: ignore[assignment, union-attr]
        ordered = {p.name: point[p.name] for p in declared}
        machine_point = {p.name: params[p.name] for p in self.machine_params() if p.name in params}
        return Candidate(family, ordered, machine_point)  # type: ignore[arg-type]

    def neighbours(self, candidate: Candidate) -> list[tuple[int, Candidate]]:
        """The canonical candidates one parameter away, each with its distance class (see
        Domain.nearby), in parameter order; a parameter that does not matter is not moved, and
        a move that builds a schedule already listed (or the candidate itself) is left out."""
        params = self.family(candidate.family).params(self.shape, self.T)
        seen, found = {candidate.key()}, []
        for part, space in (("point", params), ("machine_point", self.machine_params())):
            given: Point = getattr(candidate, part)
            for p in space:
                if not p.used(given):
                    continue
                for scale, value in p.domain.nearby(given[p.name]):
                    moved = self.canonical(candidate.moved(part, {**given, p.name: value}))
                    if moved.key() not in seen:
                        seen.add(moved.key())
                        found.append((scale, moved))
        return found

    def fits(self, candidate: Candidate) -> bool:
        """Whether the candidate fits its machine, from slot arithmetic alone."""
        return self.assess(candidate).feasible

    def adopt(self, params: Mapping[str, object], shape: Shape, machine: Any) -> Candidate | None:
        """A schedule tuned for another product (`shape` on `machine`) as a candidate here, or
        None when its family is not searched or it does not fit: an integer parameter at the top
        of its range there (a block spanning the whole matrix) goes to the top of its range here,
        any other is clipped into it; the machine's searched parameters start at the base's."""
        try:
            family = self.searched(str(params.get("family")))
        except KeyError:
            return None
        theirs = {p.name: p.domain for p in family.params(shape, self.oracle.tile_edge(machine))}
        point: Point = {}
        for p in family.params(self.shape, self.T):
            value = params.get(p.name)
            there = theirs.get(p.name)
            if (
                isinstance(p.domain, IntRange)
                and isinstance(there, IntRange)
                and isinstance(value, int)
                and not isinstance(value, bool)
            ):
                value = p.domain.clip(p.domain.high if value >= there.high else value)
            if value is None or not p.domain.contains(value):  # type: ignore[arg-type]
                return None
            point[p.name] = value  # type: ignore[assignment]
        machine_point = self.machine_space.seed_point(self.machine) if self.machine_space else {}
        candidate = self.canonical(Candidate(family.name, point, machine_point))
        return candidate if self.fits(candidate) else None

    def canonical(self, candidate: Candidate) -> Candidate:
        """The candidate with its family's unused parameters fixed (see Family.canonical)."""
        point = self.family(candidate.family).canonical(candidate.point, self.shape, self.T)
        return Candidate(candidate.family, point, candidate.machine_point)

    def key_of(self, params: Mapping[str, object]) -> str | None:
        try:
            return self.canonical(self.from_params(params)).key()
        except KeyError:  # not all parameters sampled yet (a trial stopped while sampling)
            return None

    def machine_for(self, candidate: Candidate) -> Any:
        return (
            self.machine_space.apply(self.machine, candidate.machine_point)
            if self.machine_space
            else self.machine
        )

    def assess(self, candidate: Candidate) -> Assessment:
        """Feasibility from slot and word arithmetic and the area: nothing is compiled or simulated."""
        machine = self.machine_for(candidate)
        family = self.family(candidate.family)
        violation = family.violation(candidate.point, self.shape, machine)
        if self.machine_space:
            violation += self.machine_space.violation(machine)
        limits = {limit_key(family): violation}
        costs: dict[str, float] = {}
        if self.area_budget is not None:
            costing = self.oracle.capability(EnergyAndArea)
            area = (
                costing.area_mm2(family, candidate.point, self.shape, machine) if costing else None
            )
            if area is not None:
                costs[AREA.key] = float(area)
            limits[f"{AREA.name}_over"] = overshoot(float(area or 0.0), self.area_budget)
        return Assessment(machine, sum(limits.values()), limits, costs)

    @property
    def budgeted(self) -> bool:
        return self.area_budget is not None or self.energy_budget is not None

    def evaluate(self, candidate: Candidate) -> Evaluation:
        """What a trial records; an infeasible candidate is never simulated. The point is the
        canonical candidate: the leaderboard ranks each schedule once. With budgets the record
        keeps each limit's overshoot (`constraints`); the energy budget is graded after the run.
        A candidate over a limit keeps what was computed for it: the area its grading found,
        or everything a run over the energy budget measured."""
        found = self.assess(candidate)
        machine = self.oracle.machine_record(found.machine)  # {}: the point is the machine
        limits = dict(found.limits)
        metrics: dict[str, object] = dict(found.costs)
        timing: str | None = None
        if found.feasible:
            family = self.family(candidate.family)
            try:
                metrics = dict(
                    self.oracle.evaluate(family, candidate.point, self.shape, found.machine)
                )
                timing = str(metrics.pop("timing", "full"))
            except Infeasible as exc:  # it does not fit after all, or is too costly to time
                limits[f"{exc.limit}_over"] = exc.over_by
        if self.energy_budget is not None:
            energy = metrics.get(ENERGY.key)
            # A candidate that did not run has no energy: 0 here, infeasible by another limit.
            over = 0.0 if energy is None else overshoot(float(energy), self.energy_budget)  # type: ignore[arg-type]
            limits[f"{ENERGY.name}_over"] = over
        violation = sum(limits.values())
        if self.budgeted:
            metrics["constraints"] = limits
        return Evaluation(violation == 0, violation, candidate.params(), machine, metrics, timing)

    def constraints(self, evaluation: Evaluation) -> dict[str, float]:
        # Optuna's constraint API: > 0 is infeasible, graded by how far over the limit. With
        # budgets, each limit is its own constraint.
        limits = evaluation.metrics.get("constraints")
        if isinstance(limits, Mapping):
            return {name: float(value) for name, value in limits.items()}
        # Without budgets a record keeps no limits: its one constraint is its family's limit
        # (a record written before limits were named so reads the same way).
        try:
            key = limit_key(self.family(str(evaluation.point.get("family"))))
        except KeyError:  # a family no longer known: its limit by the base's name
            key = f"{Family.limit}_over"
        return {key: evaluation.violation}

    def seeds(self) -> list[Candidate]:
        """The chapter's sweep (and each family's own defaults), on the base machine."""
        machine_point = self.machine_space.seed_point(self.machine) if self.machine_space else {}
        return [
            Candidate(family.name, point, machine_point)
            for family in self.families
            for point in family.seed_points(self.shape, self.machine)
        ]

    def grid(self) -> list[Candidate]:
        """Every feasible point of the space (for --sampler grid), the most promising first by the
        families' analytic estimates (the tile model), so a budget smaller than the grid simulates
        the best-looking points; ties keep a fixed order."""
        machine_points = list(grid(self.machine_params())) if self.machine_space else [{}]
        found: list[Candidate] = []
        for family in self.families:
            for point in grid(family.params(self.shape, self.T)):
                for machine_point in machine_points:
                    candidate = Candidate(family.name, point, machine_point)
                    if self.assess(candidate).feasible:
                        found.append(candidate)
                    if len(found) > GRID_LIMIT:
                        raise GridTooLarge(f"the space has more than {GRID_LIMIT} feasible points")
        return sorted(found, key=lambda c: (self._estimate(c), c.key()))

    def _estimate(self, candidate: Candidate) -> float:
        value = self.family(candidate.family).estimate(
            candidate.point, self.shape, self.assess(candidate).machine
        )
        return float("inf") if value is None else value

    def entries(self, evaluation: Evaluation) -> list[Entry]:
        params, machine = dict(evaluation.point), dict(evaluation.machine)
        point = {k: v for k, v in params.items() if k != "family" and k not in machine}
        metrics = dict(evaluation.metrics)  # an infeasible candidate's too: what was computed
        limits = evaluation.metrics.get("constraints")
        extras = (
            {"constraints_json": json.dumps(limits, sort_keys=True)}
            if isinstance(limits, Mapping)
            else {}
        )
        return [Entry(self.the_gemm(), machine, str(params["family"]), point, metrics, extras)]

    def why_not(self, candidate: Candidate) -> str | None:
        """Why `candidate` is not a point of this search (None when it is): for starting points."""
        try:
            family = self.searched(candidate.family)
        except KeyError:
            return f"family {candidate.family!r} is not searched here (families: {', '.join(f.name for f in self.families)})"
        domains = {p.name: p.domain for p in family.params(self.shape, self.T)}
        for params, given in (
            (domains, candidate.point),
            ({p.name: p.domain for p in self.machine_params()}, candidate.machine_point),
        ):
            if sorted(params) != sorted(given):
                return f"{family.name} takes parameters {', '.join(sorted(params)) or '(none)'}, got {', '.join(sorted(given)) or '(none)'}"
            bad = [
                f"{k}={given[k]!r}" for k, domain in params.items() if not domain.contains(given[k])
            ]
            if bad:
                return f"{', '.join(bad)} outside the space for {self.shape} on T={self.T}"
        return None


def limit_key(family: Family) -> str:
    """The constraint of the limit a family grades (`Family.limit`): `slots_over`, `pe_over`."""
    return f"{family.limit}_over"


class GridTooLarge(ValueError):
    """A grid of a space with too many feasible points to enumerate."""
