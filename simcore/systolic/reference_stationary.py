"""Reference cycle model of a stationary-operand array (ws, is), stepped cycle by cycle.

X (Ls x Kd) streams, W (Kd x P) stays in the PEs, Y = X W. On the mapped r x c sub-array, every
cycle moves three kinds of tokens, each tagged with its tile:
  * stream items enter row q at the left (item i of tile j in cycle S_j + i + q) and move one
    column right per cycle, leaving past the tile's last column;
  * stationary values enter each column at the top (column q in cycles L_j + q .. + kt - 1,
    bottom row's value first) and shift down one row per cycle through the shadow registers
    (the active ones without shadow registers) until they reach their row;
  * partial sums move one row down per cycle and leave from the tile's last row (kt - 1) into
    the accumulator, where the sums of a K split are read back and added.
Padding (edge tiles padded to the sub-array) streams and loads zeros, which no buffer reads.
Checks, in this order within a cycle: two tiles entering one row or one column; a tile entering
before the previous ones have finished (folds in sequence); stationary values read from the
buffer before their fetch ended; a swap finding the wrong value in the shadow register; a
product with the wrong stationary value. Each raises SystolicTimingError naming PE and cycle.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from simcore.systolic.common import Run, SystolicTimingError, tile_arrays
from simcore.systolic.model import HbmLink, SystolicDesign, Tile
from simcore.systolic.schedule import Entry

EMPTY = -1


def lane_events(starts: Sequence[tuple[int, int, int]], horizon: int, width: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (cycle, lane): how many tokens enter, and the tile and sequence number of the last.

    Entry j of `starts` is (first cycle, lanes, length): lane x gets items s = 0 .. length-1 in
    cycles first + x + s. Collisions are kept as counts so the run can fail in step.
    """
    count = np.zeros((horizon, width), dtype=np.int64)
    tile = np.full((horizon, width), EMPTY, dtype=np.int64)
    seq = np.full((horizon, width), EMPTY, dtype=np.int64)
    for j, (first, lanes, length) in enumerate(starts):
        lane = np.arange(lanes)[:, None]
        s = np.arange(length)[None, :]
        t = first + lane + s
        lane, s = np.broadcast_to(lane, t.shape), np.broadcast_to(s, t.shape)
        np.add.at(count, (t, lane), 1)
        tile[t, lane] = j
        seq[t, lane] = s
    return count, tile, seq


class Buffers:
    """The on-chip buffers of the stationary tiles and the fetch engine that fills them, one
    tile at a time in tile order; a buffer is free once its tile's last real value was read."""

    def __init__(self, hbm: HbmLink, cut: Sequence[Tile], noun: str) -> None:
        self.hbm, self.cut, self.noun = hbm, cut, noun
        self.owner = [EMPTY] * hbm.buffers
        self.ready = [0] * hbm.buffers
        self.left = [0] * hbm.buffers
        self.free_at = [0] * hbm.buffers
        self.engine_free = 0
        self.next = 0
        self.ends = [0] * len(cut)

    def step(self, t: int) -> None:
        """Start the next fetch if the engine is idle and its buffer has been emptied."""
        j = self.next
        if j >= len(self.cut) or t < self.engine_free:
            return
        slot = j % self.hbm.buffers
        if self.owner[slot] != EMPTY and (self.left[slot] > 0 or self.free_at[slot] > t):
            return
        end = t + self.hbm.cycles(self.cut[j].words)
        self.owner[slot], self.ready[slot], self.left[slot] = j, end, self.cut[j].words
        self.engine_free, self.ends[j], self.next = end, end, j + 1

    def read(self, t: int, j: int, col: int, words: int) -> None:
        """The array takes `words` values of tile j; they must have been fetched in full."""
        slot = j % self.hbm.buffers
        if self.owner[slot] != j or self.ready[slot] > t:
            when = f"its fetch ends in cycle {self.ready[slot]}" if self.owner[slot] == j else "its fetch has not started"
            raise SystolicTimingError((0, col), t, "buffer", f"{self.noun}s of tile {j} are not in the buffer ({when})")
        self.left[slot] -= words
        if self.left[slot] == 0:
            self.free_at[slot] = t + 1


