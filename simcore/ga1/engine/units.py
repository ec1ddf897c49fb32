"""The loops of a compiled generator's product order, as the periodic timing walks them: three
levels of units, each unit a run of products.

Blocks (order.py): level 0 is a row band of the frame, level 1 a block of it (in visiting order),
level 2 a k step of the block (then its tail, cell by cell, as one unit). Strips (strip_order.py):
level 0 is a strip, level 1 a block of it, level 2 a k step. A unit's position is the number of
its first product in the order (what the compiler counts), its key that product's key.

A unit's kind lists everything about it that the order's records depend on, relative to the
unit's origin (its first row, column and k): its size and cell table, its k direction, and the
same of the units its operands are next used in (the next block, the block below, the next
strip's blocks that hold its rows, with how those line up). Two stretches of units whose kinds
agree one by one stream records that agree, tile for tile relative to their origins, and keys that
compare alike: what makes a stretch of the order periodic.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import inline
from simcore.ga1.engine.order import (
    band_holding,
    general_block,
    general_next_col,
    general_next_row,
)
from simcore.ga1.engine.plan import (
    BLOCK_SPAN,
    COL_START_AT,
    KT,
    N_CB,
    N_RB,
    NEVER,
    NT,
    SERPENTINE,
    STEP,
    STRIPS,
    STRUCTURE,
    TAIL,
    UNITS,
)
from simcore.ga1.engine.rotate_units import (
    position,
    rotate_far_key,
    rotate_far_next,
    rotate_kind,
    rotate_origin,
    stretch_end,
    stretch_start,
)
from simcore.ga1.engine.strip_order import (
    LONG,
    N_STRIPS,
    S_BASE,
    S_BIG,
    S_COUNT,
    S_FIRST_BLOCK,
    S_N_BIG,
    S_REVERSED,
    S_SMALL,
    S_TABLES,
    S_W,
    STRIP_FIELDS,
    STRIPS_AT,
    strip_block,
    strip_next_col,
    strip_next_row,
)

Block = tuple[int, int, int, int, int, int, int]  # record.py's description of a block
Origin = tuple[int, int, int, int, int]  # see origin
ROW, COL, ACC = 1, 2, 3  # a tile's role in the frame: a row's operand, a column's, an accumulator
NO_KIND = -7  # stands for a neighbour that does not exist


@inline
def _reversed_band(st: np.ndarray, r: int) -> bool:
    return st[SERPENTINE] == 1 and r % 2 == 1


@inline
def block_at(st: np.ndarray, u0: int, u1: int) -> Block:
    """Block u1 (in visiting order) of band or strip u0, as record.py describes blocks."""
    if st[STRUCTURE] == STRIPS:
        return strip_block(st, u0, u1)
    return general_block(st, u0 * st[N_CB] + u1)


@inline
def unit_count(st: np.ndarray, level: int, u0: int, u1: int) -> int:
    """How many units of `level` its parent (u0, or u0 and u1) holds."""
    strips = st[STRUCTURE] == STRIPS
    if st[STRUCTURE] == UNITS:  # bands, the band, the stretches of its units entering
        return st[N_RB] if level == 0 else (1 if level == 1 else st[NT])
    if level == 0:
        return st[N_STRIPS] if strips else st[N_RB]
    if level == 1:
        return st[st[STRIPS_AT] + u0 * STRIP_FIELDS + S_COUNT] if strips else st[N_CB]
    return st[KT] - st[TAIL] + (1 if st[TAIL] > 0 else 0)


@inline
def block_position(st: np.ndarray, u0: int, u1: int, block: Block) -> int:
    """The number of the block's first product in the order."""
    base, row0, h, col0, w, _table, _down = block
    if st[STRUCTURE] == STRIPS:
        return base  # the strips' keys are product numbers
    # columns of the band's earlier blocks
    before = st[NT] - col0 - w if _reversed_band(st, u0) else col0
    return st[KT] * (row0 * st[NT] + h * before)


@inline
def unit_start(st: np.ndarray, u0: int, u1: int, u2: int) -> tuple[int, int]:
    """(position, key) of step (or tail) u2 of block u1 of band or strip u0 (of stretch u2 of
    band u0 for a rotating window)."""
    if st[STRUCTURE] == UNITS:
        t = stretch_start(st, u0, u2)
        return position(st, t), t * st[STEP]
    block = block_at(st, u0, u1)
    hw = block[2] * block[4]
    return block_position(st, u0, u1, block) + u2 * hw, block[0] + u2 * hw


