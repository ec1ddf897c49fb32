"""The chapter's text picture of the engines: a row per engine, one character per N cycles."""
from __future__ import annotations

from typing import Sequence

from simcore.ga1.simulate import SimResult, TraceRecord

_MARKS = {"dma": "D", "mxu": "M", "vpu": "V"}


def engine_rows(trace: Sequence[TraceRecord], cycles: int, per_char: int, engines: Sequence[str]) -> dict[str, str]:
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
    return {engine: "".join(_MARKS[engine] if 2 * b >= per_char else "." for b in cells)
            for engine, cells in busy.items()}


def timeline(result: SimResult, per_char: int = 4, width: int = 120, engines: Sequence[str] = ("dma", "mxu")) -> str:
    """The picture: '  dma DDDD..' and '  mxu ..MM..', cut at `width` characters with ' ...'."""
    if result.trace is None:
        raise ValueError("timeline needs a result simulated with trace=True")
    if per_char < 1:
        raise ValueError("per_char must be at least 1")
    rows = engine_rows(result.trace, result.cycles, per_char, engines)
    lines = []
    for engine in engines:
        text = rows[engine]
        if len(text) > width:
            text = text[:width] + " ..."
        lines.append(f"  {engine} {text}")
    return "\n".join(lines)
