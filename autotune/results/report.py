"""The per-layer report of a workload run: where the time goes.

Each GEMM's best cycles, its weight (runs per workload step), its share of the weighted total
(weight x cycles / the sum of weight x cycles over the GEMMs), the unit's utilisation and the
ratio of its cycles to the oracle's proven lower bound. The three layers that cost most and the
layers furthest from their bound close the report. Pure functions of a workload summary frame
(results/<run>/workload.parquet); the bar chart goes through autotune.results.plots."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, cast

import numpy as np
import pandas as pd

from workloads.listing import weight_text

COSTLIEST = 3  # layers named as costing most
FURTHEST = 3  # layers named as furthest from their bound
UTILISATION = ("mxu_util", "mac_utilization")  # the busy fraction each oracle reports
CHART_LAYERS = 30  # the costliest layers drawn; the rest summed into one bar


def with_report_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The summary with share, utilisation and ratio_to_bound (from bound_cycles when the
    leaderboard had none); a GEMM without a feasible schedule has none of them."""
    frame = frame.copy()
    if "weight" not in frame:
        return frame  # no GEMM ran
    weighted = frame["weight"].astype("Float64") * _column(frame, "cycles")
    total = float(weighted.sum()) if len(frame) else 0.0
    frame["weighted_cycles"] = weighted
    frame["share"] = (
        (weighted / total) if total > 0 else pd.Series([pd.NA] * len(frame), dtype="Float64")
    )
    busy = pd.Series([pd.NA] * len(frame), dtype="Float64", index=frame.index)
    for name in UTILISATION:
        if name in frame:
            busy = busy.fillna(frame[name].astype("Float64"))
    frame["utilisation"] = busy
    bound = _column(frame, "bound_cycles")
    ratio = _column(frame, "cycles") / bound.where(bound > 0)
    frame["ratio_to_bound"] = _column(frame, "ratio_to_bound").fillna(ratio)
    return frame


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name not in frame:
        return pd.Series([pd.NA] * len(frame), dtype="Float64", index=frame.index)
    return frame[name].astype("Float64")


def costliest(frame: pd.DataFrame, count: int = COSTLIEST) -> pd.DataFrame:
    """The `count` GEMMs with the largest share, largest first (ties by name)."""
    found = frame[frame["share"].notna()]
    return found.sort_values(["share", "name"], ascending=[False, True], kind="stable").head(count)


def furthest_from_bound(frame: pd.DataFrame, count: int = FURTHEST) -> pd.DataFrame:
    """The `count` GEMMs whose cycles are the most times their lower bound (ties by name)."""
    found = frame[frame["ratio_to_bound"].notna()]
    return found.sort_values(
        ["ratio_to_bound", "name"], ascending=[False, True], kind="stable"
    ).head(count)


def _pct(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.1%}"  # type: ignore[arg-type]


def _num(value: object, spec: str) -> str:
    """A value of the table; a whole count exactly (a float holds 53 bits)."""
    if value is None or pd.isna(value):  # type: ignore[call-overload]
        return "-"
    if spec == ".0f" and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value))
    return format(float(value), spec)  # type: ignore[arg-type]


# The table's columns after the GEMM's name and their least widths; a wider value widens its
# column, and one space always separates two columns.
_COLUMNS = (
    ("shape", 14),
    ("weight", 7),
    ("cycles", 10),
    ("weighted", 12),
    ("share", 6),
    ("util", 5),
    ("bound", 10),
    ("/bound", 7),
)
_CHAPTER = (("chapter", 9), ("vs ch.", 7))
_ENERGY = (("pJ/MAC", 7),)
_VERIFIED = (("verified", 8),)


def table_lines(frame: pd.DataFrame, columns: Mapping[str, bool]) -> list[str]:
    """One line per GEMM: the report's columns, then the optional ones `columns` turns on
    (chapter: the chapter's best and the gain over it; energy: pJ/MAC)."""
    heads = (
        _COLUMNS
        + (_CHAPTER if columns.get("chapter") else ())
        + (_ENERGY if columns.get("energy") else ())
        + _VERIFIED
    )
    rows = [(str(r["name"]), _cells(r, columns), _schedule(r)) for _, r in frame.iterrows()]
    name_width = max([4, *(len(name) for name, _, _ in rows)])
    widths = [
        max([least, len(head), *(len(cells[i]) for _, cells, _ in rows)])
        for i, (head, least) in enumerate(heads)
    ]

    def line(name: str, cells: list[str], schedule: str) -> str:
        row = " ".join(cell.rjust(width) for cell, width in zip(cells, widths))
        return f"{name:<{name_width}}  {row}  {schedule}"

    return [line("gemm", [h for h, _ in heads], "schedule")] + [line(*row) for row in rows]


def _cells(r: pd.Series, columns: Mapping[str, bool]) -> list[str]:
    from autotune.results.labels import verified_label

    cells = [
        str(r["shape"]),
        weight_text(float(r["weight"])),
        _num(r.get("cycles"), ".0f"),
        _num(r.get("weighted_cycles"), ".0f"),
        _pct(r.get("share")),
        _num(r.get("utilisation"), ".0%"),
        _num(r.get("bound_cycles"), ".0f"),
        _num(r.get("ratio_to_bound"), ".3f"),
    ]
    if columns.get("chapter"):
        ratio = r.get("ratio_to_chapter_best")
        gain = (
            f"{1 / float(ratio):.2f}x" if ratio is not None and pd.notna(ratio) and ratio else "-"
        )
        cells += [_num(r.get("chapter_best_cycles"), ".0f"), gain]
    if columns.get("energy"):
        cells.append(_num(r.get("energy_per_mac_pj"), ".4g"))
    return cells + [verified_label(r)]