@inline
def unit_length(st: np.ndarray, u0: int, u1: int, u2: int) -> int:
    """Products of step (or tail) u2 of the block (of stretch u2 of band u0)."""
    if st[STRUCTURE] == UNITS:
        return position(st, stretch_end(st, u0, u2)) - position(st, stretch_start(st, u0, u2))
    block = block_at(st, u0, u1)
    plain = st[KT] - st[TAIL]
    return block[2] * block[4] * (1 if u2 < plain else st[TAIL])


@inline
def origin(st: np.ndarray, level: int, u0: int, u1: int, u2: int) -> Origin:
    """(row, column, column direction, k, k mode) that a unit's tiles are taken relative to: a
    column counts from the column in its direction; a k mode of 1 or -1 counts k from k in that
    direction, 0 keeps k as it is (a band's or a block's tiles span every k), MODULAR counts it
    modulo KT (a rotating window's units wrap around)."""
    if st[STRUCTURE] == UNITS:
        return rotate_origin(st, u0, u2)
    block = block_at(st, u0, u1)
    _base, row0, _h, col0, _w, _table, down = block
    if level == 2:
        s = min(u2, st[KT] - 1)
        return row0, col0, 1, st[KT] - 1 - s if down == 1 else s, -1 if down == 1 else 1
    if level == 1:
        return row0, col0, 1, 0, 0
    if st[STRUCTURE] == STRIPS:
        return 0, col0, 1, 0, 0
    return row0, 0, 1, 0, 0


@inline
def far_key(st: np.ndarray, level: int, u0: int, u1: int) -> int:
    """The first key past the unit's parent: keys from it on are far (only their order counts)."""
    if st[STRUCTURE] == UNITS:
        return rotate_far_key(st, level, u0)
    block = block_at(st, u0, u1)
    if level == 2:
        return block[0] + st[KT] * block[2] * block[4]
    if level == 1:
        if st[STRUCTURE] == STRIPS:
            rec = st[STRIPS_AT] + u0 * STRIP_FIELDS
            return st[rec + S_BASE] + st[KT] * st[rec + S_W] * st[LONG]
        return (u0 + 1) * st[N_CB] * st[BLOCK_SPAN]
    return st[NEVER]


@inline
def _column_place(st: np.ndarray, r: int, column: int) -> int:
    """The visiting place, in band r, of the block that holds a frame column."""
    band = band_holding(st, COL_START_AT, column)
    return st[N_CB] - 1 - band if _reversed_band(st, r) else band


@inline
def _strip_place(st: np.ndarray, strip: int, row: int) -> int:
    """The visiting place, in a strip, of the block that holds a frame row."""
    rec = st[STRIPS_AT] + strip * STRIP_FIELDS
    big, n_big = st[rec + S_BIG], st[rec + S_N_BIG]
    band = row // big if row < n_big * big else n_big + (row - n_big * big) // st[rec + S_SMALL]
    return st[rec + S_COUNT] - 1 - band if st[rec + S_REVERSED] == 1 else band


@inline
def far_next(st: np.ndarray, level: int, u0: int, u1: int, role: int, index: int, k: int) -> int:
    """Where an operand (a frame row's or column's at k) held at a unit's boundary is next used
    past the unit's parent, from the order's structure; -1 if the order has no such use."""
    if st[STRUCTURE] == UNITS:
        return rotate_far_next(st, level, u0, role == COL, index, k)
    strips = st[STRUCTURE] == STRIPS
    if level == 2:
        _base, row0, h, col0, w, _table, _down = block_at(st, u0, u1)
        if role == ROW and row0 <= index < row0 + h:
            if strips:
                return strip_next_row(st, u0, index, k)
            return general_next_row(st, u0 * st[N_CB] + u1, index - row0, k)
        if role == COL and col0 <= index < col0 + w:
            if strips:
                return strip_next_col(st, u0, u1, index - col0, k)
            return general_next_col(st, u0 * st[N_CB] + u1, index - col0, k)
        return -1
    if level == 1:
        if strips:
            return strip_next_row(st, u0, index, k) if role == ROW else -1
        if role != COL:
            return -1
        place = _column_place(st, u0, index)
        block = block_at(st, u0, place)
        return general_next_col(st, u0 * st[N_CB] + place, index - block[3], k)
    return -1


@inline
def units_back(st: np.ndarray, level: int, u0: int, u1: int, role: int, index: int) -> int:
    """How many level-1 units before u1 the far operand's own block is (0 at other levels)."""
    if level != 1 or st[STRUCTURE] == UNITS:
        return 0
    if st[STRUCTURE] == STRIPS:
        return max(0, u1 - _strip_place(st, u0, index)) if role == ROW else 0
    return max(0, u1 - _column_place(st, u0, index)) if role == COL else 0


