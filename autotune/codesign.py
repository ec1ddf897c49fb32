"""Co-design: an outer Optuna study over GA-1 machine parameters for a whole workload.

For each machine the inner search is a fixed portfolio per GEMM (search_spaces.portfolio),
best per GEMM kept; the workload's cycles are the weighted total. Budgets are Optuna
constraints (> 0 is infeasible, graded by how far over), and an infeasible machine is never
simulated. Pure helpers here; the command side is autotune.workload_tune."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

import optuna
from optuna.trial import TrialState

from simcore.ga1.machine import MACHINE_KEYS, Machine

from search_spaces.base import Family, canonical_json
from search_spaces.machine import MachineSpace
from search_spaces.portfolio import best, evaluate_portfolio
from search_spaces.workload import Workload

from autotune.objective import RESULT_ATTR, _suggest
from autotune.problem import INFEASIBLE_VALUE

# Objectives a co-design may minimise; mxu_cycles is maximised (a slower unit is cheaper).
OBJECTIVES: tuple[str, ...] = ("cycles", "scratchpad_words", "dma_words_per_cycle", "mxu_cycles")
MAXIMISED = frozenset({"mxu_cycles"})


@dataclass(frozen=True)
class Codesign:
    workload: Workload
    base: Machine
    families: tuple[Family, ...]
    space: MachineSpace
    objectives: tuple[str, ...]
    max_dma_words_per_cycle: int | None = None
    pe_budget: int | None = None   # most MACs per cycle, T^3 / mxu_cycles (see macs_per_cycle)

    def directions(self) -> list[str]:
        return ["maximize" if name in MAXIMISED else "minimize" for name in self.objectives]


def macs_per_cycle(machine: Machine) -> float:
    """The matrix unit's peak rate, T^3 / mxu_cycles: the PEs it needs at least (one MAC per PE
    per cycle). For an R x C systolic tie (simcore.systolic.tie) with R and C dividing T this is
    exactly R x C."""
    return machine.T**3 / machine.mxu_cycles


def constraints(problem: Codesign, machine: Machine) -> dict[str, float]:
    """Each budget's overshoot, relative (0 when within it); all are Optuna constraints."""
    found = {"scratchpad_over": problem.space.violation(machine)}
    if problem.max_dma_words_per_cycle is not None:
        found["dma_over"] = max(0.0, machine.dma_words_per_cycle / problem.max_dma_words_per_cycle - 1)
    if problem.pe_budget is not None:
        found["pe_over"] = max(0.0, macs_per_cycle(machine) / problem.pe_budget - 1)
    return found


def evaluate_machine(problem: Codesign, machine: Machine) -> dict[str, object]:
    """A trial's record: the constraints and, for a feasible machine, each GEMM's best."""
    limits = constraints(problem, machine)
    attrs: dict[str, object] = {"machine": machine.as_dict(), "constraints": limits,
                                "violation": sum(limits.values())}
    if attrs["violation"] > 0:
        return {**attrs, "feasible": False}
    shapes = []
    for gemm in problem.workload.gemms:
        outcomes = evaluate_portfolio(problem.families, gemm.shape, machine)
        top, chapter = best(outcomes), best(outcomes, chapter_only=True)
        if top is None:
            return {**attrs, "feasible": False, "violation": 1.0, "no_schedule": gemm.name}
        metrics = {k: v for k, v in top.metrics.items() if k != "slots_needed"}
        shapes.append({"name": gemm.name, "shape": str(gemm.shape), "weight": gemm.weight,
                       "family": top.entry.family, "params_json": canonical_json(top.entry.point), **metrics,
                       "chapter_cycles": chapter.cycles if chapter else None,
                       "chapter_params_json": canonical_json({"family": chapter.entry.family, **chapter.entry.point}) if chapter else None})
    total = sum(s["weight"] * s["cycles"] for s in shapes)  # type: ignore[operator]
    chapter_total = (sum(s["weight"] * s["chapter_cycles"] for s in shapes)  # type: ignore[operator]
                     if all(s["chapter_cycles"] is not None for s in shapes) else None)
    return {**attrs, "feasible": True, "cycles": total, "chapter_cycles": chapter_total, "shapes": shapes}


def objective_values(problem: Codesign, attrs: dict[str, object]) -> tuple[float, ...]:
    machine = Machine(**attrs["machine"])  # type: ignore[arg-type]
    values = []
    for name in problem.objectives:
        if name == "cycles":
            values.append(float(attrs["cycles"]) if attrs["feasible"] else INFEASIBLE_VALUE)  # type: ignore[arg-type]
        elif name == "scratchpad_words":
            values.append(float(machine.scratchpad_words))
        else:
            values.append(float(getattr(machine, name)))
    return tuple(values)


