"""Leaderboards: a study's distinct trials ranked (one sort, one Pareto front), verified, and
laid out as rows. A row is one schedule on one machine for one GEMM; a single product is a
workload of one GEMM, so tuning, workloads and co-design share these columns."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import optuna
import pandas as pd
from optuna.trial import TrialState

from simcore.ga1.machine import MACHINE_KEYS, Machine
from simcore.shape import Shape

from search_spaces.base import Family, canonical_json
from search_spaces.registry import SpaceError, find_family

from autotune import __version__
from autotune.run.objective import RESULT_ATTR, RUN_ATTR
from autotune.search.problem import DIRECTIONS, Entry, Search, objective_value

# Metrics first in this order when present; any other metric a family reports follows.
METRICS: tuple[str, ...] = ("cycles", "tiles_moved", "loads", "stores", "mxu_util", "dma_busy", "words_per_mac",
                            "mac_utilization", "lower_bound")
NOT_METRICS = frozenset({"feasible", "violation", "machine", "slots_needed", "duplicate_of", "point"})
NONE = "none"  # the verification column of an entry nobody checked


@dataclass(frozen=True)
class RunInfo:
    study: str
    sampler: str
    seed: int
    shape: Shape
    base_machine: Machine
    objectives: tuple[str, ...] = ("cycles",)


@dataclass
class Record:
    """One distinct candidate: the earliest completed trial that evaluated it."""

    trial: int
    attrs: dict[str, object]
    run: dict[str, object]
    completed: str | None
    machine_json: str
    params_json: str
    values: tuple[float, ...] | None  # the objectives, all minimised (signs applied); None when infeasible
    pareto: bool = False
    entries: list[Entry] = field(default_factory=list)

    def sort_key(self) -> tuple:
        """Feasible first, by the objectives in order; ties by the canonical machine and
        parameters, then the trial number (so equal runs rank identically)."""
        scores = self.values if self.values is not None else (float(self.attrs.get("violation", 0.0)),)  # type: ignore[arg-type]
        return (self.values is None, scores, self.machine_json, self.params_json, self.trial)


def records(study: optuna.Study, search: Search) -> list[Record]:
    """The study's distinct candidates, ranked, the Pareto front marked."""
    found: dict[str, Record] = {}
    signs = [-1.0 if DIRECTIONS[name] == "maximize" else 1.0 for name in search.objectives]
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        attrs = trial.user_attrs.get(RESULT_ATTR)
        key = search.key_of(trial.params) if attrs else None
        if key is None or key in found:
            continue
        machine = attrs.get("machine") or {}
        point = attrs.get("point") or trial.params if "family" in trial.params else {}
        schedule = {k: v for k, v in point.items() if k not in machine or k == "family"}
        values = (tuple(s * objective_value(attrs, name) for s, name in zip(signs, search.objectives))
                  if attrs.get("feasible") else None)
        found[key] = Record(trial.number, dict(attrs), dict(trial.user_attrs.get(RUN_ATTR) or {}),
                            trial.datetime_complete.isoformat() if trial.datetime_complete else None,
                            canonical_json(machine), canonical_json(schedule) if schedule else "", values)
    ranked = rank(list(found.values()))
    for record in ranked:
        record.entries = search.entries(record.attrs)
    return ranked


def rank(found: list[Record]) -> list[Record]:
    """The one sort (Record.sort_key) and the one Pareto front of every leaderboard."""
    ranked = sorted(found, key=Record.sort_key)
    for record, flag in zip(ranked, pareto_flags([r.values for r in ranked])):
        record.pareto = flag
    return ranked


def pareto_flags(values: Sequence[tuple[float, ...] | None]) -> list[bool]:
    """Flag the feasible points no other feasible point dominates (all minimised)."""
    feasible = [v for v in values if v is not None]
    return [v is not None and not any(o != v and all(a <= b for a, b in zip(o, v)) for o in feasible) for v in values]


def rows_of(ranked: Sequence[Record], info: RunInfo, families: Iterable[Family]) -> list[dict[str, object]]:
    """One row per entry (one per record; one per GEMM of a co-design machine), in rank order."""
    param_names = sorted({p.name for f in families for p in f.params(info.shape, info.base_machine.T)}
                         | {k for r in ranked for e in r.entries for k in (e.point or {})})
    metric_names = list(METRICS)
    for record in ranked:
        for entry in record.entries:
            metric_names += [k for k in entry.metrics if k not in NOT_METRICS and k not in metric_names]
    present = {k for r in ranked for e in r.entries for k in e.metrics}
    metric_names = [k for k in metric_names if k in present]
    return [_row(entry, record, info, param_names, metric_names) for record in ranked for entry in record.entries]


