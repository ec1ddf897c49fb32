"""Results read back: one entry of a leaderboard, the list of studies, and one entry exported as
a schedule file (JSON, which `tune --enqueue` takes back) or as its oracle's program (text).
(`autotune.results.load` finds a study's leaderboard, rebuilt from its storage when stale.)"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence, cast

import pandas as pd

from autotune import __version__, oracles, record
from autotune.errors import AutotuneError, ResultsError
from autotune.oracles.capabilities import Programs
from autotune.results import leaderboard as board
from autotune.results.owner import LEADERBOARD, written
from autotune.search.problem import Candidate
from autotune.storage import local_storages, read_studies
from autotune.storage.names import check_length, input_file
from search_spaces.domains import Point
from simcore.shape import Shape, parse_shape

EXPORT_FORMAT = "autotune-schedule"
EXPORT_VERSION = 1


@dataclass(frozen=True)
class Loaded:
    frame: pd.DataFrame
    metadata: dict[str, object]
    path: Path


def entry(loaded: Loaded, rank: int) -> dict[str, Any]:
    if loaded.frame.empty or loaded.metadata.get("kind") not in (
        "leaderboard",
        "pareto",
        "workload",
    ):
        raise ResultsError(f"{loaded.path} holds no ranked entries")
    if rank > len(loaded.frame):
        raise ResultsError(
            f"rank {rank} is past the end of the leaderboard ({len(loaded.frame)} entries)"
        )
    return board.json_rows(loaded.frame.iloc[[rank - 1]])[0]


# --- the studies there are ---------------------------------------------------------------------


def studies(results: Path, storage: str | None) -> list[dict[str, object]]:
    """Every study in `storage`, or in the default storages under results/. A damaged default
    storage (or study) is listed as damaged, with the reason; the others as usual."""
    if storage:
        return [_summary(study, storage) for study in read_studies(storage)]
    check_length(results, "results folder", "results")
    if results.exists() and not results.is_dir():
        raise ResultsError(f"{results} is a file, not a folder", setting="results")
    rows: list[dict[str, object]] = []
    for url in local_storages(results):
        folder = Path(url.removeprefix("sqlite:///")).parent
        try:
            held = read_studies(url)
        except AutotuneError as exc:
            rows.append(_damaged(folder.name, url, str(exc)))
            continue
        listed = written(folder / LEADERBOARD)
        if not held and listed is not None and listed.trials:
            rows.append(
                _damaged(
                    folder.name,
                    url,
                    f"the storage holds no study, but {listed.path} lists "
                    f"{listed.trials} finished trials",
                )
            )
        for study in held:
            try:
                rows.append(_summary(study, url))
            except AutotuneError as exc:
                rows.append(_damaged(study.study_name, url, str(exc)))
    return rows


def _damaged(name: str, url: str, reason: str) -> dict[str, object]:
    return {
        "study": name,
        "oracle": None,
        "shape": None,
        "machine": None,
        "trials": None,
        "best_cycles": None,
        "last_update": None,
        "storage": url,
        "damaged": reason,
    }


def _summary(study, url: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    from optuna.trial import TrialState

    ident = record.study_identity(study) or {}
    done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    records = [(t, record.TrialRecord.of_trial(t)) for t in done]
    feasible = [t.values[0] for t, r in records if t.values and r is not None and r.feasible]
    last = max((t.datetime_complete for t in done if t.datetime_complete), default=None)
    shape = ident.get("shape") or f"{len(ident.get('workload') or [])} GEMMs"
    # The machine's slots and what differs from the chapter's, then any budget the study has.
    budgets = [
        f"{k}={v}"
        for k, v in ident.items()
        if k in ("pe_budget", "max_hbm_words", "max_dma_words_per_cycle") and v is not None
    ]
    machine = ",".join([_short_machine(ident), *budgets]) + (
        " (searched)" if ident.get("machine_space") else ""
    )
    return {
        "study": study.study_name,
        "oracle": ident.get("oracle"),
        "shape": shape,
        "machine": machine,
        "trials": len(done),
        "best_cycles": min(feasible) if feasible else None,
        "last_update": last.isoformat(timespec="seconds") if last else None,
        "storage": url,
    }


def _short_machine(ident: dict) -> str:  # type: ignore[type-arg]
    """The machine as its oracle says it briefly (`Oracle.describe_machine`)."""
    key = str(ident.get("machine") or "")
    try:
        oracle = oracles.of_identity(str(ident.get("oracle") or ""))
        return oracle.describe_machine(oracle.parse_machine(key))
    except (AutotuneError, ValueError):
        return key


def format_studies(rows: list[dict[str, object]]) -> str:
    if not rows:
        return "no studies (tune writes them under results/<study>/; give --results DIR or --storage URL)"
    titles = ("study", "oracle", "shape", "machine", "trials", "best cycles", "last update")
    good = [r for r in rows if not r.get("damaged")]
    cells = [
        [
            _cell(r["study"]),
            _cell(r["oracle"]),
            _cell(r["shape"]),
            _cell(r["machine"]),
            str(r["trials"]),
            f"{r['best_cycles']:.0f}" if r["best_cycles"] is not None else "-",
            str(r["last_update"] or "-"),
        ]
        for r in good
    ]
    damaged = [
        (_cell(r["study"]), f"damaged: {_cell(r['damaged'])}") for r in rows if r.get("damaged")
    ]
    widths = [max([len(t), *(len(c[i]) for c in cells)]) for i, t in enumerate(titles)]
    widths[0] = max([widths[0], *(len(name) for name, _ in damaged)])
    right = {4, 5}  # numbers

    def line(values: Sequence[str]) -> str:
        cells = zip(values, widths)
        return "  ".join(
            v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(cells)
        ).rstrip()

    return "\n".join(
        [
            line(titles),
            *(line(c) for c in cells),
            *(f"{n.ljust(widths[0])}  {d}" for n, d in damaged),
        ]
    )


def _cell(value: object) -> str:
    """A table cell on one line: a name from another tool's storage may hold a newline."""
    text = str(value)
    return text if text.isprintable() else repr(text)[1:-1]