@inline
def _put_block(out: np.ndarray, at: int, block: Block) -> int:
    out[at], out[at + 1], out[at + 2], out[at + 3] = block[2], block[4], block[5], block[6]
    return at + 4


@inline
def _none(out: np.ndarray, at: int, count: int) -> int:
    for offset in range(count):
        out[at + offset] = NO_KIND
    return at + count


@inline
def _band_kind(st: np.ndarray, r: int, out: np.ndarray, at: int) -> int:
    """A row band: its height, direction and first block's k direction (every band's blocks have
    the same columns)."""
    block = block_at(st, r, 0)
    out[at], out[at + 1], out[at + 2] = block[2], 1 if _reversed_band(st, r) else 0, block[6]
    return at + 3


@inline
def _strip_kind(st: np.ndarray, strip: int, out: np.ndarray, at: int) -> int:
    """A strip: its width, its bands, direction, first block's k direction and cell tables."""
    rec = st[STRIPS_AT] + strip * STRIP_FIELDS
    for field in (S_W, S_COUNT, S_BIG, S_SMALL, S_N_BIG, S_REVERSED):
        out[at] = st[rec + field]
        at += 1
    out[at] = st[rec + S_FIRST_BLOCK] % 2
    for table in range(4):
        out[at + 1 + table] = st[rec + S_TABLES + table]
    return at + 5


@inline
def _strip_rows_kind(st: np.ndarray, strip: int, v: int, out: np.ndarray, at: int) -> int:
    """How block v's rows line up with the next strip's blocks (where its row operands are next
    used): the place of the one holding its first row relative to block v - 1's, then per row the
    place relative to that, the row in it, its height, cell table and k direction."""
    _base, row0, h, _col0, _w, _table, _down = strip_block(st, strip, v)
    if strip + 1 >= st[N_STRIPS]:
        return _none(out, at, 1)
    anchor = _strip_place(st, strip + 1, row0)
    if v > 0:
        out[at] = anchor - _strip_place(st, strip + 1, strip_block(st, strip, v - 1)[1])
    else:
        out[at] = NO_KIND
    at += 1
    for x in range(h):
        place = _strip_place(st, strip + 1, row0 + x)
        block = strip_block(st, strip + 1, place)
        out[at], out[at + 1], out[at + 2] = place - anchor, row0 + x - block[1], block[2]
        out[at + 3], out[at + 4] = block[5], block[6]
        at += 5
    return at


@inline
def unit_kind(st: np.ndarray, level: int, u0: int, u1: int, u2: int, out: np.ndarray) -> int:
    """The kind of unit (u0), (u0, u1) or (u0, u1, u2) of `level`, into out; returns its length."""
    if st[STRUCTURE] == UNITS:
        return rotate_kind(st, level, u0, u2, out)
    strips = st[STRUCTURE] == STRIPS
    # a plain step or the tail; and whether k is one a block walking k the other way has in its tail
    if level == 2:
        out[0], out[1] = 0 if u2 < st[KT] - st[TAIL] else 1, 1 if u2 < st[TAIL] else 0
        return 2
    if level == 0:
        last = unit_count(st, 0, 0, 0) - 1
        at = _strip_kind(st, u0, out, 0) if strips else _band_kind(st, u0, out, 0)
        if u0 < last:
            return _strip_kind(st, u0 + 1, out, at) if strips else _band_kind(st, u0 + 1, out, at)
        return _none(out, at, 11 if strips else 3)
    count = unit_count(st, 1, u0, 0)
    at = _put_block(out, 0, block_at(st, u0, u1))
    out[at] = 1 if u1 == count - 1 else 0
    at = (
        _put_block(out, at + 1, block_at(st, u0, u1 + 1))
        if u1 + 1 < count
        else _none(out, at + 1, 4)
    )
    if strips:
        return _strip_rows_kind(st, u0, u1, out, at)
    if u0 + 1 >= st[N_RB]:
        return _none(out, at, 5)
    column = block_at(st, u0, u1)[3]
    at = _put_block(out, at, block_at(st, u0 + 1, _column_place(st, u0 + 1, column)))
    out[at] = 1 if _reversed_band(st, u0 + 1) else 0
    return at + 1


def kind_length(slots: int) -> int:
    """The longest kind (a strip's block lists its rows, at most the slots)."""
    return 16 + 7 * slots