def _first(mask: np.ndarray) -> tuple[int, int]:
    r, q = np.argwhere(mask)[0]
    return int(r), int(q)


def run_stationary_reference(design: SystolicDesign, x: np.ndarray, w: np.ndarray, entries: tuple[Entry, ...],
                             cut: tuple[Tile, ...], noun: str) -> Run:
    ls = x.shape[0]
    mapping, assume = design.used, design.assumptions
    rows, cols = mapping.rows, mapping.cols
    ta = tile_arrays(cut)
    kt, nt, kr, nr, k0, n0 = (ta[f] for f in ("span_rows", "span_cols", "rows", "cols", "row0", "col0"))
    loads = [e[0] for e in entries]
    streams = [e[1] for e in entries]
    horizon = 1 + max(max(s + ls + int(kt[j]) + int(nt[j]) - 2, loads[j] + int(nt[j]) + int(kt[j]))
                      for j, s in enumerate(streams))
    act_count, act_tile_in, act_i_in = lane_events([(s, int(kt[j]), ls) for j, s in enumerate(streams)], horizon, rows)
    w_count, w_tile_in, w_step_in = lane_events([(ld, int(nt[j]), int(kt[j])) for j, ld in enumerate(loads)], horizon, cols)
    buffers = None if design.hbm.on_chip else Buffers(design.hbm, cut, noun)
    stream_at = {s: j for j, s in enumerate(streams)}
    load_at = {ld: j for j, ld in enumerate(loads)}
    macs_left = (ls * kt * nt).astype(np.int64)

    dtype = np.result_type(x, w)
    row_of = np.broadcast_to(np.arange(rows)[:, None], (rows, cols))
    col_of = np.broadcast_to(np.arange(cols)[None, :], (rows, cols))

    def empty() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        full = np.full((rows, cols), EMPTY, dtype=np.int64)
        return full, full.copy(), np.zeros((rows, cols), dtype=dtype)

    act_tile, act_i, act_val = empty()  # the stream item at each PE this cycle
    ps_val = np.zeros((rows, cols), dtype=dtype)  # partial sum arriving from above
    wa_tile, wa_row, wa_val = empty()  # active register: (tile, destination row, value)
    if assume.shadow:
        ch_tile, ch_row, ch_val = empty()  # shadow registers form the load shift chain
    else:
        ch_tile, ch_row, ch_val = wa_tile, wa_row, wa_val  # loads shift through active ones

    out = np.zeros((ls, w.shape[1]), dtype=dtype)
    arrivals = np.zeros((ls, w.shape[1]), dtype=np.int64)
    folds = cut[0].row_folds
    last_mac = stream_reads = stationary_reads = psum_writes = readbacks = c_writes = 0

    for t in range(horizon):
        if (act_count[t] > 1).any():
            r = int(np.argmax(act_count[t] > 1))
            raise SystolicTimingError((r, 0), t, "collision", f"two tiles feed row {r} in the same cycle")
        if (w_count[t] > 1).any():
            q = int(np.argmax(w_count[t] > 1))
            raise SystolicTimingError((0, q), t, "collision", f"two tiles load column {q} in the same cycle")
        if assume.in_sequence:
            for j in sorted({stream_at.get(t, EMPTY), EMPTY if assume.shadow else load_at.get(t, EMPTY)} - {EMPTY}):
                busy = np.flatnonzero(macs_left[:j] > 0)
                if busy.size:
                    raise SystolicTimingError((0, 0), t, "barrier", f"tile {j} enters before tile {busy[0]} has "
                                              "finished (folds in sequence)")

        # Stationary values entering the top of each column (latched at the end of the cycle).
        loading = np.flatnonzero(w_count[t] == 1)
        w_in_tile = w_tile_in[t, loading]
        w_in_row = kt[w_in_tile] - 1 - w_step_in[t, loading]  # bottom row's value first
        real = (w_in_row < kr[w_in_tile]) & (loading < nr[w_in_tile])
        w_in_val = np.zeros(loading.size, dtype=dtype)
        w_in_val[real] = w[k0[w_in_tile[real]] + w_in_row[real], n0[w_in_tile[real]] + loading[real]]
        if buffers is not None:
            buffers.step(t)
            for j in np.unique(w_in_tile[real]):
                cols_j = loading[real & (w_in_tile == j)]
                buffers.read(t, int(j), int(cols_j[0]), cols_j.size)
        stationary_reads += int(np.count_nonzero(real))

        # Stream items: shift one column right, enter at the left, leave past the tile.
        for arr, inj in ((act_tile, act_tile_in[t]), (act_i, act_i_in[t])):
            arr[:, 1:] = arr[:, :-1]
            arr[:, 0] = inj
        act_val[:, 1:] = act_val[:, :-1]
        fed = np.flatnonzero(act_tile[:, 0] >= 0)
        fed_real = fed[fed < kr[act_tile[fed, 0]]]
        act_val[fed, 0] = 0
        act_val[fed_real, 0] = x[act_i[fed_real, 0], k0[act_tile[fed_real, 0]] + fed_real]
        stream_reads += fed_real.size
        past = (act_tile >= 0) & (col_of >= nt[np.maximum(act_tile, 0)])
        act_tile[past] = EMPTY
        has_act = act_tile >= 0

        # The first item of a tile swaps the shadow value in; every product needs its own.
        if assume.shadow:
            swap = has_act & (wa_tile != act_tile)
            unready = swap & ((ch_tile != act_tile) | (ch_row != row_of))
            if unready.any():
                r, q = _first(unready)
                j = act_tile[r, q]
                how = "was overwritten by a later tile's load" if ch_tile[r, q] > j else "has not arrived"
                raise SystolicTimingError((r, q), t, "operand", f"the {noun} of tile {j} for this PE {how} "
                                          "when the tile's first item swaps it in from the shadow register")
            wa_tile[swap], wa_row[swap], wa_val[swap] = ch_tile[swap], ch_row[swap], ch_val[swap]
        wrong = has_act & ((wa_tile != act_tile) | (wa_row != row_of))
        if wrong.any():
            r, q = _first(wrong)
            j = act_tile[r, q]
            how = "was overwritten by a later tile's load" if wa_tile[r, q] > j else "is not loaded yet"
            raise SystolicTimingError((r, q), t, "operand", f"the {noun} of tile {j} for this PE {how}")

        # Multiply-accumulate; sums from a tile's last row leave for the accumulator.
        summed = np.where(has_act, ps_val + act_val * wa_val, 0)
        if has_act.any():
            np.add.at(macs_left, act_tile[has_act], -1)
            last_mac = t
        leaves = has_act & (row_of == kt[np.maximum(act_tile, 0)] - 1)
        leaves &= col_of < nr[np.maximum(act_tile, 0)]  # padded columns' sums are dropped
        if leaves.any():
            lr, lq = np.nonzero(leaves)
            oi, on = act_i[lr, lq], n0[act_tile[lr, lq]] + lq
            np.add.at(out, (oi, on), summed[lr, lq])
            # The first sum of a result is written, every later one read back, added and written;
            # the last write is the final one.
            cell, hits = np.unique(oi * out.shape[1] + on, return_counts=True)
            before = arrivals.flat[cell]
            arrivals.flat[cell] = before + hits
            finals = int(np.count_nonzero(before + hits == folds))
            readbacks += int(oi.size - np.count_nonzero(before == 0))
            c_writes += finals
            psum_writes += int(oi.size) - finals
        stays = has_act & (row_of < kt[np.maximum(act_tile, 0)] - 1)
        ps_val[1:] = np.where(stays[:-1], summed[:-1], 0)
        ps_val[0] = 0

        # Load chain: a value still short of its row moves down one; new values enter row 0.
        moving = (ch_tile[:-1] >= 0) & (ch_row[:-1] > row_of[:-1])
        for arr in (ch_tile, ch_row, ch_val):
            arr[1:] = np.where(moving, arr[:-1], arr[1:])
        ch_tile[0, loading], ch_row[0, loading], ch_val[0, loading] = w_in_tile, w_in_row, w_in_val

    if (arrivals != folds).any() or (macs_left != 0).any():  # cannot happen once every check passed
        raise AssertionError("the reference model lost a partial sum")
    return Run(out, last_mac + 1, stream_reads, stationary_reads, psum_writes, readbacks, c_writes,
               0 if buffers is None else int(sum(t.words for t in cut)),
               tuple(buffers.ends) if buffers is not None else (0,) * len(cut))
