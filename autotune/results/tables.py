"""The parquet files autotune writes, each kind with its own schema version in the metadata,
and how each is printed. `leaderboard` reads every kind: leaderboard and pareto (a study's
ranked entries), workload (each GEMM's winner), baseline and sweep (hand-written schedules).

Schema history: leaderboard, pareto and workload 2 added gemm, weight, weighted_cycles,
verification and verification_detail to schema 1 (no column renamed or dropped); `verified`
is true only for an exact check. Schema 3 adds `timing` (how the cycles were timed: full or
periodic) and `origin` (where the candidate came from: baseline, enqueued, transfer, grid,
optimum, refine, explore, random). baseline and sweep are at 1 (files older than the version
key read as 1)."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from autotune import __version__
from autotune.errors import ResultsError
from autotune.results.files import read_parquet, write_parquet
from autotune.results.labels import VERIFIED_LABELS  # noqa: F401 - read by the tables' readers
from autotune.search.problem import objective_value

SCHEMAS: dict[str, int] = {"leaderboard": 3, "pareto": 3, "workload": 3, "baseline": 1, "sweep": 1}
READABLE: dict[str, frozenset[object]] = {"leaderboard": frozenset({1, 2, 3}), "pareto": frozenset({1, 2, 3}),
                                          "workload": frozenset({1, 2, 3}), "baseline": frozenset({None, 1}),
                                          "sweep": frozenset({None, 1})}


def write(kind: str, frame: pd.DataFrame, path: Path, metadata: Mapping[str, object]) -> Path:
    return write_parquet(frame, path, {**metadata, "kind": kind, "schema": SCHEMAS[kind], "autotune_version": __version__})


def read(path: Path) -> tuple[pd.DataFrame, dict[str, object]]:
    """A parquet file autotune wrote, of a kind and schema version it can read."""
    try:
        frame, metadata = read_parquet(path)
    except Exception as exc:
        raise ResultsError(f"cannot read {path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    kind, schema = metadata.get("kind"), metadata.get("schema")
    if kind == "leaderboard" and metadata.get("variant") == "pareto":  # schema 1 wrote a front as a variant
        kind = metadata["kind"] = "pareto"
    if kind not in READABLE or schema not in READABLE[kind]:  # type: ignore[operator]
        known = ", ".join(f"{k} {'/'.join(str(v) for v in sorted(s, key=str) if v)}" for k, s in READABLE.items())
        raise ResultsError(f"{path} is not an autotune result this version reads (kind {kind!r}, schema {schema!r}; reads {known})")
    return frame, metadata


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Nullable integer, float and boolean columns for frames built from plain rows."""
    for column in frame.columns:
        present = [v for v in frame[column] if v is not None and not (isinstance(v, float) and v != v)]
        if present and all(isinstance(v, bool) for v in present):
            frame[column] = frame[column].astype("boolean")
        elif present and all(isinstance(v, int) for v in present):
            frame[column] = frame[column].astype("Int64")
        elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            frame[column] = frame[column].astype("Float64")
    return frame


def describe(frame: pd.DataFrame, metadata: Mapping[str, object], top: int) -> str:
    """A file's table, the way the command that wrote it prints it."""
    kind = metadata.get("kind")
    if kind == "workload":
        return format_workload(frame, metadata)
    if kind in ("baseline", "sweep"):
        columns = [c for c in ("m", "k", "n", "slots", "dma_setup", "dma_words_per_cycle", "schedule", "fits", "cycles",
                               "mxu_util", "vs_best", "verified") if c in frame]
        return f"{kind} of {metadata.get('shape')}, {len(frame)} rows\n" + frame[columns].head(top).to_string(index=False)
    objectives = tuple(metadata.get("objectives") or ("cycles",))  # type: ignore[arg-type]
    head = f"study {metadata.get('study')!r}, shape {metadata.get('shape')}, {len(frame)} distinct entries"
    if metadata.get("variant") == "codesign" or (kind == "pareto" and "total_cycles" in frame):
        return head + "\n" + format_front(frame, metadata)
    return head + ("" if kind != "pareto" else " on the Pareto front") + "\n" + format_rows(frame, top, objectives)  # type: ignore[arg-type]


def verified_label(row: Mapping[str, object]) -> str:
    """yes only for an exact check; the level of a weaker one; NO for a failure."""
    verified, level = row.get("verified"), row.get("verification")
    if verified is False:
        return "NO"
    if verified is True:
        return "yes"
    return str(level) if isinstance(level, str) and level not in ("none", "exact") else "-"


