"""Leaderboards: a study's distinct trials ranked (one sort, one Pareto front), verified, and
laid out as rows. A row is one schedule on one machine for one GEMM; a single product is a
workload of one GEMM, so tuning, workloads and co-design share these columns."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import optuna
import pandas as pd
from optuna.trial import TrialState

from autotune import __version__, oracles
from autotune.oracles import Oracle
from autotune.oracles.capabilities import Reference
from autotune.oracles.measures import Measure
from autotune.record import Evaluation, TrialRecord
from autotune.search.objectives import evaluation_source
from autotune.search.problem import Entry, Search
from search_spaces.base import Family, canonical_json
from search_spaces.domains import Point
from simcore.shape import Shape

# Keys of a stored evaluation that are no metric column: the search's graded limits, a co-design's
# per-GEMM results, and the schema's own `slots_needed` column (what a schedule needs of its
# machine's scratchpad, for oracles that count it).
NOT_METRICS = frozenset({"slots_needed", "constraints", "shapes", "no_schedule", "chapter_cycles"})
# The leaderboard's own float columns (the oracle's are its measures of dtype "float").
FLOATS: tuple[str, ...] = (
    "ratio_to_bound",
    "ratio_to_chapter_best",
    "weight",
    "weighted_cycles",
    "total_energy_pj",
    "total_edp",
)
NONE = "none"  # the verification column of an entry nobody checked


@dataclass(frozen=True)
class RunInfo:
    study: str
    sampler: str
    seed: int
    shape: Shape
    base_machine: Any
    oracle: Oracle
    objectives: tuple[str, ...] = ("cycles",)


@dataclass
class Ranked:
    """One distinct candidate: the earliest completed trial that evaluated it."""

    record: TrialRecord
    machine_json: str
    params_json: str
    values: (
        tuple[float, ...] | None
    )  # the objectives, all minimised (signs applied); None when infeasible
    pareto: bool = False
    entries: list[Entry] = field(default_factory=list)

    @property
    def trial(self) -> int:
        return self.record.number

    @property
    def evaluation(self) -> Evaluation:
        return self.record.evaluation

    def sort_key(self) -> tuple:
        """Feasible first, by the objectives in order; ties by the canonical machine and
        parameters, then the trial number (so equal runs rank identically)."""
        scores = self.values if self.values is not None else (self.evaluation.violation,)
        return (self.values is None, scores, self.machine_json, self.params_json, self.trial)


def records(study: optuna.Study, search: Search) -> list[Ranked]:
    """The study's distinct candidates, ranked, the Pareto front marked."""
    found: dict[str, Ranked] = {}
    objectives = search.measures
    signs = [-1.0 if measure.maximized else 1.0 for measure in objectives]
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        record = TrialRecord.of_trial(trial)
        key = search.key_of(record.params) if record else None
        if record is None or key is None or key in found:
            continue
        evaluation = record.evaluation
        machine = evaluation.machine
        point = (evaluation.point or record.params) if "family" in record.params else {}
        schedule = {k: v for k, v in point.items() if k not in machine or k == "family"}
        source = evaluation_source(evaluation)
        values = (
            tuple(s * m.value(source) for s, m in zip(signs, objectives))
            if evaluation.feasible
            else None
        )
        found[key] = Ranked(
            record,
            canonical_json(dict(machine)),
            canonical_json(schedule) if schedule else "",
            values,
        )
    ranked = rank(list(found.values()))
    for item in ranked:
        item.entries = search.entries(item.evaluation)
    return ranked


def rank(found: list[Ranked]) -> list[Ranked]:
    """The one sort (Ranked.sort_key) and the one Pareto front of every leaderboard."""
    ranked = sorted(found, key=Ranked.sort_key)
    for record, flag in zip(ranked, pareto_flags([r.values for r in ranked])):
        record.pareto = flag
    return ranked


def pareto_flags(values: Sequence[tuple[float, ...] | None]) -> list[bool]:
    """Flag the feasible points no other feasible point dominates (all minimised)."""
    feasible = [v for v in values if v is not None]
    return [
        v is not None and not any(o != v and all(a <= b for a, b in zip(o, v)) for o in feasible)
        for v in values
    ]


def rows_of(
    ranked: Sequence[Ranked], info: RunInfo, families: Iterable[Family]
) -> list[dict[str, object]]:
    """One row per entry (one per record; one per GEMM of a co-design machine), in rank order."""
    T = info.oracle.tile_edge(info.base_machine)
    param_names = sorted(
        {p.name for f in families for p in f.params(info.shape, T)}
        | {k for r in ranked for e in r.entries for k in (e.point or {})}
    )
    # The oracle's measures first, in its declared order; any other metric reported follows.
    metric_names = [measure.key for measure in info.oracle.measures]
    for record in ranked:
        for entry in record.entries:
            metric_names += [
                k for k in entry.metrics if k not in NOT_METRICS and k not in metric_names
            ]
    present = {k for r in ranked for e in r.entries for k in e.metrics}
    metric_names = [k for k in metric_names if k in present]
    return [
        _row(entry, record, info, param_names, metric_names)
        for record in ranked
        for entry in record.entries
    ]