def _row(entry: Entry, record: Record, info: RunInfo, param_names: Sequence[str], metric_names: Sequence[str]) -> dict[str, object]:
    shape, point = entry.gemm.shape, entry.point or {}
    row: dict[str, object] = {"m": shape.m, "k": shape.k, "n": shape.n, "gemm": entry.gemm.name, "weight": entry.gemm.weight}
    if entry.machine:
        row.update({name: entry.machine[name] for name in MACHINE_KEYS})
    row["family"] = entry.family
    row.update({name: point.get(name) for name in param_names})
    row["params_json"] = canonical_json({"family": entry.family, **point}) if entry.family else None
    row["machine_json"] = canonical_json(entry.machine)
    feasible = bool(entry.metrics)
    row.update({name: entry.metrics.get(name) if feasible else None for name in metric_names})
    cycles, bound = entry.metrics.get("cycles"), entry.metrics.get("lower_bound")
    row["weighted_cycles"] = entry.gemm.weight * cycles if cycles is not None else None  # type: ignore[operator]
    row["ratio_to_bound"] = cycles / bound if cycles is not None and bound else None  # type: ignore[operator]
    row.update(chapter_best_cycles=None, ratio_to_chapter_best=None, chapter_best_schedule=None)
    row.update(entry.extras)
    row.update(feasible=bool(record.attrs.get("feasible")) and feasible, violation=float(record.attrs.get("violation", 0.0)),  # type: ignore[arg-type]
               slots_needed=entry.metrics.get("slots_needed"), pareto=record.pareto, verified=None, verification=NONE,
               verification_detail=None, trial=record.trial, sampler=record.run.get("sampler", info.sampler),
               seed=record.run.get("seed", info.seed), study=info.study, timestamp=record.completed,
               autotune_version=record.run.get("autotune_version", __version__))
    return row


def family_of(name: str, families: Iterable[Family] = ()) -> Family | None:
    """The family by name: the run's own first (its budgets), else the registry's."""
    for family in families:
        if family.name == name:
            return family
    try:
        return find_family(name)
    except SpaceError:
        return None


def machine_of(row: Mapping[str, object], family: Family | None = None) -> Machine:
    """The machine a row's result was measured on."""
    record = json.loads(str(row.get("machine_json") or "{}"))
    return family.machine_from_record(record) if family else Machine(**record) if record else Machine()


def schedule_point(row: Mapping[str, object]) -> dict[str, object]:
    point = json.loads(str(row["params_json"]))
    point.pop("family", None)
    return point


def annotate(rows: list[dict[str, object]], ranked: Sequence[Record], info: RunInfo, families: Iterable[Family],
             verify_top: int) -> list[str]:
    """Verify the entries of the top `verify_top` feasible candidates (and, with several
    objectives, of every Pareto candidate); fill the chapter-best columns of those and of every
    entry on the base machine. Returns failure messages."""
    families = tuple(families)
    multi = len(info.objectives) > 1
    chosen = {r.trial for rank, r in enumerate(x for x in ranked if x.values is not None)
              if rank < verify_top or (multi and r.pareto)}
    for rank, row in enumerate(rows, start=1):
        if not row["feasible"]:
            continue
        family = family_of(str(row["family"]), families)
        if family is None:
            continue
        shape, machine = Shape(int(row["m"]), int(row["k"]), int(row["n"])), machine_of(row, family)  # type: ignore[call-overload]
        if row["chapter_best_cycles"] is None and (row["trial"] in chosen or machine == info.base_machine):
            best = family.reference(shape, machine)
            if best is not None:
                row.update(chapter_best_cycles=best[0], chapter_best_schedule=best[1])
        if row["chapter_best_cycles"] is not None and row["ratio_to_chapter_best"] is None:
            row["ratio_to_chapter_best"] = int(row["cycles"]) / int(row["chapter_best_cycles"])  # type: ignore[call-overload]
        if row["trial"] in chosen:
            verdict = family.verify(schedule_point(row), shape, machine)
            row.update(verified=False if not verdict.ok else True if verdict.verified else None,
                       verification=verdict.level, verification_detail=verdict.detail)
    return [f"rank {rank} ({row['gemm']}: {row['family']} {row['params_json']}): {row['verification_detail']}"
            for rank, row in enumerate(rows, start=1) if row["verified"] is False]


def _column(values: list[object]) -> pd.api.extensions.ExtensionArray | list[object]:
    """A typed column from Python values with gaps: integers stay integers, flags stay flags."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pd.array(values, dtype="boolean")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.array(values, dtype="Int64")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pd.array(values, dtype="Float64")
    return values


def to_frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame()
    columns = list(rows[0])
    data = {"rank": list(range(1, len(rows) + 1))}
    data.update({name: _column([row.get(name) for row in rows]) for name in columns})
    frame = pd.DataFrame(data)
    for name in ("mxu_util", "dma_busy", "ratio_to_bound", "ratio_to_chapter_best", "weight", "weighted_cycles"):
        if name in frame:
            frame[name] = frame[name].astype("Float64")
    for name in ("verified", "pareto", "feasible"):
        if name in frame:
            frame[name] = pd.array([row.get(name) for row in rows], dtype="boolean")
    return frame


def json_rows(frame: pd.DataFrame) -> list[dict[str, object]]:
    """Rows as plain JSON-ready dicts (missing values become None)."""
    rows = []
    for record in frame.to_dict(orient="records"):
        rows.append({k: (None if v is None or (isinstance(v, float) and v != v) or v is pd.NA else
                         v.item() if hasattr(v, "item") else v) for k, v in record.items()})
    return rows
