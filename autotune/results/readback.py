"""Results read back: one entry of a leaderboard, the list of studies, and one entry exported as
a schedule file (JSON, which `tune --enqueue` takes back) or as its oracle's program (text).
(`autotune.run.load` finds a study's leaderboard, rebuilt from its storage when stale.)"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pandas as pd

from simcore.ga1.asm import to_text
from simcore.shape import Shape, parse_shape

from autotune import __version__, oracles, record
from autotune.errors import AutotuneError, ResultsError
from autotune.results import leaderboard as board
from autotune.search.problem import Candidate
from autotune.storage import local_storages, read_studies

EXPORT_FORMAT = "autotune-schedule"
EXPORT_VERSION = 1


@dataclass(frozen=True)
class Loaded:
    frame: pd.DataFrame
    metadata: dict[str, object]
    path: Path


def entry(loaded: Loaded, rank: int) -> dict[str, object]:
    if loaded.frame.empty or loaded.metadata.get("kind") not in ("leaderboard", "pareto", "workload"):
        raise ResultsError(f"{loaded.path} holds no ranked entries")
    if rank > len(loaded.frame):
        raise ResultsError(f"rank {rank} is past the end of the leaderboard ({len(loaded.frame)} entries)")
    return board.json_rows(loaded.frame.iloc[[rank - 1]])[0]


# --- the studies there are ---------------------------------------------------------------------


def studies(results: Path, storage: str | None) -> list[dict[str, object]]:
    """Every study in `storage`, or in the default storages under results/."""
    return [_summary(study, url) for url in ([storage] if storage else local_storages(results)) for study in read_studies(url)]


def _summary(study, url: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    from optuna.trial import TrialState

    ident = record.study_identity(study) or {}
    done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    records = [(t, record.TrialRecord.of_trial(t)) for t in done]
    feasible = [t.values[0] for t, r in records if t.values and r is not None and r.feasible]
    last = max((t.datetime_complete for t in done if t.datetime_complete), default=None)
    shape = ident.get("shape") or f"{len(ident.get('workload') or [])} GEMMs"
    # The machine's slots and what differs from the chapter's, then any budget the study has.
    budgets = [f"{k}={v}" for k, v in ident.items() if k in ("pe_budget", "max_hbm_words", "max_dma_words_per_cycle") and v is not None]
    machine = ",".join([_short_machine(ident), *budgets]) + (" (searched)" if ident.get("machine_space") else "")
    return {"study": study.study_name, "oracle": ident.get("oracle"), "shape": shape, "machine": machine,
            "trials": len(done), "best_cycles": min(feasible) if feasible else None,
            "last_update": last.isoformat(timespec="seconds") if last else None, "storage": url}


def _short_machine(ident: dict) -> str:  # type: ignore[type-arg]
    """The machine as its oracle says it briefly (GA-1: slots and what differs from the chapter's)."""
    key = str(ident.get("machine") or "")
    try:
        oracle = oracles.get(str(ident.get("oracle") or "").removesuffix("-codesign"))
        return oracle.describe_machine(oracle.parse_machine(key))
    except (AutotuneError, ValueError):
        return key


def format_studies(rows: list[dict[str, object]]) -> str:
    if not rows:
        return "no studies (tune writes them under results/<study>/; give --results DIR or --storage URL)"
    titles = ("study", "oracle", "shape", "machine", "trials", "best cycles", "last update")
    cells = [[str(r["study"]), str(r["oracle"]), str(r["shape"]), str(r["machine"]), str(r["trials"]),
              f"{r['best_cycles']:.0f}" if r["best_cycles"] is not None else "-", str(r["last_update"] or "-")] for r in rows]
    widths = [max(len(t), *(len(c[i]) for c in cells)) for i, t in enumerate(titles)]
    right = {4, 5}  # numbers
    line = lambda values: "  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths))).rstrip()  # noqa: E731
    return "\n".join([line(titles), *(line(c) for c in cells)])


# --- export and starting points ----------------------------------------------------------------


def export_json(row: Mapping[str, object], metadata: Mapping[str, object], rank: int) -> str:
    data = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "study": metadata.get("study"), "rank": rank,
            "gemm": row.get("gemm"), "shape": f"{row['m']}x{row['k']}x{row['n']}", "family": row["family"],
            "params": board.schedule_point(row), "machine": json.loads(str(row.get("machine_json") or "{}")),
            "cycles": row.get("cycles"), "verified": row.get("verified"), "verification": row.get("verification"),
            "autotune_version": __version__}
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def export_asm(row: Mapping[str, object], metadata: Mapping[str, object], rank: int) -> str:
    found = board.family_of(str(row["family"]))
    if found is None:
        raise ResultsError(f"unknown schedule family {row['family']!r}")
    oracle, family = found
    shape, machine = Shape(int(row["m"]), int(row["k"]), int(row["n"])), board.machine_of(row, oracle)  # type: ignore[call-overload]
    program = oracle.program(family, board.schedule_point(row), shape, machine)
    if program is None:
        raise ResultsError(f"family {family.name!r} has no GA-1 program: export it as JSON")
    header = [f"# autotune {__version__}: study {metadata.get('study')!r}, rank {rank}, {shape} ({row.get('gemm')})",
              f"# schedule {row['params_json']}",
              f"# machine {','.join(f'{k}={v}' for k, v in machine.as_dict().items())}",
              f"# {row.get('cycles')} cycles (simcore); A is M x K, B is K x N, C = A B; tiles of {machine.T}x{machine.T}"]
    return "\n".join(header) + "\n" + to_text(program)


def schedules(path: Path) -> list[dict[str, object]]:
    """The schedules of an exported file (one object, or a list of them)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResultsError(f"schedule file {path}: no such file", setting="enqueue") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"schedule file {path}: not a JSON schedule file ({exc})", setting="enqueue") from None
    found = data if isinstance(data, list) else [data]
    for item in found:
        if not (isinstance(item, dict) and item.get("format") == EXPORT_FORMAT and isinstance(item.get("family"), str)
                and isinstance(item.get("params"), dict) and isinstance(item.get("machine"), dict)):
            raise ResultsError(f"schedule file {path}: not an exported schedule (write one with `autotune export STUDY --format json`)", setting="enqueue")
        parse_shape(str(item.get("shape", "1x1x1")))
    return found


def starting_point(item: Mapping[str, object], base: Mapping[str, int], searched: tuple[str, ...], source: str) -> Candidate:
    """An exported schedule as a candidate of a run on `base` (searching `searched` machine
    parameters): its machine must be the base machine, apart from what is searched."""
    machine = dict(item["machine"])  # type: ignore[call-overload]
    if machine:
        fixed = {k: v for k, v in machine.items() if k not in searched and base.get(k) != v}
        if fixed or set(machine) - set(base):
            differs = ", ".join(f"{k}={v} (this run: {base.get(k)})" for k, v in fixed.items())
            raise ResultsError(f"{source} was exported for another machine: {differs or 'unknown parameters'}")
    return Candidate(str(item["family"]), dict(item["params"]), {k: machine[k] for k in searched if k in machine})  # type: ignore[call-overload]
