"""A general schedule's structure as integer fields and sections of the generator's state (the
plan), for the compiled generator.

Everything here is computed once per schedule, in memory that grows with the bands and the block
shapes (never with the number of products): scalars, the bands of the frame (see order.py) and,
for each block shape, the order of its cells with, per cell, the next cell of the same row and of
the same column, and the first cell of each row and column.
"""
from __future__ import annotations

import functools

import numpy as np

from simcore.ga1.engine.rows import COMMON, Section
from simcore.ga1.generator.order import GeneralParams, bands, cell_order
from simcore.ga1.machine import Machine
from simcore.shape import Shape

(STRUCTURE, FLIP, MT, KT, NT, TAIL, SERPENTINE, KALT, N_RB, N_CB, W, RAMP, H, STEP, BLOCK_SPAN, P, END, NEVER,
 PINNED, N_A, N_AB, N_TILES, REAL_MT, REAL_KT, REAL_NT, LOOKAHEAD, STORE_FIRST, N_UNITS,
 ROW_START_AT, COL_START_AT, SIZES_AT, CELL_START_AT, CELL_X_AT, CELL_Y_AT, NEXT_IN_ROW_AT, NEXT_IN_COL_AT,
 FIRST_START_AT, FIRST_AT) = range(COMMON, COMMON + 38)
PLAN_END = COMMON + 38  # the first field after the plan's
BLOCKS, UNITS = 0, 1


def _starts(cut: list[range]) -> list[int]:
    return [band.start for band in cut] + [cut[-1].stop]


def _two(values: set[int]) -> list[int]:
    """The (at most two) band sizes, as a pair."""
    ordered = sorted(values)
    assert len(ordered) <= 2, "bands come in at most two sizes"
    return ordered + ordered[-1:] * (2 - len(ordered))


def _cells(h: int, w: int, inner: str, flip: bool) -> list[tuple[int, int]]:
    """An h x w frame block's cells in visiting order, in frame coordinates."""
    if not flip:
        return cell_order(h, w, inner)
    return [(y, x) for x, y in cell_order(w, h, inner)]


def _later(keys: list[int]) -> list[int]:
    """For each position, the next position with the same key, or -1."""
    out, seen = [-1] * len(keys), {}
    for index in range(len(keys) - 1, -1, -1):
        out[index] = seen.get(keys[index], -1)
        seen[keys[index]] = index
    return out


def _first(keys: list[int], count: int) -> list[int]:
    out = [-1] * count
    for index in range(len(keys) - 1, -1, -1):
        out[keys[index]] = index
    return out


@functools.lru_cache(maxsize=4096)
def _cell_tables(heights: tuple[int, ...], widths: tuple[int, ...], inner: str, flip: bool) -> tuple[Section, ...]:
    """Per block shape (height index * 2 + width index): cells, next in row/column, firsts. Block
    shapes recur from schedule to schedule, so the tables are kept."""
    cell_start, first_start = [], []
    xs: list[int] = []
    ys: list[int] = []
    rows: list[int] = []
    cols: list[int] = []
    firsts: list[int] = []
    for h in heights:
        for w in widths:
            cells = _cells(h, w, inner, flip)
            cell_start.append(len(xs))
            xs += [x for x, _ in cells]
            ys += [y for _, y in cells]
            rows += _later([x for x, _ in cells])
            cols += _later([y for _, y in cells])
            first_start.append(len(firsts))
            firsts += _first([x for x, _ in cells], h)
            first_start.append(len(firsts))
            firsts += _first([y for _, y in cells], w)
    tables = ((CELL_START_AT, cell_start), (CELL_X_AT, xs), (CELL_Y_AT, ys), (NEXT_IN_ROW_AT, rows),
              (NEXT_IN_COL_AT, cols), (FIRST_START_AT, first_start), (FIRST_AT, firsts))
    return tuple((field, len(values), np.array(values, dtype=np.int64)) for field, values in tables)


def general_plan(shape: Shape, machine: Machine, params: GeneralParams) -> tuple[dict[int, int], list[Section]]:
    """The plan of a general schedule (its parameters already checked against the slots)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    flip = params.block_order == "col"
    fm, fn = (Nt, Mt) if flip else (Mt, Nt)
    fbi, fbj = (params.bj, params.bi) if flip else (params.bi, params.bj)
    row_bands = bands(fm, fbi, params.partition)
    col_bands = bands(fn, fbj, params.partition)
    heights = _two({len(band) for band in row_bands})
    widths = _two({len(band) for band in col_bands})
    geo = {FLIP: int(flip), MT: fm, KT: Kt, NT: fn, SERPENTINE: int(params.serpentine),
           KALT: int(params.k_direction == "alternate"), N_RB: len(row_bands), N_CB: len(col_bands),
           P: Mt * Kt * Nt, N_A: Mt * Kt, N_AB: Mt * Kt + Kt * Nt, N_TILES: Mt * Kt + Kt * Nt + Mt * Nt,
           REAL_MT: Mt, REAL_KT: Kt, REAL_NT: Nt, LOOKAHEAD: params.lookahead, STORE_FIRST: int(params.store_first)}
    if params.structure == "rotate":
        window = min(fbj, fn)
        ramp = min(params.ramp, window)
        units = len(row_bands) * fn
        last_entry = 0 if units - 1 < ramp else ((units - 1) * Kt) // window
        geo.update({STRUCTURE: UNITS, W: window, RAMP: ramp, H: heights[1], STEP: window * heights[1],
                    N_UNITS: units, END: (last_entry + Kt) * window * heights[1]})
        tables = _cell_tables((1,), (1,), "row", False)  # unused by units
    else:
        span = Kt * heights[1] * widths[1]
        geo.update({STRUCTURE: BLOCKS, TAIL: min(params.tail, Kt), BLOCK_SPAN: span,
                    END: len(row_bands) * len(col_bands) * span})
        tables = _cell_tables(tuple(heights), tuple(widths), params.inner, flip)
    geo.update({NEVER: geo[END] + 1, PINNED: geo[END] + 2})
    sections: list[Section] = [(ROW_START_AT, len(row_bands) + 1, _starts(row_bands)),
                               (COL_START_AT, len(col_bands) + 1, _starts(col_bands)),
                               (SIZES_AT, 4, heights + widths)]
    return geo, sections + list(tables)