def _schedule(r: pd.Series) -> str:
    schedule = r.get("schedule")
    if isinstance(schedule, str) and schedule:
        return schedule
    return "not tuned" if r.get("trials") == 0 else "no feasible schedule"


def where_the_time_goes(frame: pd.DataFrame) -> list[str]:
    """The closing lines: the costliest layers and the layers furthest from their bound."""
    top = costliest(frame)
    if top.empty:
        return ["where the time goes: no GEMM has a feasible schedule"]
    names = ", ".join(f"{r['name']} {_pct(r['share'])}" for _, r in top.iterrows())
    lines = [
        f"costliest {len(top)}: {names} (together {_pct(top['share'].sum())} of the weighted cycles)"
    ]
    far = furthest_from_bound(frame)
    if far.empty:
        lines.append("furthest from bound: the oracle proves no lower bound for these shapes")
    elif float(far["ratio_to_bound"].iloc[0]) <= 1.0:
        lines.append("furthest from bound: none, every GEMM meets its lower bound")
    else:
        far = far[far["ratio_to_bound"] > 1.0]
        lines.append(
            "furthest from bound: "
            + ", ".join(
                f"{r['name']} {float(r['ratio_to_bound']):.3f}x ({_pct(r['share'])} of the time)"
                for _, r in far.iterrows()
            )
        )
    return lines


def chart(frame: pd.DataFrame, metadata: Mapping[str, object], path: Path) -> Path:
    """A bar per GEMM (costliest first): its share of the weighted cycles, and its cycles over
    its bound; past CHART_LAYERS the remaining GEMMs are one bar."""
    from autotune.results import plots

    ranked = frame[frame["share"].notna()].sort_values(
        ["share", "name"], ascending=[False, True], kind="stable"
    )
    shown, rest = ranked.head(CHART_LAYERS), ranked.iloc[CHART_LAYERS:]
    names = [str(n) for n in shown["name"]]
    shares = [float(s) for s in shown["share"]]
    ratios = [float(v) if pd.notna(v) else None for v in shown["ratio_to_bound"]]
    if len(rest):
        names.append(f"{len(rest)} others")
        shares.append(float(rest["share"].sum()))
        ratios.append(None)
    total = metadata.get("weighted_cycles")
    title = f"workload {metadata.get('workload')}: {len(frame)} GEMMs" + (
        f", {float(cast(float, total)):,.0f} weighted cycles" if total else ""
    )
    return plots.layers_png(plots.Layers(tuple(names), tuple(shares), tuple(ratios)), title, path)


def format_report(frame: pd.DataFrame, metadata: Mapping[str, object]) -> str:
    """The printed report: what ran where, one line per GEMM, the totals, where the time goes."""
    frame = with_report_columns(frame)
    machine = dict(metadata.get("machine") or {})  # type: ignore[call-overload]
    area = metadata.get("area_mm2")
    instances = float(frame["weight"].sum()) if len(frame) else 0.0
    lines = [
        f"workload {metadata.get('workload')!r}: {len(frame)} GEMMs ({weight_text(instances)} runs)"
        + (f" on the {metadata['oracle']} oracle" if metadata.get("oracle") else "")
        + f" ({','.join(f'{k}={v}' for k, v in machine.items())})"
        + (f", {float(cast(float, area)):.4f} mm2" if area else "")
    ]
    has_chapter = "chapter_best_cycles" in frame and bool(
        frame["chapter_best_cycles"].notna().any()
    )
    has_energy = "energy_per_mac_pj" in frame and bool(frame["energy_per_mac_pj"].notna().any())
    lines += table_lines(frame, {"chapter": has_chapter, "energy": has_energy})
    lines += total_lines(frame, metadata, has_chapter)
    if metadata.get("weighted_energy_pj"):
        lines.append(f"weighted total energy {float(metadata['weighted_energy_pj']):.4g} pJ")  # type: ignore[arg-type]
    return "\n".join(lines + where_the_time_goes(frame))


def total_lines(
    frame: pd.DataFrame, metadata: Mapping[str, object], has_chapter: bool
) -> list[str]:
    """The weighted totals, the chapter's and the bounds' over the same GEMMs: those tuned (an
    interrupted workload leaves some without a schedule, and says so)."""
    tuned = frame[_column(frame, "cycles").notna()] if len(frame) else frame
    count = int(metadata.get("gemms") or len(frame))  # type: ignore[call-overload]
    lines = []
    if len(tuned) < count:
        lines.append(f"{len(tuned)} of {count} GEMMs tuned; the totals are over those")
    total = metadata.get("weighted_cycles")
    if not total or tuned.empty:
        return lines
    text = f"weighted total {float(total):.0f} cycles"  # type: ignore[arg-type]
    weight = tuned["weight"].astype("Float64")
    chapter = _column(tuned, "chapter_best_cycles")
    if has_chapter and bool(chapter.notna().any()):
        chapter_total = float((weight * chapter).sum())
        text += (
            f"; the chapter's families (best hand-written schedule per GEMM) {chapter_total:.0f}: "
            f"{chapter_total / float(total):.2f}x"  # type: ignore[arg-type]
        )
    bound = _column(tuned, "bound_cycles")
    bound_total = float((weight * bound).sum()) if bool(bound.notna().all()) else 0.0
    if bound_total > 0:
        text += f"; the bounds' {bound_total:.0f}: {float(total) / bound_total:.3f}x"  # type: ignore[arg-type]
    return lines + [text]
