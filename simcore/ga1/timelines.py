"""The chapter's text picture of the engines: a row per engine, one character per N cycles."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from simcore.ga1.simulator import SimResult, TraceRecord
from simcore.ga1.timing import ENGINE_NAMES

_MARKS = {"dma": "D", "mxu": "M", "vpu": "V"}


def engine_rows(
    trace: Sequence[TraceRecord], cycles: int, per_char: int, engines: Sequence[str]
) -> dict[str, str]:
    """For each engine, a string with its mark where it was busy for at least half of that
    character's span of cycles, and '.' elsewhere (exact when spans align with the work)."""
    width = max(1, -(-cycles // per_char))
    busy = {engine: [0] * width for engine in engines}
    for _index, engine, start, finish, _reads, _writes, _fill in trace:
        if engine not in busy or finish <= start:
            continue
        cells = busy[engine]
        for c in range(start // per_char, min(width, -(-finish // per_char))):
            cells[c] += min(finish, (c + 1) * per_char) - max(start, c * per_char)
    return {
        engine: "".join(_MARKS[engine] if 2 * b >= per_char else "." for b in cells)
        for engine, cells in busy.items()
    }


def engine_rows_of_arrays(
    engine: np.ndarray,
    starts: np.ndarray,
    finishes: np.ndarray,
    cycles: int,
    per_char: int,
    engines: Sequence[str],
    most: int | None = None,
) -> dict[str, str]:
    """engine_rows from per-instruction arrays (engine index into ENGINE_NAMES, start, finish),
    without a trace, for at most `most` characters: an engine runs one instruction at a time, so
    its busy time up to cycle x is its finished instructions' plus the running one's share."""
    width = max(1, -(-cycles // per_char))
    width = width if most is None else min(width, most)
    edges = np.arange(width + 1, dtype=np.int64) * per_char
    out = {}
    for name in engines:
        mine = engine == ENGINE_NAMES.index(name)
        s, f = starts[mine], finishes[mine]
        done = np.concatenate([[0], np.cumsum(f - s)])
        index = np.searchsorted(f, edges, side="right")  # instructions finished by each edge
        running = (
            np.clip(edges - s[np.minimum(index, len(s) - 1)], 0, None)
            if len(s)
            else np.zeros_like(edges)
        )
        busy_until = done[index] + np.where(index < len(s), running, 0)
        busy = np.diff(busy_until)
        out[name] = "".join(np.where(2 * busy >= per_char, _MARKS[name], ".").tolist())
    return out


def timeline(
    result: SimResult, per_char: int = 4, width: int = 120, engines: Sequence[str] = ("dma", "mxu")
) -> str:
    """The picture: '  dma DDDD..' and '  mxu ..MM..', cut at `width` characters with ' ...'."""
    if result.trace is None:
        raise ValueError("timeline needs a result simulated with trace=True")
    if per_char < 1:
        raise ValueError("per_char must be at least 1")
    return draw(engine_rows(result.trace, result.cycles, per_char, engines), width)


def draw(rows: dict[str, str], width: int = 120) -> str:
    """Rows of marks as the picture's lines, each cut at `width` characters with ' ...'."""
    lines = []
    for engine, text in rows.items():
        if len(text) > width:
            text = text[:width] + " ..."
        lines.append(f"  {engine} {text}")
    return "\n".join(lines)
