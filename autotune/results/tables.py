"""The parquet files autotune writes, each kind with its own schema version in the metadata,
and how each is printed. `leaderboard` reads every kind: leaderboard and pareto (a study's
ranked entries), workload (each GEMM's winner), baseline and sweep (hand-written schedules).

Schema history: leaderboard, pareto and workload 2 added gemm, weight, weighted_cycles,
verification and verification_detail to schema 1 (no column renamed or dropped); `verified`
is true only for an exact check. Schema 3 adds `timing` (how the cycles were timed: full or
periodic) and `origin` (where the candidate came from: baseline, enqueued, transfer, grid,
optimum, refine, explore, random). Schema 4 adds energy and area: energy_pj, energy_per_mac_pj,
edp (pJ x cycles), area_mm2, macs and the breakdown energy_compute_pj, energy_register_pj,
energy_on_chip_pj, energy_off_chip_pj (a category the oracle does not count is absent); a
co-design adds total_energy_pj and total_edp (its workload's). Workload 5 adds the per-layer
report (autotune.results.report): share (weight x cycles over the weighted total), utilisation
(the unit's busy fraction: mxu_util or mac_utilization), bound_cycles (the oracle's proven lower
bound, null without one; ratio_to_bound is cycles over it) and layers (the model layers a merged
GEMM stands for). baseline and sweep are at 1 (files older than the version key read as 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from autotune import __version__, oracles
from autotune.errors import AutotuneError, ResultsError
from autotune.oracles import Oracle
from autotune.oracles.capabilities import MachineSearch
from autotune.oracles.measures import AREA, CYCLES, ENERGY, Measure, TableColumn
from autotune.results.files import read_parquet, write_parquet
from autotune.results.labels import VERIFIED_LABELS, verified_label  # noqa: F401 - read by the tables' readers
from autotune.search.codesign import machine_value
from autotune.search.objectives import measures_of

SCHEMAS: dict[str, int] = {"leaderboard": 4, "pareto": 4, "workload": 5, "baseline": 1, "sweep": 1}
READABLE: dict[str, frozenset[object]] = {
    "leaderboard": frozenset({1, 2, 3, 4}),
    "pareto": frozenset({1, 2, 3, 4}),
    "workload": frozenset({1, 2, 3, 4, 5}),
    "baseline": frozenset({None, 1}),
    "sweep": frozenset({None, 1}),
}


class NewerResults(ResultsError):
    """A results file of a schema newer than this autotune reads: never rebuilt over."""


def write(kind: str, frame: pd.DataFrame, path: Path, metadata: Mapping[str, object]) -> Path:
    return write_parquet(
        frame,
        path,
        {**metadata, "kind": kind, "schema": SCHEMAS[kind], "autotune_version": __version__},
    )


def read(path: Path) -> tuple[pd.DataFrame, dict[str, object]]:
    """A parquet file autotune wrote, of a kind and schema version it can read."""
    if path.is_dir():
        raise ResultsError(f"{path} is a directory, not a results file")
    try:
        frame, metadata = read_parquet(path)
    except Exception as exc:
        raise ResultsError(
            f"cannot read {path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from None
    if not isinstance(metadata, dict):
        metadata = {}
    kind, schema = metadata.get("kind"), metadata.get("schema")
    if (
        kind == "leaderboard" and metadata.get("variant") == "pareto"
    ):  # schema 1 wrote a front as a variant
        kind = metadata["kind"] = "pareto"
    newest = max((v for v in READABLE.get(str(kind), ()) if isinstance(v, int)), default=None)
    if (
        newest is not None
        and isinstance(schema, int)
        and not isinstance(schema, bool)
        and schema > newest
    ):
        raise NewerResults(
            f"{path} was written by a newer autotune ({kind} schema {schema}; this one reads "
            f"up to {newest}): upgrade autotune to read it"
        )
    if kind not in READABLE or schema not in READABLE[kind]:  # type: ignore[operator]
        known = ", ".join(
            f"{k} {'/'.join(str(v) for v in sorted(s, key=str) if v)}" for k, s in READABLE.items()
        )
        raise ResultsError(
            f"{path} is not an autotune result this version reads (kind {kind!r}, schema {schema!r}; reads {known})"
        )
    return frame, metadata


def inspect(path: Path) -> tuple[dict[str, object] | None, str | None]:
    """(metadata, None) for a results file this version reads; (None, why) for a damaged or
    foreign one; (None, None) when there is none. A file of a newer schema is refused."""
    if not path.exists() and not path.is_symlink():
        return None, None
    try:
        return read(path)[1], None
    except NewerResults:
        raise
    except ResultsError as exc:
        text = str(exc).removeprefix(f"cannot read {path}: ").removeprefix(f"{path} ")
        return None, text or "unreadable"


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Nullable integer, float and boolean columns for frames built from plain rows."""
    for column in frame.columns:
        present = [
            v for v in frame[column] if v is not None and not (isinstance(v, float) and v != v)
        ]
        if present and all(isinstance(v, bool) for v in present):
            frame[column] = frame[column].astype("boolean")
        elif present and all(isinstance(v, int) for v in present):
            frame[column] = frame[column].astype("Int64")
        elif present and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in present
        ):
            frame[column] = frame[column].astype("Float64")
    return frame


