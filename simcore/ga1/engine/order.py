"""The general generator's product orders, streamed: product after product, each with the key
of the next product that reads the same A tile and the same B tile, computed from the order's
structure instead of from a pass over all products (which would need memory for every product).

Keys. The reference compiler numbers products 0..P-1 and compares next uses by number. A key is
any number that orders products the same way, so the engine's decisions (and its program) are
the reference's: for blocks the key of step s, cell c of block b is b * BLOCK_SPAN + the
product's place in the block; for the rotating window it is t * STEP + (u - lo(t)) * H + x for
unit u's cell x at global step t (lo(t): the step's first live unit; at most W units of at most
H cells are live in a step). END follows every product's key; NEVER and PINNED follow END.

Frames. Both structures are written for blocks (or units) visited along rows. Visiting along
columns is the same walk over the transposed product (C^T = B^T A^T): the plan swaps rows and
columns (FLIP) and `_store` swaps them back, so emitted products and tiles are the real ones.

The plan's fields and sections, a product's record (at `rec`) and the stream's position (at
`pos`) all live in the generator's state array `st`.
"""
from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import inline, kernel
from simcore.ga1.engine.plan import (
    BLOCK_SPAN, CELL_START_AT, CELL_X_AT, CELL_Y_AT, COL_START_AT, END, FIRST_AT, FIRST_START_AT, FLIP, H, KALT, KT,
    N_A, N_AB, N_CB, N_RB, N_UNITS, NEVER, NEXT_IN_COL_AT, NEXT_IN_ROW_AT, NT, RAMP, REAL_KT, REAL_NT,
    ROW_START_AT, SERPENTINE, SIZES_AT, STEP, TAIL, W,
)

# Fields of one product's record
I, J, K, A_ID, B_ID, C_ID, KEY, NEXT_A, NEXT_B, LAST = range(10)
RECORD = 10
# The stream's position. Blocks: block b, step s and cell, and the block's bands, cell table and
# whether it ends its row band; rotate: step t, unit u, cell x, the last unit live at step t,
# t's k and first live unit, and unit u's band, place, column, rows and first step.
POS_B, POS_S, POS_CELL, POS_R, POS_C, POS_ROW0, POS_COL0, POS_H, POS_W, POS_TABLE, POS_BAND_END = range(11)
(POS_T, POS_U, POS_X, POS_HI, POS_K, POS_LO, POS_UR, POS_PLACE, POS_J, POS_UROW0, POS_UH, POS_ENTRY,
 POS_NEXT_ENTRY) = range(13)
POSITION = 13


@inline
def _store(st: np.ndarray, rec: int, fi: int, fj: int, k: int, key: int, next_row: int, next_col: int,
        last: bool) -> None:
    """Write a product given in the frame as real (i, j, k) with its tiles and next uses."""
    if st[FLIP] == 1:
        i, j, next_a, next_b = fj, fi, next_col, next_row
    else:
        i, j, next_a, next_b = fi, fj, next_row, next_col
    kt, nt = st[REAL_KT], st[REAL_NT]
    st[rec + I], st[rec + J], st[rec + K] = i, j, k
    st[rec + A_ID] = i * kt + k
    st[rec + B_ID] = st[N_A] + k * nt + j
    st[rec + C_ID] = st[N_AB] + i * nt + j
    st[rec + KEY], st[rec + NEXT_A], st[rec + NEXT_B], st[rec + LAST] = key, next_a, next_b, 1 if last else 0


@inline
def _band(st: np.ndarray, at: int, index: int) -> tuple[int, int]:
    """(start, length) of band `index` of the bands at section `at`."""
    start = st[st[at] + index]
    return start, st[st[at] + index + 1] - start


# ---- blocks: C cut into blocks, each walked k step by k step, then its tail cell by cell

@inline
def _col_band(st: np.ndarray, b: int, r: int) -> int:
    """The column band of block b, in row band r (odd row bands run backwards if serpentine)."""
    place = b % st[N_CB]
    return st[N_CB] - 1 - place if st[SERPENTINE] == 1 and r % 2 == 1 else place


@inline
def _block_index(st: np.ndarray, r: int, c: int) -> int:
    """The block of row band r and column band c."""
    place = st[N_CB] - 1 - c if st[SERPENTINE] == 1 and r % 2 == 1 else c
    return r * st[N_CB] + place