class MachineObjective:
    """One trial = one machine; a repeated machine is answered from the cache (which starts
    with the study's completed trials, so a resumed study re-simulates nothing)."""

    def __init__(self, problem: Codesign, study: optuna.Study) -> None:
        self.problem = problem
        self.cache: dict[str, tuple[dict[str, object], int]] = {}
        for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            if RESULT_ATTR in trial.user_attrs:
                attrs = trial.user_attrs[RESULT_ATTR]
                self.cache.setdefault(canonical_json(attrs["machine"]), (attrs, trial.number))

    def __call__(self, trial: optuna.Trial) -> tuple[float, ...]:
        point = {p.name: _suggest(trial, p) for p in self.problem.space.params()}
        machine = self.problem.space.apply(self.problem.base, point)  # type: ignore[arg-type]
        key = canonical_json(machine.as_dict())
        if key in self.cache:
            attrs, source = self.cache[key]
            attrs = {**attrs, "duplicate_of": source}
        else:
            attrs = evaluate_machine(self.problem, machine)
            self.cache[key] = (attrs, trial.number)
        trial.set_user_attr(RESULT_ATTR, attrs)
        for name, value in dict(attrs["constraints"]).items():  # type: ignore[call-overload]
            trial.set_constraint(name, float(value))
        return objective_values(self.problem, attrs)


def machine_records(study: optuna.Study) -> list[tuple[int, dict[str, object]]]:
    """(trial number, record) per distinct machine, the earliest trial that evaluated it."""
    found: dict[str, tuple[int, dict[str, object]]] = {}
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        attrs = trial.user_attrs.get(RESULT_ATTR)
        if attrs:
            found.setdefault(canonical_json(attrs["machine"]), (trial.number, attrs))
    return list(found.values())


def pareto_flags(problem: Codesign, records: Sequence[dict[str, object]]) -> list[bool]:
    """Non-dominated feasible machines (directions respected)."""
    signs = [-1.0 if name in MAXIMISED else 1.0 for name in problem.objectives]
    values = [tuple(s * v for s, v in zip(signs, objective_values(problem, r))) if r["feasible"] else None for r in records]
    flags = []
    for mine in values:
        flags.append(mine is not None and not any(
            other is not None and other != mine and all(o <= m for o, m in zip(other, mine)) for other in values))
    return flags


def sort_key(problem: Codesign, record: dict[str, object]) -> tuple:
    """Feasible first, by the objectives (directions respected), then the machine."""
    signs = [-1.0 if name in MAXIMISED else 1.0 for name in problem.objectives]
    scores = tuple(s * v for s, v in zip(signs, objective_values(problem, record)))
    feasible = bool(record["feasible"])
    return (not feasible, scores if feasible else (float(record["violation"]),), canonical_json(record["machine"]))


def machine_rows(problem: Codesign, trial: int, record: dict[str, object], pareto: bool) -> list[dict[str, object]]:
    """Leaderboard rows for one machine: one per GEMM (its best schedule)."""
    machine = Machine(**record["machine"])  # type: ignore[arg-type]
    common: dict[str, object] = {name: getattr(machine, name) for name in MACHINE_KEYS}
    common.update(scratchpad_words=machine.scratchpad_words, macs_per_cycle=macs_per_cycle(machine),
                  machine_json=canonical_json(machine.as_dict()))
    total, chapter_total = record.get("cycles"), record.get("chapter_cycles")
    by_name = {s["name"]: s for s in record.get("shapes", [])}  # type: ignore[union-attr]
    rows = []
    for gemm in problem.workload.gemms:
        found = by_name.get(gemm.name)
        row = {"m": gemm.shape.m, "k": gemm.shape.k, "n": gemm.shape.n, **common, "gemm": gemm.name,
               "shape": str(gemm.shape), "weight": gemm.weight}
        if found:
            cycles, bound, chapter = found["cycles"], found.get("lower_bound"), found["chapter_cycles"]
            row.update(family=found["family"], params_json=found["params_json"], cycles=cycles,
                       weighted_cycles=gemm.weight * cycles, tiles_moved=found.get("tiles_moved"),
                       mxu_util=found.get("mxu_util"), dma_busy=found.get("dma_busy"), lower_bound=bound,
                       ratio_to_bound=cycles / bound if bound else None, chapter_best_cycles=chapter,
                       chapter_best_schedule=found["chapter_params_json"],
                       ratio_to_chapter_best=cycles / chapter if chapter else None)
        else:
            row.update(family=None, params_json=None, cycles=None, weighted_cycles=None, tiles_moved=None,
                       mxu_util=None, dma_busy=None, lower_bound=None, ratio_to_bound=None,
                       chapter_best_cycles=None, chapter_best_schedule=None, ratio_to_chapter_best=None)
        row.update(total_cycles=total, chapter_total_cycles=chapter_total,
                   ratio_to_chapter_total=total / chapter_total if total and chapter_total else None,
                   constraints_json=json.dumps(record["constraints"], sort_keys=True),
                   feasible=bool(record["feasible"]), violation=float(record["violation"]),  # type: ignore[arg-type]
                   pareto=pareto, verified=None, trial=trial)
        rows.append(row)
    return rows
