"""Event engine of the output-stationary array (os): the moves of `reference_output` evaluated
per tile and per PE from where each stream enters, instead of cycle by cycle.

Tile j's A product k reaches PE (r, q) in a_j + r + q + k and its B product k in b_j + r + q + k,
so they meet in step iff a_j == b_j; the PE's last product is in a_j + r + q + K - 1. The drain
of column q takes the result of row r out in step r (cycle d_j + q + r) at the latest, which
frees that PE's register for the next tile covering it. The engine computes these cycles for
every PE, finds where a check of the reference engine would first fail (same order within a
cycle), and does each tile's products as one block A[rows, :] @ B[:, cols].
"""

from __future__ import annotations

import numpy as np

from simcore.systolic.closed_form import Entry
from simcore.systolic.common import FirstError, Run, offer_barrier, tile_arrays
from simcore.systolic.events_stationary import NEVER
from simcore.systolic.model import SystolicDesign, Tile


def _lanes(
    first: FirstError,
    starts: np.ndarray,
    lengths: np.ndarray,
    rank: int,
    what: str,
    pe_rows: np.ndarray | None = None,
) -> None:
    """Two tiles entering (or draining) one lane in one cycle; starts are in tile order, so the
    first clash is in lane 0 where the later tile starts."""
    busy_until = np.maximum.accumulate(starts + lengths - 1)
    hit = np.flatnonzero(starts[1:] <= busy_until[:-1])
    if hit.size:
        j = hit[0] + 1
        first.offer(
            starts[j], rank, (0 if pe_rows is None else int(pe_rows[j]), 0), "collision", what
        )


def _writeback(
    first: FirstError,
    design: SystolicDesign,
    cut: tuple[Tile, ...],
    ready: np.ndarray,
    first_out: np.ndarray,
    out_pe: list[tuple[int, int]],
) -> tuple[int, ...]:
    """Write-backs run in tile order once a tile's results are all in; tile j's first result
    needs the buffer tile j - b used, free once that tile's write-back has ended."""
    hbm = design.hbm
    if hbm.on_chip:
        return (0,) * len(cut)
    starts: list[int] = []
    ends: list[int] = []
    engine = 0
    for j, tile in enumerate(cut):
        owner = j - hbm.buffers
        if owner >= 0 and ends[owner] > first_out[j]:
            when = (
                "its write-back has not started"
                if starts[owner] > first_out[j]
                else f"its write-back ends in cycle {ends[owner]}"
            )
            rank = 4 if design.assumptions.drain else 9
            first.offer(
                first_out[j],
                rank,
                out_pe[j],
                "buffer",
                f"the output buffer of tile {j} still holds tile {owner}'s results ({when})",
            )
        start = max(engine, int(ready[j]))
        engine = start + hbm.cycles(tile.words)
        starts.append(start)
        ends.append(engine)
    return tuple(ends)


def _registers(
    first: FirstError,
    design: SystolicDesign,
    a_start: np.ndarray,
    drains: np.ndarray,
    big_k: int,
    mt: np.ndarray,
    nt: np.ndarray,
) -> None:
    """Per PE: with the drain charged, the register a result waits in (the accumulator, or the
    shadow register) is emptied by the drain of the last tile covering the PE in step r."""
    # the PEs some tile spans: on a sub-array larger than the problem, only those hold state
    rows, cols = (int(mt.max()), int(nt.max())) if len(mt) else (0, 0)
    shadow = design.assumptions.shadow
    prev_drain = np.full((rows, cols), -NEVER, dtype=np.int64)
    prev_tile = np.full((rows, cols), -1, dtype=np.int64)
    for j in range(len(a_start)):
        m, n = int(mt[j]), int(nt[j])
        r = np.arange(m)[:, None]
        q = np.arange(n)[None, :]
        emptied = prev_drain[:m, :n] + q + r  # the drain's step r, before the cycle's products
        needs = a_start[j] + r + q + (big_k - 1 if shadow else 0)  # first product / result complete
        cycle = np.where(needs < emptied, needs, NEVER)
        at = int(np.argmin(cycle))
        if cycle.flat[at] < NEVER:
            pr, pq = divmod(at, n)
            holder = int(prev_tile[:m, :n].flat[at])
            what = (
                f"the shadow register still holds tile {holder}'s result when tile {j}'s result is complete"
                if shadow
                else f"the accumulator still holds tile {holder}'s result when tile {j}'s first "
                "product arrives"
            )
            first.offer(cycle.flat[at], 8 if shadow else 7, (pr, pq), "accumulator", what)
        prev_drain[:m, :n] = drains[j]
        prev_tile[:m, :n] = j