@inline
def _place(st: np.ndarray, hw: int, cell: int, s: int) -> int:
    """Where in its block the product of `cell` at step s runs."""
    plain = st[KT] - st[TAIL]
    if s < plain:
        return s * hw + cell
    return plain * hw + cell * st[TAIL] + (s - plain)


@inline
def _step_of(st: np.ndarray, b: int, k: int) -> int:
    """The step at which block b multiplies by k (every other block may walk k downwards);
    the map is its own inverse."""
    return st[KT] - 1 - k if st[KALT] == 1 and b % 2 == 1 else k


@inline
def _combo(st: np.ndarray, h: int, w: int) -> int:
    """The cell table of an h x w block (bands come in at most two heights and two widths)."""
    sizes = st[SIZES_AT]
    return (0 if h == st[sizes] else 1) * 2 + (0 if w == st[sizes + 2] else 1)


@kernel
def _first_key(st: np.ndarray, b: int, r: int, c: int, along: int, index: int, k: int) -> int:
    """Key of the first product at k of block b (row band r, column band c) in its row `index`
    (along=0) or column `index` (along=1) of cells."""
    h = _band(st, ROW_START_AT, r)[1]
    w = _band(st, COL_START_AT, c)[1]
    cell = st[st[FIRST_AT] + st[st[FIRST_START_AT] + _combo(st, h, w) * 2 + along] + index]
    return b * st[BLOCK_SPAN] + _place(st, h * w, cell, _step_of(st, b, k))


@kernel
def start_block(st: np.ndarray, pos: int, b: int) -> None:
    """Position the stream at the first product of block b."""
    r = b // st[N_CB]
    c = _col_band(st, b, r)
    row0, h = _band(st, ROW_START_AT, r)
    col0, w = _band(st, COL_START_AT, c)
    st[pos + POS_B], st[pos + POS_S], st[pos + POS_CELL] = b, 0, 0
    st[pos + POS_R], st[pos + POS_C], st[pos + POS_ROW0], st[pos + POS_COL0] = r, c, row0, col0
    st[pos + POS_H], st[pos + POS_W] = h, w
    st[pos + POS_TABLE] = st[st[CELL_START_AT] + _combo(st, h, w)]
    st[pos + POS_BAND_END] = 1 if b - r * st[N_CB] == st[N_CB] - 1 else 0


@inline
def _next_block_place(st: np.ndarray, pos: int) -> None:
    """Advance: cell by cell through a step, step by step; in the tail, a cell's steps in turn."""
    s, cell, hw = st[pos + POS_S], st[pos + POS_CELL], st[pos + POS_H] * st[pos + POS_W]
    plain = st[KT] - st[TAIL]
    if s < plain:
        cell += 1
        if cell == hw:
            cell, s = 0, s + 1
    else:
        s += 1
        if s == st[KT]:
            cell, s = cell + 1, plain
    if (s == st[KT] and st[TAIL] == 0) or cell == hw:
        if st[pos + POS_B] + 1 < st[N_RB] * st[N_CB]:
            start_block(st, pos, st[pos + POS_B] + 1)
    else:
        st[pos + POS_S], st[pos + POS_CELL] = s, cell


@inline
def block_product(st: np.ndarray, pos: int, rec: int) -> None:
    """The product at the stream's position; then advance."""
    b, s, cell, r, c = st[pos + POS_B], st[pos + POS_S], st[pos + POS_CELL], st[pos + POS_R], st[pos + POS_C]
    hw = st[pos + POS_H] * st[pos + POS_W]
    k = _step_of(st, b, s)
    table = st[pos + POS_TABLE] + cell
    x, y = st[st[CELL_X_AT] + table], st[st[CELL_Y_AT] + table]
    base = b * st[BLOCK_SPAN]
    after = st[st[NEXT_IN_ROW_AT] + table]
    if after >= 0:
        next_row = base + _place(st, hw, after, s)
    elif st[pos + POS_BAND_END] == 0:  # the row band's next block
        next_row = _first_key(st, b + 1, r, _col_band(st, b + 1, r), 0, x, k)
    else:
        next_row = st[NEVER]
    after = st[st[NEXT_IN_COL_AT] + table]
    if after >= 0:
        next_col = base + _place(st, hw, after, s)
    elif r + 1 < st[N_RB]:  # the column band's block in the next row band
        next_col = _first_key(st, _block_index(st, r + 1, c), r + 1, c, 1, y, k)
    else:
        next_col = st[NEVER]
    _store(st, rec, st[pos + POS_ROW0] + x, st[pos + POS_COL0] + y, k, base + _place(st, hw, cell, s), next_row,
           next_col, s == st[KT] - 1)
    _next_block_place(st, pos)


