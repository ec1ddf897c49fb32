"""Leaderboards: a study's trials as a ranked, verified table, written atomically as parquet."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import optuna
import pandas as pd
from optuna.trial import TrialState

from simcore.ga1.machine import MACHINE_KEYS, Machine
from simcore.shape import Shape

from search_spaces.base import canonical_json

from autotune import __version__
from autotune.errors import UsageError
from autotune.files import read_parquet, write_parquet
from autotune.objective import RESULT_ATTR
from autotune.problem import Problem, chapter_best

SCHEMA_VERSION = 1
# Metrics first in this order when present; any other metric a family reports follows.
METRICS: tuple[str, ...] = ("cycles", "tiles_moved", "loads", "stores", "mxu_util", "dma_busy", "words_per_mac",
                            "mac_utilization", "lower_bound")
_NOT_METRICS = frozenset({"feasible", "violation", "machine", "slots_needed", "duplicate_of", "point"})


@dataclass(frozen=True)
class RunInfo:
    study: str
    sampler: str
    seed: int
    shape: Shape
    base_machine: Machine
    objectives: tuple[str, ...] = ("cycles",)


def trial_rows(study: optuna.Study, info: RunInfo, param_names: Sequence[str]) -> list[dict[str, object]]:
    """One row per distinct candidate (the earliest trial that evaluated it), ranked."""
    found: dict[str, tuple[optuna.trial.FrozenTrial, dict]] = {}
    metric_names = list(METRICS)
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        attrs = trial.user_attrs.get(RESULT_ATTR)
        if "family" not in trial.params or not attrs:
            continue
        found.setdefault(canonical_json(attrs.get("point") or trial.params), (trial, attrs))
        metric_names += [k for k in attrs if k not in _NOT_METRICS and k not in metric_names]
    present = {k for _, attrs in found.values() for k in attrs}
    metric_names = [k for k in metric_names if k in present]
    rows = [_row(trial, attrs, info, param_names, metric_names) for trial, attrs in found.values()]
    return sort_rows(mark_pareto(rows, info.objectives), info.objectives)


def _row(trial: optuna.trial.FrozenTrial, attrs: dict, info: RunInfo, param_names: Sequence[str], metric_names: Sequence[str]) -> dict[str, object]:
    machine = dict(attrs.get("machine") or {})
    params = attrs.get("point") or trial.params
    schedule = {k: v for k, v in params.items() if k not in machine or k == "family"}
    row: dict[str, object] = {"m": info.shape.m, "k": info.shape.k, "n": info.shape.n}
    if machine:
        row.update({name: machine[name] for name in MACHINE_KEYS})
    row["family"] = params["family"]
    row.update({name: schedule.get(name) for name in param_names})
    row["params_json"] = canonical_json(schedule)
    row["machine_json"] = canonical_json(machine)
    feasible = bool(attrs.get("feasible"))
    row.update({name: attrs.get(name) if feasible else None for name in metric_names})
    bound = attrs.get("lower_bound")
    row["ratio_to_bound"] = attrs["cycles"] / bound if feasible and bound else None
    if machine:
        row.update(chapter_best_cycles=None, ratio_to_chapter_best=None, chapter_best_schedule=None)
    row.update(feasible=feasible, violation=float(attrs.get("violation", 0.0)), slots_needed=attrs.get("slots_needed"),
               pareto=False, verified=None, trial=trial.number, sampler=info.sampler, seed=info.seed, study=info.study,
               timestamp=trial.datetime_complete.isoformat() if trial.datetime_complete else None,
               autotune_version=__version__)
    return row


def objective_value(row: dict[str, object], name: str) -> float:
    if name == "scratchpad_words":
        return float(int(row["slots"]) * int(row["T"]) ** 2)  # type: ignore[call-overload]
    return float(row[name])  # type: ignore[arg-type]


def mark_pareto(rows: list[dict[str, object]], objectives: Sequence[str]) -> list[dict[str, object]]:
    """Flag the feasible rows no other feasible row dominates (all objectives minimised)."""
    feasible = [r for r in rows if r["feasible"]]
    values = [tuple(objective_value(r, name) for name in objectives) for r in feasible]
    for row, mine in zip(feasible, values):
        row["pareto"] = not any(all(o <= m for o, m in zip(other, mine)) and other != mine for other in values)
    return rows


def sort_rows(rows: list[dict[str, object]], objectives: Sequence[str] = ("cycles",)) -> list[dict[str, object]]:
    """Feasible first, by the objectives in order; ties by the canonical machine and
    parameters, then the trial number (so equal runs rank identically)."""
    def key(row: dict[str, object]) -> tuple:
        feasible = bool(row["feasible"])
        scores = tuple(objective_value(row, name) for name in objectives) if feasible else (float(row["violation"]),)  # type: ignore[arg-type]
        return (not feasible, scores, row["machine_json"], row["params_json"], row["trial"])
    return sorted(rows, key=key)


def machine_of(row: dict[str, object]) -> Machine:
    return Machine(**{name: int(row[name]) for name in MACHINE_KEYS})  # type: ignore[call-overload]


def schedule_point(row: dict[str, object]) -> dict[str, object]:
    import json

    point = json.loads(str(row["params_json"]))
    point.pop("family", None)
    return point


def annotate(rows: list[dict[str, object]], problem: Problem, verify_top: int, objectives: Sequence[str] = ("cycles",)) -> list[str]:
    """Verify the top entries (and, with several objectives, every Pareto entry) and fill the
    chapter-best columns; returns failure messages."""
    shape, base = problem.shape, problem.machine
    failures = []
    feasible = [row for row in rows if row["feasible"]]
    for rank, row in enumerate(feasible):
        ga1 = "chapter_best_cycles" in row
        machine = machine_of(row) if ga1 else base
        if ga1 and (rank < verify_top or machine == base):
            best = chapter_best(shape, machine)
            if best is not None:
                row.update(chapter_best_cycles=best[0], chapter_best_schedule=best[1],
                           ratio_to_chapter_best=int(row["cycles"]) / best[0])  # type: ignore[call-overload]
        if rank < verify_top or (row["pareto"] and len(objectives) > 1):
            verdict = problem.family(str(row["family"])).verify(schedule_point(row), shape, machine)  # type: ignore[arg-type]
            row["verified"] = verdict.ok
            if not verdict.ok:
                failures.append(f"rank {rank + 1} ({row['family']} {row['params_json']}): {verdict.detail}")
    return failures


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
    for name in ("mxu_util", "dma_busy", "ratio_to_bound", "ratio_to_chapter_best"):
        if name in frame:
            frame[name] = frame[name].astype("Float64")
    frame["verified"] = pd.array([row.get("verified") for row in rows], dtype="boolean")
    return frame


def write(frame: pd.DataFrame, path: Path, info: RunInfo) -> Path:
    metadata = {"schema": SCHEMA_VERSION, "kind": "leaderboard", "study": info.study, "shape": str(info.shape),
                "base_machine": info.base_machine.as_dict(), "objectives": list(info.objectives)}
    return write_parquet(frame, path, metadata)


def resolve(path_or_study: str) -> Path:
    """A parquet path, a results/<study>/ folder, or a study name."""
    path = Path(path_or_study)
    for candidate in (path, path / "leaderboard.parquet", Path("results") / path_or_study / "leaderboard.parquet"):
        if candidate.is_file():
            return candidate
    raise UsageError(f"no leaderboard at {path_or_study!r} (give a parquet file, a results folder or a study name)")


def load(path_or_study: str) -> tuple[pd.DataFrame, dict[str, object]]:
    path = resolve(path_or_study)
    try:
        frame, metadata = read_parquet(path)
    except Exception as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if metadata.get("kind") != "leaderboard" or metadata.get("schema") != SCHEMA_VERSION:
        raise UsageError(f"{path} is not an autotune leaderboard of schema {SCHEMA_VERSION} (found {metadata.get('schema')!r})")
    return frame, metadata


def json_rows(frame: pd.DataFrame) -> list[dict[str, object]]:
    """Rows as plain JSON-ready dicts (missing values become None)."""
    rows = []
    for record in frame.to_dict(orient="records"):
        rows.append({k: (None if v is None or (isinstance(v, float) and v != v) or v is pd.NA else
                         v.item() if hasattr(v, "item") else v) for k, v in record.items()})
    return rows


def format_rows(frame: pd.DataFrame, top: int, objectives: Sequence[str] = ("cycles",)) -> str:
    """A compact table of the top entries; columns follow what the leaderboard holds."""
    def has(name: str) -> bool:
        return name in frame.columns and bool(frame[name].notna().any())

    columns: list[tuple[str, int, object]] = [("rank", 4, lambda r: r["rank"])]
    for name in objectives:
        columns.append((name, max(9, len(name)), lambda r, name=name: _fmt(objective_value(r, name))))
    if has("ratio_to_chapter_best"):
        columns.append(("vs chapter", 10, lambda r: f"{1 / r['ratio_to_chapter_best']:.2f}x" if pd.notna(r["ratio_to_chapter_best"]) else "-"))
    if has("ratio_to_bound"):
        columns.append(("/bound", 7, lambda r: f"{r['ratio_to_bound']:.3f}" if pd.notna(r["ratio_to_bound"]) else "-"))
    if has("tiles_moved"):
        columns.append(("tiles", 6, lambda r: r["tiles_moved"]))
    if has("mxu_util"):
        columns.append(("mxu", 5, lambda r: f"{r['mxu_util']:.0%}"))
    if has("slots"):
        columns.append(("slots", 5, lambda r: r["slots"]))
    for name, title in (("dma_setup", "setup"), ("dma_words_per_cycle", "w/cyc"), ("mxu_cycles", "mxu_c")):
        if has(name) and frame[name].nunique() > 1:  # machine parameters a search varied
            columns.append((title, 5, lambda r, name=name: r[name]))
    if len(objectives) > 1:
        columns.append(("pareto", 6, lambda r: "yes" if r["pareto"] else ""))
    columns.append(("verified", 8, lambda r: "yes" if r["verified"] is True else "NO" if r["verified"] is False else "-"))
    lines = [" ".join(f"{title:>{width}}" for title, width, _ in columns) + "  schedule"]
    for _, row in frame.head(top).iterrows():
        if not row["feasible"]:
            lines.append(f"{row['rank']:>4}  infeasible (over the limit by {row['violation']:g})  {row['family']} {row['params_json']}")
            continue
        lines.append(" ".join(f"{str(get(row)):>{width}}" for _, width, get in columns) + f"  {row['params_json']}")  # type: ignore[operator]
    return "\n".join(lines)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"