# --- export and starting points ----------------------------------------------------------------


def export_json(
    row: Mapping[str, object],
    metadata: Mapping[str, object],
    rank: int,
    study_folder: Path | None = None,
) -> str:
    data = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "study": metadata.get("study"),
        "rank": rank,
        "gemm": row.get("gemm"),
        "shape": f"{row['m']}x{row['k']}x{row['n']}",
        "family": row["family"],
        "params": board.schedule_point(row),
        "machine": json.loads(str(row.get("machine_json") or "{}")),
        "cycles": row.get("cycles"),
        "verified": row.get("verified"),
        "verification": row.get("verification"),
        "autotune_version": __version__,
    }
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def export_asm(
    row: Mapping[str, object],
    metadata: Mapping[str, object],
    rank: int,
    study_folder: Path | None = None,
) -> str:
    """The entry's program as text; `study_folder`: the results folder it was read from (where
    the schedules imported into its study are kept)."""
    found = board.family_of(str(row["family"]), study_folder=study_folder)
    if found is None:
        raise ResultsError(f"unknown schedule family {row['family']!r}")
    oracle, family = found
    programs = oracle.capability(Programs)
    if programs is None:
        raise ResultsError(f"the {oracle.name} oracle builds no programs: export it as JSON")
    shape = Shape(int(row["m"]), int(row["k"]), int(row["n"]))  # type: ignore[call-overload]
    machine = board.machine_of(row, oracle)
    program = programs.program(family, board.schedule_point(row), shape, machine)
    T = oracle.tile_edge(machine)
    header = [
        f"# autotune {__version__}: study {metadata.get('study')!r}, rank {rank}, {shape} ({row.get('gemm')})",
        f"# schedule {row['params_json']}",
        f"# machine {','.join(f'{k}={v}' for k, v in machine.as_dict().items())}",
        f"# {row.get('cycles')} cycles (simcore); A is M x K, B is K x N, C = A B; tiles of {T}x{T}",
    ]
    return "\n".join(header) + "\n" + programs.program_text(program)