def format_rows(frame: pd.DataFrame, top: int, objectives: Sequence[str] = ("cycles",)) -> str:
    """A compact table of the top entries; columns follow what the leaderboard holds."""
    def has(name: str) -> bool:
        return name in frame.columns and bool(frame[name].notna().any())

    columns: list[tuple[str, int, object]] = [("rank", 4, lambda r: r["rank"])]
    if has("gemm") and frame["gemm"].nunique() > 1:
        columns.append(("gemm", 10, lambda r: r["gemm"]))
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
    columns.append(("verified", 8, lambda r: verified_label(r)))
    lines = [" ".join(f"{title:>{width}}" for title, width, _ in columns) + "  schedule"]
    for _, row in frame.head(top).iterrows():
        if not row["feasible"]:
            lines.append(f"{row['rank']:>4}  infeasible (over the limit by {row['violation']:g})  {row['family']} {row['params_json']}")
            continue
        lines.append(" ".join(f"{str(get(row)):>{width}}" for _, width, get in columns) + f"  {row['params_json']}")  # type: ignore[operator]
    return "\n".join(lines)


def format_workload(frame: pd.DataFrame, metadata: Mapping[str, object]) -> str:
    machine = dict(metadata.get("machine") or {})  # type: ignore[call-overload]
    lines = [f"workload {metadata.get('workload')!r} on {machine.get('slots')} slots "
             f"({','.join(f'{k}={v}' for k, v in machine.items())})",
             f"{'gemm':<12}{'shape':>14}{'weight':>8}{'cycles':>10}{'weighted':>12}{'chapter':>10}{'vs ch.':>8}{'verified':>9}  schedule"]
    for _, r in frame.iterrows():
        ratio = r.get("ratio_to_chapter_best")
        ratio_text = f"{1 / ratio:.2f}x" if ratio is not None and pd.notna(ratio) else "-"
        cycles, weighted, chapter = (_text(r.get(c)) for c in ("cycles", "weighted_cycles", "chapter_best_cycles"))
        lines.append(f"{r['name']:<12}{r['shape']:>14}{r['weight']:>8g}{cycles:>10}{weighted:>12}"
                     f"{chapter:>10}{ratio_text:>8}{verified_label(r):>9}  {r.get('schedule') or 'no feasible schedule'}")
    total, chapter_total = metadata.get("weighted_cycles"), metadata.get("chapter_weighted_cycles")
    if total:
        lines.append(f"weighted total {float(total):.0f} cycles; the chapter's families (best hand-written schedule per GEMM) "  # type: ignore[arg-type]
                     f"{float(chapter_total):.0f}: {float(chapter_total) / float(total):.2f}x")  # type: ignore[arg-type]
    return "\n".join(lines)


def format_front(frame: pd.DataFrame, metadata: Mapping[str, object]) -> str:
    """One line per Pareto machine of a co-design: its parameters, objectives and the chapter's total there."""
    objectives = list(metadata.get("objectives") or ["cycles"])  # type: ignore[call-overload]
    note = "; mxu_cycles maximised: a slower unit is cheaper" if "mxu_cycles" in objectives else ""
    front = frame[frame["pareto"] == True] if "pareto" in frame else frame  # noqa: E712
    lines = [f"Pareto front ({', '.join(objectives)}{note}) for workload {metadata.get('workload')!r}:",
             f"{'slots':>5}{'spad words':>11}{'setup':>6}{'words/cyc':>10}{'mxu_cyc':>8}{'cycles':>11}{'chapter':>11}{'gain':>7}{'verified':>9}"]
    for _, machine in front.groupby("trial", sort=False):
        r = machine.iloc[0]
        labels = {verified_label(row) for _, row in machine.iterrows()}
        verified = "yes" if labels == {"yes"} else "NO" if "NO" in labels else "-"
        gain = f"{r['chapter_total_cycles'] / r['total_cycles']:.2f}x" if pd.notna(r["chapter_total_cycles"]) else "-"
        lines.append(f"{r['slots']:>5}{r['scratchpad_words']:>11}{r['dma_setup']:>6}{r['dma_words_per_cycle']:>10}"
                     f"{r['mxu_cycles']:>8}{r['total_cycles']:>11.0f}{_text(r['chapter_total_cycles']):>11}{gain:>7}{verified:>9}")
    return "\n".join(lines)


def _text(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.0f}"  # type: ignore[arg-type]


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"
