"""Orders of output-stationary blocks, streamed in batches: C cut into blocks, each walked k step
by k step (every accumulator of the block takes one product per step, its cells in the order of
the block's cell table), then its last TAIL steps cell by cell.

The general generator's blocks (order.py) and the strip schedules (strip_order.py) are both such
orders. They differ in which block follows which, and so in where a tile is next used once its
block is done: that, and a block's geometry, is all this walker asks of them. Within a batch the
walk's position and the current block live in local variables.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import get, inline
from simcore.ga1.engine.order import general_block, general_next_col, general_next_row
from simcore.ga1.engine.plan import (
    CELL_START_AT,
    CELL_X_AT,
    CELL_Y_AT,
    KT,
    N_BLOCKS,
    NEXT_IN_COL_AT,
    NEXT_IN_ROW_AT,
    STRIPS,
    STRUCTURE,
    TAIL,
)
from simcore.ga1.engine.record import RECORD, frame_of, place, store_record
from simcore.ga1.engine.strip_order import strip_block, strip_next_col, strip_next_row, strip_step

# The walk's position: block b, step s, cell; for strips, the strip and the block's place in it.
POS_B, POS_S, POS_CELL, POS_STRIP, POS_IN_STRIP = range(5)


@inline
def _block(st: np.ndarray, b: int, strip: int, v: int) -> tuple[int, int, int, int, int, int, int]:
    if st[STRUCTURE] == STRIPS:
        return strip_block(st, strip, v)
    return general_block(st, b)


@inline
def block_products(
    st: np.ndarray, pos: int, ring_at: int, mask: int, first: int, stop: int
) -> None:
    """The records of products first..stop-1 into the ring (`mask`: its length - 1), from the
    walk's position on; the position moves past them."""
    strips = st[STRUCTURE] == STRIPS
    b, s, cell, strip, v = (
        st[pos + POS_B],
        st[pos + POS_S],
        st[pos + POS_CELL],
        st[pos + POS_STRIP],
        st[pos + POS_IN_STRIP],
    )
    kt, tail = st[KT], st[TAIL]
    plain, n_blocks = kt - tail, st[N_BLOCKS]
    cells_x, cells_y, in_row, in_col = (
        st[CELL_X_AT],
        st[CELL_Y_AT],
        st[NEXT_IN_ROW_AT],
        st[NEXT_IN_COL_AT],
    )
    frame = frame_of(st)
    block = _block(st, b, strip, v)
    base, row0, h, col0, w, table, down = block
    hw, cells = h * w, st[st[CELL_START_AT] + table]
    for q in range(first, stop):
        k = kt - 1 - s if down else s
        at = cells + cell
        x, y = get(st, cells_x + at), get(st, cells_y + at)
        after = get(st, in_row + at)
        if after >= 0:
            next_row = base + place(kt, tail, hw, after, s)
        elif strips:
            next_row = strip_next_row(st, strip, row0 + x, k)
        else:
            next_row = general_next_row(st, b, x, k)
        after = get(st, in_col + at)
        if after >= 0:
            next_col = base + place(kt, tail, hw, after, s)
        elif strips:
            next_col = strip_next_col(st, strip, v, y, k)
        else:
            next_col = general_next_col(st, b, y, k)
        store_record(
            st,
            ring_at + (q & mask) * RECORD,
            frame,
            row0 + x,
            col0 + y,
            k,
            base + place(kt, tail, hw, cell, s),
            next_row,
            next_col,
            s == kt - 1,
        )
        # advance: cell by cell through a step, step by step; in the tail, a cell's steps in turn
        if s < plain:
            cell += 1
            if cell == hw:
                cell, s = 0, s + 1
        else:
            s += 1
            if s == kt:
                cell, s = cell + 1, plain
        if (s == kt and tail == 0) or cell == hw:  # the block is done
            b, s, cell = b + 1, 0, 0
            if strips:
                strip, v = strip_step(st, strip, v)
            if b < n_blocks:
                block = _block(st, b, strip, v)
                base, row0, h, col0, w, table, down = block
                hw, cells = h * w, st[st[CELL_START_AT] + table]
    (
        st[pos + POS_B],
        st[pos + POS_S],
        st[pos + POS_CELL],
        st[pos + POS_STRIP],
        st[pos + POS_IN_STRIP],
    ) = b, s, cell, strip, v
