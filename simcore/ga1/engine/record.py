"""What a streamed product order hands the compiler: one record per product, in a ring, with the
keys of the next products that read the same A tile and the same B tile.

Keys. The reference compiler numbers products 0..P-1 and compares next uses by number. A key is
any number that orders products the same way, so the engine's decisions (and its program) are
the reference's (the strip orders' keys are the product numbers themselves, as `protect`
needs). END follows every product's key; NEVER and PINNED follow END.

Frames. Every order is written for blocks (or units) visited along rows of a frame. Visiting
along columns is the same walk over the transposed product (C^T = B^T A^T): the plan swaps rows
and columns (FLIP) and `store_record` swaps them back, so the compiler sees the real products.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import inline, put
from simcore.ga1.engine.plan import (
    FIRST_AT,
    FIRST_START_AT,
    FLIP,
    KT,
    N_A,
    N_AB,
    REAL_KT,
    REAL_NT,
    TAIL,
)

# Fields of one product's record
I, J, K, A_ID, B_ID, C_ID, KEY, NEXT_A, NEXT_B, LAST = range(10)
RECORD = 10
POSITION = 16  # fields of a stream's position (each order uses its own few)


@inline
def frame_of(st: np.ndarray) -> tuple[int, int, int, int, int]:
    """What store_record needs of the plan, read once (stores into the ring would make the
    compiled code read the plan again at every product)."""
    return st[FLIP], st[REAL_KT], st[REAL_NT], st[N_A], st[N_AB]


@inline
def store_record(
    st: np.ndarray,
    rec: int,
    frame: tuple[int, int, int, int, int],
    fi: int,
    fj: int,
    k: int,
    key: int,
    next_row: int,
    next_col: int,
    last: bool,
) -> None:
    """Write a product given in the frame as real (i, j, k) with its tiles and next uses."""
    flip, kt, nt, n_a, n_ab = frame
    if flip == 1:
        i, j, next_a, next_b = fj, fi, next_col, next_row
    else:
        i, j, next_a, next_b = fi, fj, next_row, next_col
    put(st, rec + I, i)
    put(st, rec + J, j)
    put(st, rec + K, k)
    put(st, rec + A_ID, i * kt + k)
    put(st, rec + B_ID, n_a + k * nt + j)
    put(st, rec + C_ID, n_ab + i * nt + j)
    put(st, rec + KEY, key)
    put(st, rec + NEXT_A, next_a)
    put(st, rec + NEXT_B, next_b)
    put(st, rec + LAST, 1 if last else 0)


# ---- blocks: each walked k step by k step (every cell once per step), then its tail cell by cell.
# A block is described by (key of its first product, first frame row, height, first frame column,
# width, cell table, whether it walks k downwards).


@inline
def place(kt: int, tail: int, hw: int, cell: int, s: int) -> int:
    """Where in its block (of hw cells) the product of `cell` at step s runs."""
    plain = kt - tail
    if s < plain:
        return s * hw + cell
    return plain * hw + cell * tail + (s - plain)


@inline
def first_key(
    st: np.ndarray, block: tuple[int, int, int, int, int, int, int], along: int, index: int, k: int
) -> int:
    """Key of the block's first product at k in its row `index` (along=0) or column `index`
    (along=1) of cells."""
    base, _row0, h, _col0, w, table, down = block
    cell = st[st[FIRST_AT] + st[st[FIRST_START_AT] + table * 2 + along] + index]
    kt = st[KT]
    return base + place(kt, st[TAIL], h * w, cell, kt - 1 - k if down else k)