def workload_costs(frame: pd.DataFrame) -> dict[str, float | None]:
    """A workload's weighted energy (None unless every GEMM has one) and its machine's area."""
    energy = frame["energy_pj"].astype("Float64") if "energy_pj" in frame else None
    total = (
        float((frame["weight"] * energy).sum())
        if energy is not None and bool(energy.notna().all())
        else None
    )
    area = frame["area_mm2"].dropna() if "area_mm2" in frame else pd.Series([], dtype="Float64")
    return {"weighted_energy_pj": total, "area_mm2": float(area.iloc[0]) if len(area) else None}


def describe(frame: pd.DataFrame, metadata: Mapping[str, object], top: int) -> str:
    """A file's table, the way the command that wrote it prints it."""
    kind = metadata.get("kind")
    if kind == "workload":
        return format_workload(frame, metadata)
    if kind in ("baseline", "sweep"):
        # The columns its writer chose to show (every column of a file that names none).
        listed = metadata.get("columns")
        shown = [c for c in listed if c in frame] if isinstance(listed, list) else list(frame)
        return f"{kind} of {metadata.get('shape')}, {len(frame)} rows\n" + frame[shown].head(
            top
        ).to_string(index=False)
    oracle = oracle_of(metadata)
    names = metadata.get("objectives") or ("cycles",)
    objectives = measures_of(oracle, names)  # type: ignore[arg-type]
    head = f"study {metadata.get('study')!r}, shape {metadata.get('shape')}, {len(frame)} distinct entries"
    if metadata.get("variant") == "codesign" or (kind == "pareto" and "total_cycles" in frame):
        return head + "\n" + format_front(frame, metadata)
    columns = oracle.table_columns if oracle is not None else ()
    return (
        head
        + ("" if kind != "pareto" else " on the Pareto front")
        + "\n"
        + format_rows(frame, top, objectives, columns)
    )


def oracle_of(metadata: Mapping[str, object]) -> Oracle | None:
    """The oracle a results file was written with (files that name none: the default one);
    None when it is not installed here."""
    try:
        return oracles.get(str(metadata.get("oracle") or oracles.DEFAULT_ORACLE))
    except AutotuneError:
        return None


def format_rows(
    frame: pd.DataFrame,
    top: int,
    objectives: Sequence[Measure] = (CYCLES,),
    shown: Sequence[TableColumn] = (),
) -> str:
    """A compact table of the top entries: the objectives, the comparisons the leaderboard
    holds, then the oracle's `shown` columns (its TableColumn declarations) where present."""

    def has(name: str) -> bool:
        return name in frame.columns and bool(frame[name].notna().any())

    names = {m.name for m in objectives}
    columns: list[tuple[str, int, Any]] = [("rank", 4, lambda r: r["rank"])]
    if has("gemm") and frame["gemm"].nunique() > 1:
        columns.append(("gemm", 10, lambda r: r["gemm"]))
    for measure in objectives:
        columns.append(
            (measure.name, max(9, len(measure.name)), lambda r, m=measure: _fmt(m.value(r)))
        )
    if has("ratio_to_chapter_best"):
        columns.append(
            (
                "vs chapter",
                10,
                lambda r: (
                    f"{1 / r['ratio_to_chapter_best']:.2f}x"
                    if pd.notna(r["ratio_to_chapter_best"])
                    else "-"
                ),
            )
        )
    if has("ratio_to_bound"):
        columns.append(
            (
                "/bound",
                7,
                lambda r: f"{r['ratio_to_bound']:.3f}" if pd.notna(r["ratio_to_bound"]) else "-",
            )
        )
    for column in shown:
        if not has(column.key) or column.unless_objective in names:
            continue
        if column.varied and frame[column.key].nunique() <= 1:
            continue  # the same on every row: a parameter no search varied
        columns.append((column.title, column.width, lambda r, c=column: c.text(r[c.key])))
    if len(objectives) > 1:
        columns.append(("pareto", 6, lambda r: "yes" if r["pareto"] else ""))
    columns.append(("verified", 8, lambda r: verified_label(r)))
    lines = [" ".join(f"{title:>{width}}" for title, width, _ in columns) + "  schedule"]
    for _, row in frame.head(top).iterrows():
        if not row["feasible"]:
            lines.append(
                f"{row['rank']:>4}  infeasible (over {_over(row)} by {row['violation']:g})  {row['family']} {row['params_json']}"
            )
            continue
        lines.append(
            " ".join(f"{str(get(row)):>{width}}" for _, width, get in columns)
            + f"  {row['params_json']}"
        )
    return "\n".join(lines)