def _drains(
    first: FirstError,
    design: SystolicDesign,
    a_start: np.ndarray,
    late: np.ndarray,
    drains: np.ndarray,
    big_k: int,
    ta: dict[str, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, int]], np.ndarray]:
    """The drain's checks; (barrier ends, all real results out, first real result out and its
    PE, last event + 1) per tile."""
    mt, nt, mr, nr = (ta[f] for f in ("span_rows", "span_cols", "rows", "cols"))
    complete = late + big_k + mt + nt - 2
    drain_end = drains + nt + mt - 1
    _lanes(first, drains, mt, 3, "two tiles drain column 0 in the same cycle", pe_rows=mt - 1)
    unfinished = np.maximum(0, drains - late - big_k + 1)  # rows still computing at step 0
    for j in np.flatnonzero(unfinished < mt):
        first.offer(
            drains[j],
            5,
            (int(unfinished[j]), 0),
            "drain",
            f"the drain of tile {j} reaches the unfinished result of row {unfinished[j]}",
        )
    _registers(first, design, a_start, drains, big_k, mt, nt)
    ends = complete if design.assumptions.shadow else drain_end
    out_pe = [(int(x) - 1, 0) for x in mt]  # column 0 puts out its bottom real row first
    return ends, drains + nr + mt - 1, drains + mt - mr, out_pe, np.maximum(complete, drain_end)


def run_output_events(
    design: SystolicDesign,
    a: np.ndarray,
    b: np.ndarray,
    entries: tuple[Entry, ...],
    cut: tuple[Tile, ...],
) -> Run:
    big_k = a.shape[1]
    assume = design.assumptions
    ta = tile_arrays(cut)
    mt, nt, mr, nr = (ta[f] for f in ("span_rows", "span_cols", "rows", "cols"))
    a_start = np.array([e[0] for e in entries], dtype=np.int64)
    b_start = np.array([e[1] for e in entries], dtype=np.int64)
    late = np.maximum(a_start, b_start)
    complete = late + big_k + mt + nt - 2  # one past the last product (PE (mt-1, nt-1))
    first = FirstError()
    k_len = np.full(len(cut), big_k, dtype=np.int64)
    _lanes(first, a_start, k_len, 0, "two tiles feed row 0 in the same cycle")
    _lanes(first, b_start, k_len, 1, "two tiles feed column 0 in the same cycle")
    if assume.drain:  # results leave through the drain, bottom row first
        drains = np.array([e[2] for e in entries], dtype=np.int64)
        ends, ready, first_out, out_pe, last = _drains(
            first, design, a_start, late, drains, big_k, ta
        )
    else:  # each result leaves as soon as it is complete, PE (0, 0)'s first
        ends, last = complete, complete
        ready, first_out, out_pe = (
            late + big_k + mr + nr - 2,
            a_start + big_k - 1,
            [(0, 0)] * len(cut),
        )
    if assume.in_sequence:
        offer_barrier(first, np.minimum(a_start, b_start), ends)
    hbm_ends = _writeback(first, design, cut, ready, first_out, out_pe)
    odd = np.flatnonzero(a_start != b_start)
    if odd.size:
        j = int(odd[0])
        what = (
            f"A of tile {j} (product 0) meets no B"
            if a_start[j] < b_start[j]
            else f"B of tile {j} (product 0) meets no A"
        )
        first.offer(
            min(a_start[j], b_start[j]),
            6,
            (0, 0),
            "step",
            what + ": the A and B streams are out of step",
        )
    first.raise_if_any()

    c = np.zeros((a.shape[0], b.shape[1]), dtype=np.result_type(a, b))
    by_row: dict[int, list[Tile]] = {}
    for tile in cut:
        by_row.setdefault(tile.row0, []).append(tile)
    for row0, group in by_row.items():
        # Each PE's K products are its result; one product per row of tiles (fewer, larger calls).
        cols = np.concatenate([np.arange(t.col0, t.col0 + t.cols) for t in group])
        rows = slice(row0, row0 + group[0].rows)
        c[rows, cols] = a[rows, :] @ b[:, cols]
    words = int(sum(tile.words for tile in cut))
    cycles = int(max(last.max(), max(hbm_ends)))
    return Run(
        c,
        cycles,
        int(big_k * mr.sum()),
        int(big_k * nr.sum()),
        0,
        0,
        words,
        0 if design.hbm.on_chip else words,
        hbm_ends,
    )