def _row(
    entry: Entry,
    ranked: Ranked,
    info: RunInfo,
    param_names: Sequence[str],
    metric_names: Sequence[str],
) -> dict[str, object]:
    shape, point = entry.gemm.shape, entry.point or {}
    row: dict[str, object] = {
        "m": shape.m,
        "k": shape.k,
        "n": shape.n,
        "gemm": entry.gemm.name,
        "weight": entry.gemm.weight,
    }
    row.update(entry.machine)
    row["family"] = entry.family
    row.update({name: point.get(name) for name in param_names})
    row["params_json"] = canonical_json({"family": entry.family, **point}) if entry.family else None
    row["machine_json"] = canonical_json(entry.machine)
    # An infeasible entry keeps what was computed for it (an area over its budget, a run over
    # the energy budget): its feasibility is the record's, never the presence of figures.
    row.update({name: entry.metrics.get(name) for name in metric_names})
    cycles, bound = entry.metrics.get("cycles"), entry.metrics.get("lower_bound")
    row["weighted_cycles"] = entry.gemm.weight * cycles if cycles is not None else None  # type: ignore[operator]
    row["ratio_to_bound"] = cycles / bound if cycles is not None and bound else None  # type: ignore[operator]
    row.update(chapter_best_cycles=None, ratio_to_chapter_best=None, chapter_best_schedule=None)
    row.update(entry.extras)
    record, run = ranked.record, ranked.record.provenance
    row.update(
        feasible=record.feasible,
        violation=record.evaluation.violation,
        slots_needed=entry.metrics.get("slots_needed"),
        pareto=ranked.pareto,
        verified=None,
        verification=NONE,
        verification_detail=None,
        timing=record.timing,
        origin=record.origin,
        trial=record.number,
        sampler=run.sampler if run.sampler is not None else info.sampler,
        seed=run.seed if run.seed is not None else info.seed,
        study=info.study,
        timestamp=record.completed,
        autotune_version=run.autotune_version or __version__,
    )
    return row


def family_of(
    name: str,
    families: Iterable[Family] = (),
    oracle: Oracle | None = None,
    study_folder: Path | None = None,
) -> tuple[Oracle, Family] | None:
    """The oracle and family of an entry, by the family's name: the run's own first (its
    budgets), then the run's oracle's (as configured: the schedules imported into its study),
    else any installed oracle's. `study_folder`: the results folder of the entry's study."""
    for family in families:
        if family.name == name and oracle is not None:
            return oracle, family
    if oracle is not None:
        found = oracle.family(name)
        if found is not None:
            return oracle, found
    return oracles.family_of(name, oracle.name if oracle else None, study_folder)


def machine_of(row: Mapping[str, object], oracle: Oracle) -> Any:
    """The machine a row's result was measured on."""
    return oracle.machine_from_record(json.loads(str(row.get("machine_json") or "{}")))


def schedule_point(row: Mapping[str, object]) -> Point:
    point: Point = json.loads(str(row["params_json"]))
    point.pop("family", None)
    return point


def annotate(
    rows: list[dict[str, object]],
    ranked: Sequence[Ranked],
    info: RunInfo,
    families: Iterable[Family],
    verify_top: int,
) -> list[str]:
    """Verify the entries of the top `verify_top` feasible candidates (and, with several
    objectives, of every Pareto candidate); fill the chapter-best columns of those and of every
    entry on the base machine. Returns failure messages."""
    families = tuple(families)
    multi = len(info.objectives) > 1
    chosen = {
        r.trial
        for rank, r in enumerate(x for x in ranked if x.values is not None)
        if rank < verify_top or (multi and r.pareto)
    }
    for rank, row in enumerate(rows, start=1):
        if not row["feasible"]:
            continue
        found = family_of(str(row["family"]), families, info.oracle)
        if found is None:
            continue
        oracle, family = found
        shape, machine = Shape(int(row["m"]), int(row["k"]), int(row["n"])), machine_of(row, oracle)  # type: ignore[call-overload]
        if row["chapter_best_cycles"] is None and (
            row["trial"] in chosen or machine == info.base_machine
        ):
            hand = oracle.capability(Reference)
            best = hand.reference(shape, machine) if hand is not None else None
            if best is not None:
                row.update(chapter_best_cycles=best[0], chapter_best_schedule=best[1])
        if row["chapter_best_cycles"] is not None and row["ratio_to_chapter_best"] is None:
            row["ratio_to_chapter_best"] = int(row["cycles"]) / int(row["chapter_best_cycles"])  # type: ignore[call-overload]
        if row["trial"] in chosen:
            verdict = oracle.verify(family, schedule_point(row), shape, machine)
            row.update(
                verified=False if not verdict.ok else True if verdict.verified else None,
                verification=verdict.level,
                verification_detail=verdict.detail,
            )
    return [
        f"rank {rank} ({row['gemm']}: {row['family']} {row['params_json']}): {row['verification_detail']}"
        for rank, row in enumerate(rows, start=1)
        if row["verified"] is False
    ]


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


def to_frame(rows: list[dict[str, object]], measures: Sequence[Measure] = ()) -> pd.DataFrame:
    """The rows as a typed frame, ranked in order; the float `measures` (the oracle's) and the
    leaderboard's own float columns stay Float64 even when every value is whole or missing."""
    if not rows:
        return pd.DataFrame()
    columns = list(rows[0])
    data: dict[str, Any] = {"rank": list(range(1, len(rows) + 1))}
    data.update({name: _column([row.get(name) for row in rows]) for name in columns})
    frame = pd.DataFrame(data)
    floats = [m.key for m in measures if m.dtype == "float"] + list(FLOATS)
    for name in floats:
        if name in frame:
            frame[name] = frame[name].astype("Float64")
    for name in ("verified", "pareto", "feasible"):
        if name in frame:
            frame[name] = pd.array([row.get(name) for row in rows], dtype="boolean")
    return frame


def json_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain JSON-ready dicts (missing values become None)."""
    rows = []
    for record in frame.to_dict(orient="records"):
        rows.append(
            {
                k: (
                    None
                    if v is None or (isinstance(v, float) and v != v) or v is pd.NA
                    else v.item()
                    if hasattr(v, "item")
                    else v
                )
                for k, v in record.items()
            }
        )
    return rows
