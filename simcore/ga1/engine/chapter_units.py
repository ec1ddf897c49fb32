"""The loops of the chapter's families (chapter.py), as the periodic timing walks them.

Their rows follow from the position alone (no compiler state): blocked emits, per block, an
opening unit (zeros and the first loads), one unit per k step and a unit of stores, and which
slots a unit uses depends only on the block's size, the step's k modulo the buffers and whether
the step loads ahead; kouter emits a product per position, its slots chosen by the position
modulo the buffers. Level 0 is a line of blocks (a row of them, or a column with BY_COLUMNS)
or a k plane, level 1 a block of the line or a row of the plane, level 2 a unit or a product.
A position counts units (blocked: a block's units one after another) or products (kouter).
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine import stream
from simcore.ga1.engine.chapter import BI, BJ, BUFFERS, BY_COLUMNS, KT, MT, NEXT, NT, STOP, UNIT
from simcore.ga1.engine.jit import callee
from simcore.ga1.engine.rows import DONE, OUT, OUT_AT
from simcore.ga1.engine.timing import time_rows


@callee
def _lines(st: np.ndarray) -> tuple[int, int]:
    """(lines, blocks per line) of a blocked order."""
    across, along = -(-st[MT] // st[BI]), -(-st[NT] // st[BJ])
    return (along, across) if st[BY_COLUMNS] == 1 else (across, along)


@callee
def chapter_count(kind: int, st: np.ndarray, level: int, u0: int, u1: int) -> int:
    if kind == stream.KOUTER:
        return st[KT] if level == 0 else (st[MT] if level == 1 else st[NT])
    lines, per_line = _lines(st)
    return lines if level == 0 else (per_line if level == 1 else st[KT] + 2)


@callee
def chapter_start(kind: int, st: np.ndarray, u0: int, u1: int, u2: int) -> int:
    """The position of unit u2 of block (or product u2 of row) u1 of line (or plane) u0."""
    if kind == stream.KOUTER:
        return (u0 * st[MT] + u1) * st[NT] + u2
    return (u0 * _lines(st)[1] + u1) * (st[KT] + 2) + u2


@callee
def chapter_end(kind: int, st: np.ndarray) -> int:
    if kind == stream.KOUTER:
        return st[MT] * st[KT] * st[NT]
    lines, per_line = _lines(st)
    return lines * per_line * (st[KT] + 2)


@callee
def _position(kind: int, st: np.ndarray) -> int:
    return st[NEXT] if kind == stream.KOUTER else st[NEXT] * (st[KT] + 2) + st[UNIT]


@callee
def _extent_of_line(st: np.ndarray, level: int, u: int) -> int:
    """The height (level 0, a row of blocks) or width (level 1) of a blocked line or block, or
    the other way round with BY_COLUMNS."""
    rows = (level == 0) != (st[BY_COLUMNS] == 1)
    return min(st[BI], st[MT] - u * st[BI]) if rows else min(st[BJ], st[NT] - u * st[BJ])


@callee
def chapter_kind(
    kind: int, st: np.ndarray, level: int, u0: int, u1: int, u2: int, out: np.ndarray
) -> int:
    buffers = st[BUFFERS]
    if kind == stream.KOUTER:
        first = (
            u0 * st[MT] * st[NT]
            if level == 0
            else chapter_start(kind, st, u0, u1, 0 if level == 1 else u2)
        )
        out[0], out[1] = 1 if u0 == 0 else 0, first % buffers
        return 2
    if level < 2:
        out[0] = _extent_of_line(st, level, u0 if level == 0 else u1)
        return 1
    if u2 == 0 or u2 == st[KT] + 1:
        out[0] = u2
        return 1
    k = u2 - 1
    out[0], out[1], out[2] = -1, k % buffers, 1 if k + buffers - 1 < st[KT] else 0
    return 3


@callee
def chapter_extent2(kind: int, st: np.ndarray, index: int, period: int) -> int:
    """The first unit at or after `index` whose kind is not that of the unit `period` before it
    (level 2), or `index` when the stretch is not periodic from there."""
    buffers = st[BUFFERS]
    if period % buffers != 0:
        return index
    if kind == stream.KOUTER:
        return st[NT]
    # steps k <= kt - buffers load ahead: units 1 .. kt - buffers + 1
    loading_end = st[KT] - buffers + 2
    if index - period >= 1 and index < loading_end:
        return loading_end
    return index


@callee
def run_chapter_until(
    kind: int, st: np.ndarray, clock: np.ndarray, stop: int, times: np.ndarray
) -> int:
    """Emit and time the chapter generator's rows up to position `stop` (or its end). Returns -1,
    or the first malformed row of the last chunk."""
    st[STOP] = stop
    while True:
        stream.chapter_chunk(kind, st)
        bad = time_rows(clock, st[st[OUT_AT] :], st[OUT], times)
        if bad >= 0:
            return bad
        if st[DONE] == 1 or _position(kind, st) >= stop:
            return -1


@callee
def chapter_restore(kind: int, st: np.ndarray, u0: int, u1: int, u2: int) -> None:
    """The generator at the start of unit (u0, u1, u2): its rows follow from the position alone."""
    if kind == stream.KOUTER:
        st[NEXT] = chapter_start(kind, st, u0, u1, u2)
    else:
        st[NEXT], st[UNIT] = u0 * _lines(st)[1] + u1, u2
    st[OUT], st[DONE] = 0, 0
