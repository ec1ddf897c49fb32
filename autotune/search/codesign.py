"""Co-design: a search over an oracle's machine parameters for a whole workload (a `Search`, run
by the same pipeline as schedule tuning), for an oracle with the MachineSearch capability.

For each machine the inner search is the oracle's fixed portfolio per GEMM
(`MachineSearch.best_schedules`), fastest per GEMM kept; the workload's cycles and energy are
the weighted totals of those schedules, its area the machine's. Budgets are Optuna constraints (> 0 is infeasible, graded by
how far over): an infeasible machine is never simulated, except that the energy budget is
graded once the machine has run."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Mapping, cast

from autotune.oracles.base import Oracle
from autotune.oracles.capabilities import (
    EnergyAndArea,
    MachineSearch,
    MachineSettings,
    MachineSpace,
)
from autotune.oracles.measures import AREA, EDP, ENERGY, ENERGY_PER_MAC, MACS, Measure
from autotune.record import Evaluation
from autotune.search.objectives import measures_of, overshoot
from autotune.search.problem import Candidate, Entry, Suggest
from search_spaces.base import Family, canonical_json
from search_spaces.domains import Param, Point, grid
from simcore.shape import Shape
from workloads import Workload

_SHAPE_KEYS = frozenset(
    {"name", "shape", "weight", "family", "params_json", "chapter_cycles", "chapter_params_json"}
)


def machine_value(row: Mapping[str, object], measure: Measure) -> float:
    """An objective of a co-design row's machine: the workload's total (a row's own columns are
    its GEMM's), or the machine's own."""
    column = measure.total_column
    total = row.get(column) if column else None
    return float(total) if total is not None else measure.value(row)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Codesign:
    workload: Workload
    base: Any  # the oracle's base machine
    families: tuple[Family, ...]
    space: MachineSpace
    objectives: tuple[str, ...]
    oracle: Oracle
    max_dma_words_per_cycle: int | None = None
    pe_budget: int | None = None  # most MACs per cycle (the oracle's machine_limits)
    area_budget: float | None = None  # mm2 of the machine, graded before it runs
    energy_budget: float | None = None  # pJ of the workload, graded once the machine has run

    @property
    def searcher(self) -> MachineSearch:
        found = self.oracle.capability(MachineSearch)
        if found is None:
            raise TypeError(f"the {self.oracle.name} oracle searches no machines")
        return found

    @property
    def settings(self) -> MachineSettings:
        return MachineSettings(
            max_dma_words_per_cycle=self.max_dma_words_per_cycle,
            pe_budget=self.pe_budget,
            area_budget=self.area_budget,
        )

    def area_of(self, machine: Any) -> float | None:
        """The machine's area, for an oracle that costs it."""
        costing = self.oracle.capability(EnergyAndArea)
        return costing.machine_area_mm2(machine) if costing is not None else None

    @property
    def measures(self) -> tuple[Measure, ...]:
        return measures_of(self.oracle, self.objectives)

    def machine(self, point: Mapping[str, object]) -> Any:
        return self.space.apply(self.base, cast(Point, dict(point)))

    def sample(self, suggest: Suggest) -> Candidate:
        return Candidate("", {}, {p.name: suggest(p) for p in self.space.params()})

    def key_of(self, params: Mapping[str, object]) -> str | None:
        if any(p.name not in params for p in self.space.params()):
            return None  # not all parameters sampled yet
        return canonical_json(self.machine(params).as_dict())

    def from_params(self, params: Mapping[str, object]) -> Candidate:
        return Candidate("", {}, {p.name: params[p.name] for p in self.space.params()})  # type: ignore[misc]

    def all_params(self) -> tuple[Param, ...]:
        return self.space.params()

    def neighbours(self, candidate: Candidate) -> list[tuple[int, Candidate]]:
        """Machines one searched parameter away, nearest moves first within each parameter."""
        point = candidate.machine_point
        return [
            (scale, Candidate("", {}, {**point, p.name: value}))
            for p in self.space.params()
            for scale, value in p.domain.nearby(point[p.name])
        ]

    def fits(self, candidate: Candidate) -> bool:
        machine = self.machine(candidate.machine_point)
        return sum(self.limits(machine, self.graded(machine)).values()) == 0

    def adopt(self, params: Mapping[str, object], shape: Shape, machine: Any) -> Candidate | None:
        return (
            None  # a co-design searches machines: no schedule of another study is a starting point
        )

    def seeds(self) -> list[Candidate]:
        """The base machine (clipped into the ranges), so the chapter's machine is a trial."""
        return [Candidate("", {}, self.space.seed_point(self.base))]

    def grid(self) -> list[Candidate]:
        return [Candidate("", {}, point) for point in grid(self.space.params())]

    def canonical(self, candidate: Candidate) -> Candidate:
        return candidate

    def why_not(self, candidate: Candidate) -> str | None:
        return "a co-design searches machines for a whole workload: a single schedule is no starting point"

    def constraints(self, evaluation: Evaluation) -> dict[str, float]:
        return {
            name: float(value) for name, value in dict(evaluation.metrics["constraints"]).items()
        }

    def limits(self, machine: Any, graded: Mapping[str, float]) -> dict[str, float]:
        """Each budget's overshoot, relative (0 when within it); `graded` is `graded(machine)`."""
        found = {f"{self.space.limit}_over": self.space.violation(machine)}
        found.update(self.searcher.machine_limits(machine, self.settings))
        if self.area_budget is not None:
            found[f"{AREA.name}_over"] = overshoot(graded.get(AREA.key, 0.0), self.area_budget)
        if self.energy_budget is not None:
            found[f"{ENERGY.name}_over"] = 0.0  # known once the machine has run (evaluate)
        return found

    def graded(self, machine: Any) -> dict[str, float]:
        """What grading the budgets computes before the machine runs: its area, under an area
        budget (a machine over a limit keeps it in its record)."""
        area = self.area_of(machine) if self.area_budget is not None else None
        return {} if area is None else {AREA.key: float(area)}

    def evaluate(self, candidate: Candidate) -> Evaluation:
        """A trial's record: the constraints and, for a machine that ran, each GEMM's best (kept
        for one over the energy budget, as its area is for one over the area budget)."""
        machine = self.machine(candidate.machine_point)
        graded = self.graded(machine)
        limits = self.limits(machine, graded)
        violation = sum(limits.values())
        record = machine.as_dict()
        if violation > 0:
            kept = {"constraints": limits, **graded}
            return Evaluation(False, violation, candidate.params(), record, kept)
        shapes = []
        for gemm in self.workload.gemms:
            top, chapter = self.searcher.best_schedules(self.families, gemm.shape, machine)
            if top is None:
                return Evaluation(
                    False,
                    1.0,
                    candidate.params(),
                    record,
                    {"constraints": limits, "no_schedule": gemm.name, **graded},
                )
            family, point, found = top
            metrics = {k: v for k, v in found.items() if k != "slots_needed"}
            shapes.append(
                {
                    "name": gemm.name,
                    "shape": str(gemm.shape),
                    "weight": gemm.weight,
                    "family": family,
                    "params_json": canonical_json(point),
                    **metrics,
                    "chapter_cycles": chapter[2]["cycles"] if chapter else None,
                    "chapter_params_json": canonical_json({"family": chapter[0], **chapter[1]})
                    if chapter
                    else None,
                }
            )
        total = sum(s["weight"] * s["cycles"] for s in shapes)  # type: ignore[operator]
        chapter_total = (
            sum(s["weight"] * s["chapter_cycles"] for s in shapes)  # type: ignore[operator]
            if all(s["chapter_cycles"] is not None for s in shapes)
            else None
        )
        energy = self.energy(machine, shapes, total)
        if self.energy_budget is not None:
            limits[f"{ENERGY.name}_over"] = overshoot(
                float(energy.get(ENERGY.key, 0.0)), self.energy_budget
            )
        violation = sum(limits.values())  # the energy's alone: every other limit is met
        return Evaluation(
            violation == 0,
            violation,
            candidate.params(),
            record,
            {
                "constraints": limits,
                "cycles": total,
                "chapter_cycles": chapter_total,
                **energy,
                "shapes": shapes,
            },
            "full",
        )

    def energy(
        self, machine: Any, shapes: list[dict[str, object]], cycles: float
    ) -> dict[str, float]:
        """The workload's energy (weighted over its GEMMs' schedules), EDP and the machine's area;
        empty for an oracle that does not cost them."""
        if not shapes or any(s.get(ENERGY.key) is None for s in shapes):
            return {}
        energy = math.fsum(float(s["weight"]) * float(s[ENERGY.key]) for s in shapes)  # type: ignore[arg-type]
        macs = math.fsum(float(s["weight"]) * float(s.get(MACS.key) or 0) for s in shapes)  # type: ignore[arg-type]
        found = {
            ENERGY.key: energy,
            EDP.key: energy * cycles,  # the product of the workload's totals (EDP.of)
            ENERGY_PER_MAC.key: energy / macs if macs else 0.0,
        }
        area = self.area_of(machine)
        return {**found, AREA.key: float(area)} if area is not None else found

    def entries(self, evaluation: Evaluation) -> list[Entry]:
        """One entry per GEMM: its best schedule on the trial's machine."""
        attrs = dict(evaluation.metrics)
        machine = self.oracle.machine_from_record(evaluation.machine)
        total, chapter_total = attrs.get("cycles"), attrs.get("chapter_cycles")
        common = {
            **self.searcher.machine_columns(machine),
            "workload": self.workload.name,
            "total_cycles": total,
            "chapter_total_cycles": chapter_total,
            "ratio_to_chapter_total": total / chapter_total if total and chapter_total else None,  # type: ignore[operator]
            str(ENERGY.total_column): attrs.get(ENERGY.key),
            str(EDP.total_column): attrs.get(EDP.key),
            "constraints_json": json.dumps(attrs["constraints"], sort_keys=True),
        }
        by_name = {s["name"]: s for s in attrs.get("shapes", [])}  # type: ignore[attr-defined]
        # A machine that never ran keeps, on each GEMM's row, the area its grading computed.
        graded = {AREA.key: attrs[AREA.key]} if AREA.key in attrs else {}
        found = []
        for gemm in self.workload.gemms:
            shape = by_name.get(gemm.name)
            extras = {**common, "shape": str(gemm.shape)}
            if shape is None:
                found.append(Entry(gemm, machine.as_dict(), None, None, graded, extras))
                continue
            chapter = shape["chapter_cycles"]
            extras.update(
                chapter_best_cycles=chapter,
                chapter_best_schedule=shape["chapter_params_json"],
                ratio_to_chapter_best=shape["cycles"] / chapter if chapter else None,
            )
            metrics = {k: v for k, v in shape.items() if k not in _SHAPE_KEYS}
            found.append(
                Entry(
                    gemm,
                    machine.as_dict(),
                    str(shape["family"]),
                    json.loads(shape["params_json"]),
                    metrics,
                    extras,
                )
            )
        return found
