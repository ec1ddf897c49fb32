"""Pictures of a study: optimisation history, Pareto front(s), an engine timeline, and the
per-layer bars of a workload run.

Pure functions of their data, each writing one PNG; matplotlib is imported (with the Agg
backend, no display needed) inside each function so the rest of autotune never needs it."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from autotune.oracles.capabilities import Timeline
from autotune.results.files import atomically

MARK_KEY, MARK_TEXT = "autotune", "plot"  # a PNG text chunk: a picture autotune drew
SIZE = (10, 4)
DPI = 120
FONT = 10


@dataclass(frozen=True)
class Reference:
    """A horizontal line on the history plot (the chapter's best, a lower bound)."""

    label: str
    value: float
    style: str = "--"
    color: str = "tab:gray"


@dataclass(frozen=True)
class Front:
    """One Pareto panel: every feasible point, and which of them are non-dominated. `staircase`:
    the front is over exactly these two axes (drawn as steps); otherwise the panel is a
    projection of a front over more objectives, or of another measure. `limit`: a budget on x."""

    x_label: str
    y_label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    pareto: tuple[bool, ...]
    staircase: bool = True
    limit: float | None = None
    front_label: str = "Pareto front"


def _pyplot():
    if "matplotlib" not in sys.modules:
        # matplotlib validates MPLBACKEND on import (a bad one is a traceback); the pictures
        # are files, drawn by Agg whatever the environment names.
        os.environ["MPLBACKEND"] = "Agg"
    import matplotlib

    matplotlib.use("Agg")  # files only: works on a server without a display
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": FONT})
    return plt


def best_so_far(values: Sequence[float]) -> list[float]:
    found, best = [], float("inf")
    for value in values:
        best = min(best, value)
        found.append(best)
    return found


def history_png(
    trials: Sequence[int],
    values: Sequence[float],
    references: Sequence[Reference],
    title: str,
    path: Path,
    y_label: str = "cycles",
) -> Path:
    """Each trial's value (dots) and the best so far (a step line) against the trial number."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=SIZE)
    ax.scatter(trials, values, s=10, color="tab:blue", alpha=0.35, label="trial")
    ax.step(
        trials,
        best_so_far(values),
        where="post",
        color="tab:blue",
        linewidth=2,
        label="best so far",
    )
    for ref in references:
        ax.axhline(
            ref.value,
            linestyle=ref.style,
            color=ref.color,
            linewidth=1.5,
            label=f"{ref.label}: {ref.value:,.0f}",
        )
    finite = [v for v in values] + [r.value for r in references]
    if finite and max(finite) / max(min(finite), 1) > 8:
        ax.set_yscale("log")  # a few terrible trials would flatten the interesting part
    ax.set_xlabel("trial")
    ax.set_ylabel(y_label)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=FONT - 1)
    return _save(fig, plt, path)


def pareto_png(fronts: Sequence[Front], title: str, path: Path) -> Path:
    """One panel per (cycles, other objective) pair: the front highlighted, the rest grey."""
    plt = _pyplot()
    fig, axes = plt.subplots(
        1, len(fronts), figsize=(max(SIZE[0], 5 * len(fronts)), SIZE[1] + 0.5), squeeze=False
    )
    for ax, front in zip(axes[0], fronts):
        rest = [(x, y) for x, y, p in zip(front.x, front.y, front.pareto) if not p]
        best = sorted((x, y) for x, y, p in zip(front.x, front.y, front.pareto) if p)
        if rest:
            ax.scatter(
                *zip(*rest),
                s=18,
                color="lightgray",
                edgecolor="gray",
                linewidth=0.5,
                label="dominated",
            )
        if best:
            if front.staircase:
                ax.step(*zip(*best), where="post", color="tab:red", linewidth=1, alpha=0.6)
            ax.scatter(*zip(*best), s=40, color="tab:red", zorder=3, label=front.front_label)
        if front.limit is not None:
            ax.axvline(
                front.limit,
                linestyle="--",
                color="black",
                linewidth=1,
                label=f"budget {front.limit:.4g}",
            )
        ax.set_xlabel(front.x_label)
        ax.set_ylabel(front.y_label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=FONT - 1)
    fig.suptitle(title)
    return _save(fig, plt, path)


# The colours of a timeline's engines, in its order.
ENGINE_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def _bars(spans: np.ndarray) -> list[tuple[int, int]]:
    return [(int(start), int(finish - start)) for start, finish in spans]


def timeline_png(timeline: Timeline, title: str, path: Path) -> Path:
    """The engines over the whole run; below, the first `zoom` cycles, where single
    transfers and products can be told apart."""
    plt = _pyplot()
    cycles, zoom = timeline.cycles, timeline.zoom
    panels = [(cycles, timeline.spans)] + (
        [(zoom, timeline.first)] if zoom and zoom < cycles else []
    )
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(SIZE[0], 2.2 + 1.8 * len(panels)), squeeze=False
    )
    for ax, (high, rows) in zip(axes[:, 0], panels):
        engines = list(zip(timeline.engines, ENGINE_COLOURS))
        for row, ((name, color), spans) in enumerate(zip(engines, rows)):
            if len(spans):
                ax.broken_barh(
                    _bars(spans),
                    (row - 0.35, 0.7),
                    facecolors=color,
                    edgecolor="white" if high < cycles else color,
                    linewidth=0.4,
                    label=name,
                )
        ax.set_yticks(range(len(engines)), [name for name, _ in engines])
        ax.set_ylim(-0.6, len(engines) - 0.4)
        ax.set_xlim(0, high)
        ax.set_xlabel("cycle")
        ax.invert_yaxis()
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_title(
            title if high == cycles else f"first {high:,} cycles",
            fontsize=FONT + (1 if high == cycles else 0),
        )
    axes[0, 0].legend(
        loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=FONT - 1, frameon=False
    )
    return _save(fig, plt, path)


@dataclass(frozen=True)
class Layers:
    """A workload's GEMMs, costliest first: each one's share of the weighted cycles and its
    cycles over its lower bound (None: no bound)."""

    names: tuple[str, ...]
    shares: tuple[float, ...]
    ratios: tuple[float | None, ...]


def layers_png(layers: Layers, title: str, path: Path) -> Path:
    """Two bar panels, one bar per GEMM: share of the weighted cycles, and cycles / bound."""
    plt = _pyplot()
    rows = list(range(len(layers.names)))
    fig, (share_ax, bound_ax) = plt.subplots(
        1,
        2,
        figsize=(SIZE[0] + 2, 1.5 + 0.28 * max(len(rows), 4)),
        sharey=True,
        gridspec_kw={"width_ratios": [3, 2]},
    )
    share_ax.barh(rows, [100 * s for s in layers.shares], color="tab:blue")
    for row, share in zip(rows, layers.shares):
        share_ax.text(100 * share, row, f" {share:.1%}", va="center", fontsize=FONT - 2)
    share_ax.set_yticks(rows, layers.names, fontsize=FONT - 1)
    share_ax.invert_yaxis()
    share_ax.set_xlabel("share of weighted cycles (%)")
    share_ax.set_xlim(0, 100 * max(layers.shares, default=0.0) * 1.2 + 1e-9)
    bounded = [(row, r) for row, r in zip(rows, layers.ratios) if r is not None]
    if bounded:
        # Bars start at the bound: their length is how far each GEMM is from it.
        bound_ax.barh(
            [row for row, _ in bounded], [r - 1 for _, r in bounded], left=1.0, color="tab:orange"
        )
        for row, ratio in bounded:
            bound_ax.text(ratio, row, f" {ratio:.3f}x", va="center", fontsize=FONT - 2)
        bound_ax.axvline(1.0, color="black", linewidth=1, linestyle=":", label="lower bound")
        worst = max(r for _, r in bounded)
        if worst > 4:  # one far layer would flatten the rest
            bound_ax.set_xscale("log")
            bound_ax.set_xlim(1.0, worst * 2)
        else:
            bound_ax.set_xlim(1.0, 1.0 + (worst - 1.0) * 1.25 + 0.02)
        bound_ax.legend(loc="lower right", fontsize=FONT - 1)
    else:
        bound_ax.text(0.5, 0.5, "no lower bound", transform=bound_ax.transAxes, ha="center")
    bound_ax.set_xlabel("cycles / lower bound")
    for ax in (share_ax, bound_ax):
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(title)
    return _save(fig, plt, path)


def _save(fig, plt, path: Path) -> Path:
    try:
        fig.tight_layout()
        with atomically(path) as temporary:
            fig.savefig(
                temporary, dpi=DPI, format="png", metadata={MARK_KEY: MARK_TEXT}
            )  # the mark that lets a redraw replace it without --force
    finally:
        plt.close(fig)
    return path


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def drawn_by_autotune(path: Path) -> bool:
    """Whether `path` is a PNG picture autotune drew (its tEXt mark, before the image data)."""
    try:
        with open(path, "rb") as handle:
            if handle.read(8) != _PNG_SIGNATURE:
                return False
            for _ in range(64):  # the mark is among the first chunks
                head = handle.read(8)
                if len(head) < 8:
                    return False
                size, kind = int.from_bytes(head[:4], "big"), head[4:]
                if kind == b"IDAT" or size > 1 << 20:
                    return False
                data = handle.read(size)
                handle.read(4)  # the chunk's CRC
                if kind == b"tEXt" and data == f"{MARK_KEY}\0{MARK_TEXT}".encode("latin-1"):
                    return True
    except OSError:
        return False
    return False
