"""The general generator's product orders, streamed: product after product, each with the key
of the next product that reads the same A tile and the same B tile, computed from the order's
structure instead of from a pass over all products (which would need memory for every product).

Blocks (walked by blocks.py): C cut into blocks of row bands and column bands, visited along the
frame's rows (serpentine: every other row band backwards); a block's key is b * BLOCK_SPAN plus
the product's place in the block. Rotate: a window of units slides over C (below); the key of
unit u's cell x at global step t is t * STEP + (u - lo(t)) * H + x (lo(t): the step's first live
unit; at most W units of at most H cells are live in a step). record.py says what keys are.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import inline
from simcore.ga1.engine.plan import (
    BLOCK_SPAN,
    COL_START_AT,
    END,
    KALT,
    KT,
    N_CB,
    N_RB,
    N_UNITS,
    NEVER,
    NT,
    RAMP,
    ROW_START_AT,
    SERPENTINE,
    SIZES_AT,
    STEP,
    H,
    W,
)
from simcore.ga1.engine.record import RECORD, first_key, frame_of, store_record

# The rotating window's position: step t, unit u, cell x, the last unit live at step t, t's k and
# first live unit, and unit u's band, place, column, rows and first step.
(
    POS_T,
    POS_U,
    POS_X,
    POS_HI,
    POS_K,
    POS_LO,
    POS_UR,
    POS_PLACE,
    POS_J,
    POS_UROW0,
    POS_UH,
    POS_ENTRY,
    POS_NEXT_ENTRY,
) = range(13)


@inline
def _band(st: np.ndarray, at: int, index: int) -> tuple[int, int]:
    """(start, length) of band `index` of the bands at section `at` (plan.band_lengths: the
    first n_first of one length, the rest of the other); index = count gives the end."""
    rec = st[at]
    first, last, n_first = st[rec + 1], st[rec + 2], st[rec + 3]
    if index < n_first:
        return index * first, first
    return n_first * first + (index - n_first) * last, last


@inline
def band_holding(st: np.ndarray, at: int, value: int) -> int:
    """The band, of the bands at section `at`, that holds row (or column) `value`."""
    rec = st[at]
    first, last, n_first = st[rec + 1], st[rec + 2], st[rec + 3]
    if value < n_first * first:
        return value // first
    return n_first + (value - n_first * first) // last


# ---- blocks


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
def general_block(st: np.ndarray, b: int) -> tuple[int, int, int, int, int, int, int]:
    """Block b (record.py's description): its bands give its place and size, their sizes its
    cell table (bands come in at most two heights and two widths); every other block walks k
    downwards if KALT."""
    r = b // st[N_CB]
    row0, h = _band(st, ROW_START_AT, r)
    col0, w = _band(st, COL_START_AT, _col_band(st, b, r))
    sizes = st[SIZES_AT]
    table = (0 if h == st[sizes] else 1) * 2 + (0 if w == st[sizes + 2] else 1)
    return b * st[BLOCK_SPAN], row0, h, col0, w, table, 1 if st[KALT] == 1 and b % 2 == 1 else 0


@inline
def general_next_row(st: np.ndarray, b: int, x: int, k: int) -> int:
    """Where A(row x of block b, k) is next used once block b is done: the row band's next block."""
    if (b + 1) % st[N_CB] == 0:  # the last block of its row band
        return st[NEVER]
    return first_key(st, general_block(st, b + 1), 0, x, k)


@inline
def general_next_col(st: np.ndarray, b: int, y: int, k: int) -> int:
    """Where B(k, column y of block b) is next used once block b is done: the column band's block
    in the next row band."""
    r = b // st[N_CB]
    if r + 1 >= st[N_RB]:
        return st[NEVER]
    return first_key(st, general_block(st, _block_index(st, r + 1, _col_band(st, b, r))), 1, y, k)


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


@inline
def _enter_unit(st: np.ndarray, pos: int, u: int) -> None:
    """Cache unit u's band, place, column, rows and first step (and its successor's)."""
    nt = st[NT]
    r, place = u // nt, u % nt
    row0, h = _band(st, ROW_START_AT, r)
    st[pos + POS_U], st[pos + POS_X], st[pos + POS_UR], st[pos + POS_PLACE] = u, 0, r, place
    st[pos + POS_J] = nt - 1 - place if st[SERPENTINE] == 1 and r % 2 == 1 else place
    st[pos + POS_UROW0], st[pos + POS_UH] = row0, h
    st[pos + POS_ENTRY], st[pos + POS_NEXT_ENTRY] = _entry(st, u), _entry(st, u + 1)


@inline
def _enter_step(st: np.ndarray, pos: int, t: int) -> None:
    """Step t: units that start now join; the first unit still live is the first to run."""
    hi = st[pos + POS_HI]
    while hi + 1 < st[N_UNITS] and _entry(st, hi + 1) <= t:
        hi += 1
    st[pos + POS_T], st[pos + POS_HI], st[pos + POS_K] = t, hi, t % st[KT]
    st[pos + POS_LO] = _first_live(st, t)
    _enter_unit(st, pos, st[pos + POS_LO])


@inline
def start_units(st: np.ndarray, pos: int) -> None:
    """The stream's first position: step 0, its first unit."""
    st[pos + POS_HI] = -1
    _enter_step(st, pos, 0)


@inline
def unit_product(st: np.ndarray, pos: int, rec: int) -> None:
    """The product at step t, unit u, cell x; then advance."""
    t, u, x, k, lo = (
        st[pos + POS_T],
        st[pos + POS_U],
        st[pos + POS_X],
        st[pos + POS_K],
        st[pos + POS_LO],
    )
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
    store_record(
        st,
        rec,
        frame_of(st),
        st[pos + POS_UROW0] + x,
        j,
        k,
        key,
        next_row,
        next_col,
        t == st[pos + POS_ENTRY] + kt - 1,
    )
    # advance: the next cell, else the next live unit, else the next step
    if x + 1 < h:
        st[pos + POS_X] = x + 1
    elif u + 1 <= st[pos + POS_HI]:
        _enter_unit(st, pos, u + 1)
    elif t + 1 < st[END] // st[STEP]:  # END is the number of steps times STEP
        _enter_step(st, pos, t + 1)


@inline
def unit_products(st: np.ndarray, pos: int, ring_at: int, mask: int, first: int, stop: int) -> None:
    """The records of products first..stop-1 into the ring."""
    for q in range(first, stop):
        unit_product(st, pos, ring_at + (q & mask) * RECORD)
