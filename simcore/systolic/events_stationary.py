"""Event engine of the stationary-operand array (ws, is): the moves of `reference_stationary`
evaluated per tile and per PE from where each stream enters, instead of cycle by cycle.

Every token moves one hop per cycle, so its arrival at PE (r, q) is its entry cycle plus the
hops: tile j's stream item i reaches PE (r, q) in S_j + i + r + q, its stationary value for
row r settles there at the end of cycle L_j + q + kt - 1 (the top row's value enters last), and
the next tile whose load passes row r of column q overwrites the register at the end of cycle
L_next + q + r. From these the engine finds, per PE, the first cycle a check of the reference
engine would fail, and keeps the earliest over all PEs and checks (same order within a cycle).
The products are done tile by tile as blocks: PE (r, q) adds x[i, r] w[r, q] to the sum from
above, so the sum leaving column q of the tile is the block product's column.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from simcore.systolic.closed_form import Entry
from simcore.systolic.common import FirstError, Run, offer_barrier, tile_arrays
from simcore.systolic.model import SystolicDesign, Tile

NEVER = np.iinfo(np.int64).max // 4


def _collisions(
    first: FirstError, loads: np.ndarray, streams: np.ndarray, ls: int, kt: np.ndarray
) -> None:
    """Two tiles entering one row or one column in the same cycle: both streams start in tile
    order, so a collision first shows where the later tile enters lane 0."""
    hit = np.flatnonzero(streams[1:] < streams[:-1] + ls)
    if hit.size:
        first.offer(
            streams[hit[0] + 1], 0, (0, 0), "collision", "two tiles feed row 0 in the same cycle"
        )
    busy_until = np.maximum.accumulate(loads + kt - 1)
    hit = np.flatnonzero(loads[1:] <= busy_until[:-1])
    if hit.size:
        first.offer(
            loads[hit[0] + 1], 1, (0, 0), "collision", "two tiles load column 0 in the same cycle"
        )


def _barrier(
    first: FirstError,
    design: SystolicDesign,
    loads: np.ndarray,
    streams: np.ndarray,
    ends: np.ndarray,
) -> None:
    """Folds in sequence: a tile's first item (and, without shadow registers, its first load)
    enters only once every earlier tile has done its last product."""
    if not design.assumptions.in_sequence:
        return
    for starts in [streams] if design.assumptions.shadow else [streams, loads]:
        offer_barrier(first, starts, ends)


def _fetch(
    first: FirstError,
    design: SystolicDesign,
    cut: Sequence[Tile],
    loads: np.ndarray,
    kt: np.ndarray,
    kr: np.ndarray,
    nr: np.ndarray,
    noun: str,
) -> tuple[int, ...]:
    """The fetch engine works in tile order; tile j's buffer is the one tile j - b emptied with
    its last real read (column n - 1, the top row, kt - 1 cycles after it starts loading)."""
    hbm = design.hbm
    if hbm.on_chip:
        return (0,) * len(cut)
    ends: list[int] = []
    engine = 0
    for j, tile in enumerate(cut):
        owner = j - hbm.buffers
        free = int(loads[owner] + nr[owner] + kt[owner] - 1) if owner >= 0 else 0
        start = max(engine, free)
        engine = start + hbm.cycles(tile.words)
        ends.append(engine)
        read = int(loads[j] + kt[j] - kr[j])  # its first real value, in column 0
        if engine > read:
            when = (
                "its fetch has not started" if start > read else f"its fetch ends in cycle {engine}"
            )
            first.offer(
                read, 3, (0, 0), "buffer", f"{noun}s of tile {j} are not in the buffer ({when})"
            )
    return tuple(ends)


def _operands(
    first: FirstError,
    design: SystolicDesign,
    loads: np.ndarray,
    streams: np.ndarray,
    ls: int,
    kt: np.ndarray,
    nt: np.ndarray,
    noun: str,
) -> None:
    """Per PE: is the tile's own stationary value in place for every product (or, with shadow
    registers, in the shadow register when the first item swaps it in)?"""
    # the PEs some tile spans: on a sub-array larger than the problem, only those hold state
    rows, cols = (int(kt.max()), int(nt.max())) if len(kt) else (0, 0)
    next_load = np.full((rows, cols), NEVER, dtype=np.int64)  # L of the next tile loading there
    shadow = design.assumptions.shadow
    for j in range(len(loads) - 1, -1, -1):
        k, n = int(kt[j]), int(nt[j])
        r = np.arange(k)[:, None]
        q = np.arange(n)[None, :]
        first_use = streams[j] + r + q
        settled = loads[j] + q + k  # the value is in place from this cycle on
        overwritten = next_load[:k, :n] + q + r  # ... up to the end of this cycle
        late = first_use < settled
        if shadow:
            bad = late | (first_use > overwritten)
            cycle = np.where(bad, first_use, NEVER)
            rank, when = 4, " when the tile's first item swaps it in from the shadow register"
        else:
            gone = np.where(
                overwritten + 1 <= first_use,
                first_use,
                np.where(overwritten + 1 <= first_use + ls - 1, overwritten + 1, NEVER),
            )
            cycle = np.where(late, first_use, gone)
            rank, when = 5, ""
        at = int(np.argmin(cycle))
        if cycle.flat[at] < NEVER:
            pr, pq = divmod(at, n)
            how = (
                "has not arrived"
                if shadow and late.flat[at]
                else "is not loaded yet"
                if late.flat[at]
                else ("was overwritten by a later tile's load")
            )
            first.offer(
                cycle.flat[at],
                rank,
                (pr, pq),
                "operand",
                f"the {noun} of tile {j} for this PE {how}{when}",
            )
        next_load[:k, :n] = loads[j]


def run_stationary_events(
    design: SystolicDesign,
    x: np.ndarray,
    w: np.ndarray,
    entries: tuple[Entry, ...],
    cut: tuple[Tile, ...],
    noun: str,
) -> Run:
    ls = x.shape[0]
    ta = tile_arrays(cut)
    kt, nt, kr, nr, k0, n0 = (
        ta[f] for f in ("span_rows", "span_cols", "rows", "cols", "row0", "col0")
    )
    loads = np.array([e[0] for e in entries], dtype=np.int64)
    streams = np.array([e[1] for e in entries], dtype=np.int64)
    ends = streams + ls + kt + nt - 2  # one past each tile's last product (PE (kt-1, nt-1))
    first = FirstError()
    _collisions(first, loads, streams, ls, kt)
    _barrier(first, design, loads, streams, ends)
    hbm_ends = _fetch(first, design, cut, loads, kt, kr, nr, noun)
    _operands(first, design, loads, streams, ls, kt, nt, noun)
    first.raise_if_any()

    out = np.zeros((ls, w.shape[1]), dtype=np.result_type(x, w))
    by_column: dict[int, list[Tile]] = {}
    for tile in cut:
        by_column.setdefault(tile.col0, []).append(tile)
    folds = cut[0].row_folds
    psum_writes = readbacks = c_writes = 0
    for col0, group in by_column.items():
        # The column's tiles add their block products into the accumulator, one K range each:
        # one product over the K rows they cover (few large products run faster than many small).
        rows = np.concatenate([np.arange(t.row0, t.row0 + t.rows) for t in group])
        cols = slice(col0, col0 + group[0].cols)
        out[:, cols] += x[:, rows] @ w[rows, cols]
        words = ls * group[0].cols
        arrivals = len(
            group
        )  # per result: the first written, the others read back; the last is final
        readbacks += words * (arrivals - 1)
        psum_writes += words * (arrivals - 1) if arrivals == folds else words * arrivals
        c_writes += words if arrivals == folds else 0
    stream_reads = int(ls * sum(t.rows for t in cut))
    stationary_reads = int(sum(t.words for t in cut))
    hbm_words = 0 if design.hbm.on_chip else stationary_reads
    return Run(
        out,
        int(ends.max()),
        stream_reads,
        stationary_reads,
        psum_writes,
        readbacks,
        c_writes,
        hbm_words,
        hbm_ends,
    )
