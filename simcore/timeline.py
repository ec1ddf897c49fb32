"""The chapter's text picture of the engines: a row per engine, one character per N cycles."""
from __future__ import annotations

from typing import Sequence

from simcore.simulate import SimResult, TraceRecord

_MARKS = {"dma": "D", "mxu": "M", "vpu": "V"}


def engine_rows(trace: Sequence[TraceRecord], cycles: int, per_char: int, engines: Sequence[str]) -> dict[str, str]:
    """For each engine, a string with its mark where it was busy at some point in that
    character's span of cycles, and '.' where it was idle throughout."""
    width = max(1, -(-cycles // per_char))
    cells = {engine: bytearray(b"." * width) for engine in engines}
    for _index, engine, start, finish, _reads, _writes, _fill in trace:
        if engine not in cells or finish <= start:
            continue
        row = cells[engine]
        mark = ord(_MARKS[engine])
        for c in range(start // per_char, min(width, -(-finish // per_char))):
            row[c] = mark
    return {engine: row.decode() for engine, row in cells.items()}


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
