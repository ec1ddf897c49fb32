"""Leaderboards: a study's trials as a ranked, verified table, written atomically as parquet."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import optuna
import pandas as pd
from optuna.trial import TrialState

from simcore.machine import MACHINE_KEYS, Machine
from simcore.shape import Shape
from simcore.verify import verify_matmul

from search_spaces.base import canonical_json
from search_spaces.registry import find_family

from autotune import __version__
from autotune.errors import UsageError
from autotune.files import read_parquet, write_parquet
from autotune.objective import RESULT_ATTR
from autotune.problem import chapter_best

SCHEMA_VERSION = 1
METRICS: tuple[str, ...] = ("cycles", "tiles_moved", "loads", "stores", "mxu_util", "dma_busy", "lower_bound")


@dataclass(frozen=True)
class RunInfo:
    study: str
    sampler: str
    seed: int
    shape: Shape
    base_machine: Machine


def trial_rows(study: optuna.Study, info: RunInfo, param_names: Sequence[str]) -> list[dict[str, object]]:
    """One row per distinct candidate (the earliest trial that evaluated it)."""
    rows: dict[str, dict[str, object]] = {}
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        attrs = trial.user_attrs.get(RESULT_ATTR)
        if "family" not in trial.params or not attrs:
            continue
        machine = dict(attrs["machine"])
        schedule = {k: v for k, v in trial.params.items() if k not in machine or k == "family"}
        key = canonical_json({**trial.params})
        if key in rows and int(rows[key]["trial"]) < trial.number:  # type: ignore[call-overload]
            continue
        row: dict[str, object] = {"m": info.shape.m, "k": info.shape.k, "n": info.shape.n}
        row.update({name: machine[name] for name in MACHINE_KEYS})
        row["family"] = trial.params["family"]
        row.update({name: schedule.get(name) for name in param_names})
        row["params_json"] = canonical_json(schedule)
        row["machine_json"] = canonical_json(machine)
        row.update({name: attrs.get(name) for name in METRICS})
        bound = attrs.get("lower_bound")
        row["ratio_to_bound"] = attrs["cycles"] / bound if attrs.get("feasible") and bound else None  # type: ignore[operator]
        row.update(chapter_best_cycles=None, ratio_to_chapter_best=None, chapter_best_schedule=None)
        row.update(feasible=bool(attrs.get("feasible")), violation=float(attrs.get("violation", 0.0)),
                   slots_needed=attrs.get("slots_needed"), verified=None, trial=trial.number,
                   sampler=info.sampler, seed=info.seed, study=info.study,
                   timestamp=trial.datetime_complete.isoformat() if trial.datetime_complete else None,
                   autotune_version=__version__)
        rows[key] = row
    return sort_rows(list(rows.values()))


def sort_rows(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Feasible first, by cycles; ties by the canonical parameters, then the trial number."""
    def key(row: dict[str, object]) -> tuple:
        feasible = bool(row["feasible"])
        return (not feasible, row["cycles"] if feasible else float(row["violation"]),  # type: ignore[list-item]
                row["machine_json"], row["params_json"], row["trial"])
    return sorted(rows, key=key)


def machine_of(row: dict[str, object]) -> Machine:
    return Machine(**{name: int(row[name]) for name in MACHINE_KEYS})  # type: ignore[call-overload]


def schedule_point(row: dict[str, object]) -> dict[str, object]:
    import json

    point = json.loads(str(row["params_json"]))
    point.pop("family", None)
    return point


def build_entry_program(row: dict[str, object], shape: Shape):
    machine = machine_of(row)
    return machine, find_family(str(row["family"])).build(schedule_point(row), shape, machine)  # type: ignore[arg-type]


def annotate(rows: list[dict[str, object]], shape: Shape, base: Machine, verify_top: int) -> list[str]:
    """Verify the top entries and fill the chapter-best columns; returns failure messages."""
    failures = []
    feasible = [row for row in rows if row["feasible"]]
    for rank, row in enumerate(feasible):
        machine = machine_of(row)
        if rank < verify_top or machine == base:
            best = chapter_best(shape, machine)
            if best is not None:
                row.update(chapter_best_cycles=best[0], chapter_best_schedule=best[1],
                           ratio_to_chapter_best=int(row["cycles"]) / best[0])  # type: ignore[call-overload]
        if rank < verify_top:
            machine, program = build_entry_program(row, shape)
            verification, _ = verify_matmul(machine, program, shape)
            row["verified"] = verification.ok
            if not verification.ok:
                failures.append(f"rank {rank + 1} ({row['family']} {row['params_json']}): {verification.describe()}")
    return failures


def to_frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame.insert(0, "rank", range(1, len(frame) + 1))
    for column in ("cycles", "tiles_moved", "loads", "stores", "lower_bound", "chapter_best_cycles", "slots_needed"):
        frame[column] = pd.array(frame[column].tolist(), dtype="Int64")
    for column in ("mxu_util", "dma_busy", "ratio_to_bound", "ratio_to_chapter_best"):
        frame[column] = pd.array(frame[column].tolist(), dtype="Float64")
    frame["verified"] = pd.array(frame["verified"].tolist(), dtype="boolean")
    return frame


def write(frame: pd.DataFrame, path: Path, info: RunInfo, objectives: Sequence[str]) -> Path:
    metadata = {"schema": SCHEMA_VERSION, "kind": "leaderboard", "study": info.study, "shape": str(info.shape),
                "base_machine": info.base_machine.as_dict(), "objectives": list(objectives)}
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


def format_rows(frame: pd.DataFrame, top: int) -> str:
    """A compact table of the top entries."""
    lines = [f"{'rank':>4} {'cycles':>9} {'vs chapter':>10} {'/bound':>7} {'tiles':>6} {'mxu':>5} {'slots':>5} {'verified':>8}  schedule"]
    for _, row in frame.head(top).iterrows():
        if not row["feasible"]:
            lines.append(f"{row['rank']:>4} {'-':>9} {'':>10} {'':>7} {'':>6} {'':>5} {row['slots']:>5} {'':>8}  "
                         f"{row['family']} {row['params_json']} infeasible (over by {row['violation']:g} slots)")
            continue
        gain = f"{1 / row['ratio_to_chapter_best']:.2f}x" if pd.notna(row["ratio_to_chapter_best"]) else "-"
        verified = "yes" if row["verified"] is True else "NO" if row["verified"] is False else "-"
        lines.append(f"{row['rank']:>4} {row['cycles']:>9} {gain:>10} {row['ratio_to_bound']:>7.3f} {row['tiles_moved']:>6} "
                     f"{row['mxu_util']:>5.0%} {row['slots']:>5} {verified:>8}  {row['family']} {row['params_json']}")
    return "\n".join(lines)