def format_workload(frame: pd.DataFrame, metadata: Mapping[str, object]) -> str:
    """A workload run's per-layer report (autotune.results.report)."""
    from autotune.results.report import format_report

    return format_report(frame, metadata)


def format_front(frame: pd.DataFrame, metadata: Mapping[str, object]) -> str:
    """One line per Pareto machine of a co-design: its parameters (the oracle's machine columns),
    objectives and the chapter's total there."""
    oracle = oracle_of(metadata)
    objectives = measures_of(oracle, metadata.get("objectives") or ["cycles"])  # type: ignore[arg-type]
    note = "".join(
        f"; {m.name} maximised" + (f": {m.why}" if m.why else "") for m in objectives if m.maximized
    )
    search = oracle.capability(MachineSearch) if oracle is not None else None
    machine_columns = search.front_columns if search is not None else ()
    front = frame[frame["pareto"] == True] if "pareto" in frame else frame  # noqa: E712
    total_energy = str(ENERGY.total_column)
    costed = total_energy in front and bool(front[total_energy].notna().any())
    energy_head = f"{'energy pJ':>11}{'mm2':>8}" if costed else ""
    names = ", ".join(m.name for m in objectives)
    lines = [
        f"Pareto front ({names}{note}) for workload {metadata.get('workload')!r}:",
        "".join(f"{c.title:>{c.width}}" for c in machine_columns)
        + f"{'cycles':>11}{energy_head}{'chapter':>11}{'gain':>7}{'verified':>9}",
    ]
    if front.empty:
        lines.append(_no_feasible_machine(frame))
    for _, machine in front.groupby("trial", sort=False):
        r = machine.iloc[0]
        labels = {verified_label(row) for _, row in machine.iterrows()}
        verified = "yes" if labels == {"yes"} else "NO" if "NO" in labels else "-"
        gain = (
            f"{r['chapter_total_cycles'] / r['total_cycles']:.2f}x"
            if pd.notna(r["chapter_total_cycles"])
            else "-"
        )
        energy = (
            f"{_float(machine_value(r, ENERGY), '.4g'):>11}{_float(r.get(AREA.key), '.4f'):>8}"
            if costed
            else ""
        )
        lines.append(
            "".join(f"{c.text(r[c.key]):>{c.width}}" for c in machine_columns)
            + f"{r['total_cycles']:>11.0f}{energy}{_text(r['chapter_total_cycles']):>11}"
            f"{gain:>7}{verified:>9}"
        )
    return "\n".join(lines)


def _no_feasible_machine(frame: pd.DataFrame) -> str:
    """Why a co-design's front is empty: every machine it tried is over a limit."""
    if frame.empty:
        return "no machine was tried"
    nearest = frame.sort_values("violation", kind="stable").iloc[0]
    machines = frame["trial"].nunique() if "trial" in frame else len(frame)
    return (
        f"no feasible machine: all {machines} tried are over a limit; the nearest, "
        f"trial {nearest['trial']}, is over {_over(nearest)} by {nearest['violation']:g}"
    )


def _text(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.0f}"  # type: ignore[arg-type]


def _over(row: Mapping[str, object]) -> str:
    """The limits a row is over, by their constraint names, or "the limit" when not recorded."""
    text = row.get("constraints_json")
    over = (
        [k.removesuffix("_over") for k, v in json.loads(str(text)).items() if v > 0]
        if isinstance(text, str)
        else []
    )
    return f"the {' and '.join(over)} limit" if over else "the limit"


def _float(value: object, spec: str) -> str:
    return "-" if value is None or pd.isna(value) else format(float(value), spec)  # type: ignore[arg-type]


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"