SCHEDULE_FILE_BYTES = 64 << 20  # exported schedules: a few hundred bytes each


def schedules(path: Path) -> list[dict[str, object]]:
    """The schedules of an exported file (one object, or a list of them)."""
    from simcore import files

    try:
        input_file(path, "schedule file")
        text = files.read_text(path, "schedule file", SCHEDULE_FILE_BYTES)
        data = files.parse_json(text, f"schedule file {path}")
    except AutotuneError as exc:
        raise ResultsError(str(exc), setting="enqueue") from None
    except files.FileError as exc:  # a device, too large, not UTF-8, nested too deep, not JSON
        reason = (
            str(exc).removeprefix(f"schedule file {path}: ").removeprefix(f"schedule file {path} ")
        )
        raise ResultsError(
            f"schedule file {path}: not a JSON schedule file ({reason})", setting="enqueue"
        ) from None
    found = data if isinstance(data, list) else [data]
    if not found:
        raise ResultsError(f"schedule file {path} holds no schedule", setting="enqueue")
    for number, item in enumerate(found, start=1):
        where = f"schedule file {path}" + (f", schedule {number}" if len(found) > 1 else "")
        if not (
            isinstance(item, dict)
            and item.get("format") == EXPORT_FORMAT
            and isinstance(item.get("family"), str)
            and isinstance(item.get("params"), dict)
            and isinstance(item.get("machine"), dict)
        ):
            raise ResultsError(
                f"{where}: not an exported schedule (write one with `autotune export STUDY --format json`)",
                setting="enqueue",
            )
        version = item.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ResultsError(
                f"{where}: format version {version!r} is not one autotune wrote", setting="enqueue"
            )
        if version > EXPORT_VERSION:
            raise ResultsError(
                f"{where}: format version {version} is newer than this autotune reads "
                f"({EXPORT_VERSION}): upgrade autotune to read it",
                setting="enqueue",
            )
        try:
            parse_shape(str(item.get("shape", "1x1x1")))
        except ValueError as exc:
            raise ResultsError(f"{where}: {exc}", setting="enqueue") from None
    return found


def starting_point(
    item: Mapping[str, object],
    base: Mapping[str, int],
    searched: tuple[str, ...],
    source: str,
    oracle: str | None = None,
) -> Candidate:
    """An exported schedule as a candidate of a run on `base` (searching `searched` machine
    parameters) by `oracle`: its family must be that oracle's, its machine the base machine,
    apart from what is searched."""
    if oracle is not None:
        _check_oracle(str(item["family"]), oracle, source)
    machine = dict(item["machine"])  # type: ignore[call-overload]
    if machine:
        fixed = {k: v for k, v in machine.items() if k not in searched and base.get(k) != v}
        if fixed or set(machine) - set(base):
            differs = ", ".join(f"{k}={v} (this run: {base.get(k)})" for k, v in fixed.items())
            raise ResultsError(
                f"{source} was exported for another machine: {differs or 'unknown parameters'}"
            )
    params = cast(Point, dict(cast(Mapping[str, Any], item["params"])))
    return Candidate(str(item["family"]), params, {k: machine[k] for k in searched if k in machine})


def _check_oracle(family: str, oracle: str, source: str) -> None:
    """ResultsError when another installed oracle owns `family`: the file holds that oracle's
    schedules (its machine's parameters would otherwise be blamed one by one)."""
    owner = oracles.family_of(family, oracle)
    if owner is not None and owner[0].name != oracle:
        raise ResultsError(
            f"{source} holds the {owner[0].name} oracle's schedules (family {family!r}), "
            f"not the {oracle} oracle's this run uses: export them from a {oracle} study",
            setting="enqueue",
        )
