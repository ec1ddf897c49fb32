"""A general schedule's structure as integer fields and sections of the generator's state (the
plan), for the compiled generator.

Everything here is computed once per schedule, in memory that grows with the block shapes (never
with the shape): scalars, the bands of the frame (see order.py) as their count and two lengths
(band_lengths: no list of bands) and, for each block shape, the order of its cells with, per cell, the next cell of the same row and of
the same column, and the first cell of each row and column.
"""

from __future__ import annotations

import functools

import numpy as np

from simcore.ga1.engine.rows import COMMON, Section
from simcore.ga1.generator.order import GeneralParams, cell_order
from simcore.ga1.machine import Machine
from simcore.shape import Shape

# Fields every product order has (the compiler reads them), then the general orders' own.
(
    STRUCTURE,
    FLIP,
    KT,
    TAIL,
    P,
    END,
    NEVER,
    PINNED,
    N_A,
    N_AB,
    N_TILES,
    REAL_KT,
    REAL_NT,
    LOOKAHEAD,
    STORE_FIRST,
    PROTECT,
    STORE_DELAY,
    N_BLOCKS,
) = range(COMMON, COMMON + 18)
ORDER_FIELDS = COMMON + 18  # the first field of an order's own
# The cell tables (TABLES_AT) are one section; each table's field holds its offset in it until
# the compiler's start makes it absolute (tables are kept, packed, from schedule to schedule).
(
    TABLES_AT,
    CELL_START_AT,
    CELL_X_AT,
    CELL_Y_AT,
    NEXT_IN_ROW_AT,
    NEXT_IN_COL_AT,
    FIRST_START_AT,
    FIRST_AT,
) = range(ORDER_FIELDS, ORDER_FIELDS + 8)
# The bands (row bands at ROW_START_AT, column bands at COL_START_AT: band_lengths, BAND_FIELDS
# each) and the sizes are one section (BANDS_AT), made absolute the same way.
(
    BANDS_AT,
    ROW_START_AT,
    COL_START_AT,
    SIZES_AT,
    MT,
    NT,
    SERPENTINE,
    KALT,
    N_RB,
    N_CB,
    W,
    RAMP,
    H,
    STEP,
    BLOCK_SPAN,
    N_UNITS,
) = range(ORDER_FIELDS + 8, ORDER_FIELDS + 24)
PLAN_END = ORDER_FIELDS + 40  # the first field after any order's (strips.py's fit too)
BLOCKS, UNITS, STRIPS = 0, 1, 2  # STRUCTURE


BAND_FIELDS = 4  # a frame side's bands: band_lengths