# ---- rotate: a window of W units (columns of a row band) slides over C, one k step at a time

@inline
def _entry(st: np.ndarray, u: int) -> int:
    """The step at which unit u starts (the first RAMP units start together)."""
    if u < st[RAMP]:
        return 0
    return (u * st[KT]) // st[W]


@inline
def _first_live(st: np.ndarray, t: int) -> int:
    """lo(t): the first unit still live at step t (each unit lives KT steps)."""
    v = t - st[KT] + 1
    if v <= 0:
        return 0
    return max(st[RAMP], (v * st[W] + st[KT] - 1) // st[KT])


@inline
def _unit_key(st: np.ndarray, t: int, u: int, x: int) -> int:
    return t * st[STEP] + (u - _first_live(st, t)) * st[H] + x


@inline
def _step_with(st: np.ndarray, u: int, k: int) -> int:
    """The step of unit u's life that multiplies by k."""
    e = _entry(st, u)
    return e + (k - e) % st[KT]


@kernel
def _enter_unit(st: np.ndarray, pos: int, u: int) -> None:
    """Cache unit u's band, place, column, rows and first step (and its successor's)."""
    nt = st[NT]
    r, place = u // nt, u % nt
    row0, h = _band(st, ROW_START_AT, r)
    st[pos + POS_U], st[pos + POS_X], st[pos + POS_UR], st[pos + POS_PLACE] = u, 0, r, place
    st[pos + POS_J] = nt - 1 - place if st[SERPENTINE] == 1 and r % 2 == 1 else place
    st[pos + POS_UROW0], st[pos + POS_UH] = row0, h
    st[pos + POS_ENTRY], st[pos + POS_NEXT_ENTRY] = _entry(st, u), _entry(st, u + 1)


@kernel
def _enter_step(st: np.ndarray, pos: int, t: int) -> None:
    """Step t: units that start now join; the first unit still live is the first to run."""
    hi = st[pos + POS_HI]
    while hi + 1 < st[N_UNITS] and _entry(st, hi + 1) <= t:
        hi += 1
    st[pos + POS_T], st[pos + POS_HI], st[pos + POS_K] = t, hi, t % st[KT]
    st[pos + POS_LO] = _first_live(st, t)
    _enter_unit(st, pos, st[pos + POS_LO])


@kernel
def start_units(st: np.ndarray, pos: int) -> None:
    """The stream's first position: step 0, its first unit."""
    st[pos + POS_HI] = -1
    _enter_step(st, pos, 0)


@inline
def unit_product(st: np.ndarray, pos: int, rec: int) -> None:
    """The product at step t, unit u, cell x; then advance."""
    t, u, x, k, lo = st[pos + POS_T], st[pos + POS_U], st[pos + POS_X], st[pos + POS_K], st[pos + POS_LO]
    nt, kt, r, j, h = st[NT], st[KT], st[pos + POS_UR], st[pos + POS_J], st[pos + POS_UH]
    key = t * st[STEP] + (u - lo) * st[H] + x
    # A(row, k) is shared by the band's units: the next one uses it now or one period later
    if st[pos + POS_PLACE] + 1 < nt:
        if st[pos + POS_NEXT_ENTRY] <= t:
            next_row = key + st[H]
        else:
            next_row = _unit_key(st, t + kt, u + 1, x)
    else:
        next_row = st[NEVER]
    # B(k, j) is shared by the unit's cells, then by the next band's unit in column j
    if x + 1 < h:
        next_col = key + 1
    elif r + 1 < st[N_RB]:
        u2 = (r + 1) * nt + (nt - 1 - j if st[SERPENTINE] == 1 and (r + 1) % 2 == 1 else j)
        next_col = _unit_key(st, _step_with(st, u2, k), u2, 0)
    else:
        next_col = st[NEVER]
    _store(st, rec, st[pos + POS_UROW0] + x, j, k, key, next_row, next_col, t == st[pos + POS_ENTRY] + kt - 1)
    # advance: the next cell, else the next live unit, else the next step
    if x + 1 < h:
        st[pos + POS_X] = x + 1
    elif u + 1 <= st[pos + POS_HI]:
        _enter_unit(st, pos, u + 1)
    elif t + 1 < st[END] // st[STEP]:  # END is the number of steps times STEP
        _enter_step(st, pos, t + 1)