def band_lengths(total: int, size: int, partition: str) -> tuple[int, int, int, int]:
    """simcore.ga1.generator.order.bands without listing them: (how many, the first's length,
    the last's, how many have the first's length). The first bands are the longest, the last the
    shortest."""
    size = min(size, total)
    count = -(-total // size)
    if partition == "uniform":
        last = total - (count - 1) * size
        return count, size, last, count if last == size else count - 1
    base, extra = divmod(total, count)
    return count, base + 1 if extra else base, base, extra if extra else count


def _cells(h: int, w: int, inner: str, flip: bool) -> list[tuple[int, int]]:
    """An h x w frame block's cells in visiting order, in frame coordinates."""
    if not flip:
        return cell_order(h, w, inner)
    return [(y, x) for x, y in cell_order(w, h, inner)]


def _later(keys: list[int]) -> list[int]:
    """For each position, the next position with the same key, or -1."""
    out: list[int] = [-1] * len(keys)
    seen: dict[int, int] = {}
    for index in range(len(keys) - 1, -1, -1):
        out[index] = seen.get(keys[index], -1)
        seen[keys[index]] = index
    return out


def _first(keys: list[int], count: int) -> list[int]:
    out = [-1] * count
    for index in range(len(keys) - 1, -1, -1):
        out[keys[index]] = index
    return out


def cell_tables(
    blocks: list[tuple[int, int, list[tuple[int, int]]]],
) -> tuple[dict[int, int], Section]:
    """Per block shape (h, w and its cells in visiting order, frame coordinates) in turn: where
    its cells start, the cells, the next cell of the same row and of the same column, and where
    its first cells of each row and of each column are (FIRST_START_AT: two entries per shape).
    Returns each table's offset in the packed section, and the section."""
    cell_start, first_start = [], []
    xs: list[int] = []
    ys: list[int] = []
    rows: list[int] = []
    cols: list[int] = []
    firsts: list[int] = []
    for h, w, cells in blocks:
        cell_start.append(len(xs))
        xs += [x for x, _ in cells]
        ys += [y for _, y in cells]
        rows += _later([x for x, _ in cells])
        cols += _later([y for _, y in cells])
        first_start.append(len(firsts))
        firsts += _first([x for x, _ in cells], h)
        first_start.append(len(firsts))
        firsts += _first([y for _, y in cells], w)
    offsets: dict[int, int] = {}
    packed: list[int] = []
    for field, values in (
        (CELL_START_AT, cell_start),
        (CELL_X_AT, xs),
        (CELL_Y_AT, ys),
        (NEXT_IN_ROW_AT, rows),
        (NEXT_IN_COL_AT, cols),
        (FIRST_START_AT, first_start),
        (FIRST_AT, firsts),
    ):
        offsets[field] = len(packed)
        packed += values
    return offsets, (TABLES_AT, len(packed), np.array(packed, dtype=np.int64))


@functools.lru_cache(maxsize=4096)
def _cell_tables(
    heights: tuple[int, ...], widths: tuple[int, ...], inner: str, flip: bool
) -> tuple[dict[int, int], Section]:
    """Per block shape (height index * 2 + width index). Block shapes recur from schedule to
    schedule, so the tables are kept."""
    return cell_tables([(h, w, _cells(h, w, inner, flip)) for h in heights for w in widths])


def band_sizes(bands: tuple[int, int, int, int]) -> list[int]:
    """The bands' (at most two) lengths, the smaller first (twice the same when all alike)."""
    count, first, last, n_first = bands
    return [last, first] if n_first < count else [first, first]


def common_fields(
    tiles: tuple[int, int, int], lookahead: int, store_first: bool, store_delay: int
) -> dict[int, int]:
    """The header fields that every order's plan fills alike (the compiler reads them)."""
    Mt, Kt, Nt = tiles
    return {
        KT: Kt,
        P: Mt * Kt * Nt,
        N_A: Mt * Kt,
        N_AB: Mt * Kt + Kt * Nt,
        N_TILES: Mt * Kt + Kt * Nt + Mt * Nt,
        REAL_KT: Kt,
        REAL_NT: Nt,
        LOOKAHEAD: lookahead,
        STORE_FIRST: int(store_first),
        STORE_DELAY: store_delay,
    }


def general_plan(
    shape: Shape, machine: Machine, params: GeneralParams
) -> tuple[dict[int, int], list[Section]]:
    """The plan of a general schedule (its parameters already checked against the slots)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    flip = params.block_order == "col"
    fm, fn = (Nt, Mt) if flip else (Mt, Nt)
    fbi, fbj = (params.bj, params.bi) if flip else (params.bi, params.bj)
    row_bands = band_lengths(fm, fbi, params.partition)
    col_bands = band_lengths(fn, fbj, params.partition)
    n_rb, n_cb = row_bands[0], col_bands[0]
    heights, widths = band_sizes(row_bands), band_sizes(col_bands)
    geo = {
        FLIP: int(flip),
        MT: fm,
        NT: fn,
        SERPENTINE: int(params.serpentine),
        KALT: int(params.k_direction == "alternate"),
        N_RB: n_rb,
        N_CB: n_cb,
        **common_fields((Mt, Kt, Nt), params.lookahead, params.store_first, params.store_delay),
    }
    if params.structure == "rotate":
        window = min(fbj, fn)
        ramp = min(params.ramp, window)
        units = n_rb * fn
        last_entry = 0 if units - 1 < ramp else ((units - 1) * Kt) // window
        end = (last_entry + Kt) * window * heights[1]
        geo.update(
            {
                STRUCTURE: UNITS,
                W: window,
                RAMP: ramp,
                H: heights[1],
                STEP: window * heights[1],
                N_UNITS: units,
            }
        )
        offsets, tables = _cell_tables((1,), (1,), "row", False)  # unused by units
    else:
        span = Kt * heights[1] * widths[1]
        end = n_rb * n_cb * span
        geo.update(
            {STRUCTURE: BLOCKS, TAIL: min(params.tail, Kt), BLOCK_SPAN: span, N_BLOCKS: n_rb * n_cb}
        )
        offsets, tables = _cell_tables(tuple(heights), tuple(widths), params.inner, flip)
    geo.update(offsets)
    geo.update({END: end, NEVER: end + 1, PINNED: end + 2})
    bands_section = [*row_bands, *col_bands, *heights, *widths]
    geo.update({ROW_START_AT: 0, COL_START_AT: BAND_FIELDS, SIZES_AT: 2 * BAND_FIELDS})
    return geo, [(BANDS_AT, len(bands_section), bands_section), tables]
