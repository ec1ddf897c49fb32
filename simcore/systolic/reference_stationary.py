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

from simcore.systolic.closed_form import Entry
from simcore.systolic.common import Run, SystolicTimingError, tile_arrays
from simcore.systolic.model import HbmLink, SystolicDesign, Tile

EMPTY = -1


def lane_events(
    starts: Sequence[tuple[int, int, int]], horizon: int, width: int
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
            when = (
                f"its fetch ends in cycle {self.ready[slot]}"
                if self.owner[slot] == j
                else "its fetch has not started"
            )
            raise SystolicTimingError(
                (0, col), t, "buffer", f"{self.noun}s of tile {j} are not in the buffer ({when})"
            )
        self.left[slot] -= words
        if self.left[slot] == 0:
            self.free_at[slot] = t + 1


def _first(mask: np.ndarray) -> tuple[int, int]:
    r, q = np.argwhere(mask)[0]
    return int(r), int(q)


class _StationaryRun:
    """One ws or is run, stepped cycle by cycle."""

    def __init__(
        self,
        design: SystolicDesign,
        x: np.ndarray,
        w: np.ndarray,
        entries: tuple[Entry, ...],
        cut: tuple[Tile, ...],
        noun: str,
    ) -> None:
        self.design, self.x, self.w, self.cut, self.noun = design, x, w, cut, noun
        self.ls, self.assume = x.shape[0], design.assumptions
        rows, cols = design.used.rows, design.used.cols
        ta = tile_arrays(cut)
        self.kt, self.nt, self.kr, self.nr, self.k0, self.n0 = (
            ta[f] for f in ("span_rows", "span_cols", "rows", "cols", "row0", "col0")
        )
        kt, nt, ls = self.kt, self.nt, self.ls
        self.loads, self.streams = [e[0] for e in entries], [e[1] for e in entries]
        self.horizon = 1 + max(
            max(s + ls + int(kt[j]) + int(nt[j]) - 2, self.loads[j] + int(nt[j]) + int(kt[j]))
            for j, s in enumerate(self.streams)
        )
        self.act_in = lane_events(
            [(s, int(kt[j]), ls) for j, s in enumerate(self.streams)], self.horizon, rows
        )
        self.w_in = lane_events(
            [(ld, int(nt[j]), int(kt[j])) for j, ld in enumerate(self.loads)], self.horizon, cols
        )
        self.buffers = None if design.hbm.on_chip else Buffers(design.hbm, cut, noun)
        self.stream_at = {s: j for j, s in enumerate(self.streams)}
        self.load_at = {ld: j for j, ld in enumerate(self.loads)}
        self.macs_left = (ls * kt * nt).astype(np.int64)  # for folds in sequence
        dtype = np.result_type(x, w)
        self.row_of = np.broadcast_to(np.arange(rows)[:, None], (rows, cols))
        self.col_of = np.broadcast_to(np.arange(cols)[None, :], (rows, cols))

        def empty() -> list[np.ndarray]:
            full = np.full((rows, cols), EMPTY, dtype=np.int64)
            return [full, full.copy(), np.zeros((rows, cols), dtype=dtype)]

        self.act = empty()  # the stream item at each PE this cycle: (tile, item, value)
        self.ps_val = np.zeros((rows, cols), dtype=dtype)  # partial sum arriving from above
        self.active = empty()  # active register: (tile, destination row, value)
        # Shadow registers form the load shift chain; without them loads shift through the active ones.
        self.chain = empty() if self.assume.shadow else self.active
        self.out = np.zeros((ls, w.shape[1]), dtype=dtype)
        self.arrivals = np.zeros((ls, w.shape[1]), dtype=np.int64)
        self.folds = cut[0].row_folds
        self.last_mac = self.stream_reads = self.stationary_reads = 0
        self.psum_writes = self.readbacks = self.c_writes = 0

    def entries_check(self, t: int) -> None:
        """Two tiles entering one lane at once; folds in sequence entering too early."""
        for (count, _, _), name, at in (
            (self.act_in, "feed row", lambda v: (v, 0)),
            (self.w_in, "load column", lambda v: (0, v)),
        ):
            if (count[t] > 1).any():
                lane = int(np.argmax(count[t] > 1))
                raise SystolicTimingError(
                    at(lane), t, "collision", f"two tiles {name} {lane} in the same cycle"
                )
        if self.assume.in_sequence:
            starting = {
                self.stream_at.get(t, EMPTY),
                EMPTY if self.assume.shadow else self.load_at.get(t, EMPTY),
            }
            for j in sorted(starting - {EMPTY}):
                busy = np.flatnonzero(self.macs_left[:j] > 0)
                if busy.size:
                    raise SystolicTimingError(
                        (0, 0),
                        t,
                        "barrier",
                        f"tile {j} enters before tile {busy[0]} has finished (folds in sequence)",
                    )

    def load(self, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Stationary values entering the top of each column (latched at the end of the cycle)."""
        count, tile_in, step_in = self.w_in
        kt, kr, nr = self.kt, self.kr, self.nr
        loading = np.flatnonzero(count[t] == 1)
        w_tile = tile_in[t, loading]
        w_row = kt[w_tile] - 1 - step_in[t, loading]  # bottom row's value first
        real = (w_row < kr[w_tile]) & (loading < nr[w_tile])
        w_val = np.zeros(loading.size, dtype=self.out.dtype)
        w_val[real] = self.w[
            self.k0[w_tile[real]] + w_row[real], self.n0[w_tile[real]] + loading[real]
        ]
        if self.buffers is not None:
            self.buffers.step(t)
            for j in np.unique(w_tile[real]):
                cols_j = loading[real & (w_tile == j)]
                self.buffers.read(t, int(j), int(cols_j[0]), cols_j.size)
        self.stationary_reads += int(np.count_nonzero(real))
        return loading, w_tile, w_row, w_val

    def stream(self, t: int) -> np.ndarray:
        """Stream items shift one column right, enter at the left, leave past the tile."""
        act_tile, act_i, act_val = self.act
        _, tile_in, item_in = self.act_in
        for arr, inj in ((act_tile, tile_in[t]), (act_i, item_in[t])):
            arr[:, 1:] = arr[:, :-1]
            arr[:, 0] = inj
        act_val[:, 1:] = act_val[:, :-1]
        fed = np.flatnonzero(act_tile[:, 0] >= 0)
        real = fed[fed < self.kr[act_tile[fed, 0]]]
        act_val[fed, 0] = 0
        act_val[real, 0] = self.x[act_i[real, 0], self.k0[act_tile[real, 0]] + real]
        self.stream_reads += real.size
        act_tile[(act_tile >= 0) & (self.col_of >= self.nt[np.maximum(act_tile, 0)])] = EMPTY
        return act_tile >= 0

    def operand_check(self, t: int, has_act: np.ndarray) -> None:
        """The first item of a tile swaps the shadow value in; every product needs its own."""
        act_tile = self.act[0]
        wa_tile, wa_row, _ = self.active
        if self.assume.shadow:
            ch_tile, ch_row, _ = self.chain
            swap = has_act & (wa_tile != act_tile)
            unready = swap & ((ch_tile != act_tile) | (ch_row != self.row_of))
            if unready.any():
                r, q = _first(unready)
                j = act_tile[r, q]
                how = (
                    "was overwritten by a later tile's load"
                    if ch_tile[r, q] > j
                    else "has not arrived"
                )
                raise SystolicTimingError(
                    (r, q),
                    t,
                    "operand",
                    f"the {self.noun} of tile {j} for this PE {how} "
                    "when the tile's first item swaps it in from the shadow register",
                )
            for dst, src in zip(self.active, self.chain):
                dst[swap] = src[swap]
        wrong = has_act & ((wa_tile != act_tile) | (wa_row != self.row_of))
        if wrong.any():
            r, q = _first(wrong)
            j = act_tile[r, q]
            how = (
                "was overwritten by a later tile's load"
                if wa_tile[r, q] > j
                else "is not loaded yet"
            )
            raise SystolicTimingError(
                (r, q), t, "operand", f"the {self.noun} of tile {j} for this PE {how}"
            )

    def products(self, t: int, has_act: np.ndarray) -> None:
        """Multiply-accumulate; sums from a tile's last row leave for the accumulator."""
        act_tile, act_i, act_val = self.act
        span = self.kt[np.maximum(act_tile, 0)]
        summed = np.where(has_act, self.ps_val + act_val * self.active[2], 0)
        if has_act.any():
            np.add.at(self.macs_left, act_tile[has_act], -1)
            self.last_mac = t
        leaves = (
            has_act & (self.row_of == span - 1) & (self.col_of < self.nr[np.maximum(act_tile, 0)])
        )
        if leaves.any():  # (padded columns' sums are dropped)
            lr, lq = np.nonzero(leaves)
            oi, on = act_i[lr, lq], self.n0[act_tile[lr, lq]] + lq
            np.add.at(self.out, (oi, on), summed[lr, lq])
            # The first sum of a result is written, every later one read back, added and written;
            # the last write is the final one.
            cell, hits = np.unique(oi * self.out.shape[1] + on, return_counts=True)
            before = self.arrivals.flat[cell]
            self.arrivals.flat[cell] = before + hits
            finals = int(np.count_nonzero(before + hits == self.folds))
            self.readbacks += int(oi.size - np.count_nonzero(before == 0))
            self.c_writes += finals
            self.psum_writes += int(oi.size) - finals
        stays = has_act & (self.row_of < span - 1)
        self.ps_val[1:] = np.where(stays[:-1], summed[:-1], 0)
        self.ps_val[0] = 0

    def shift_chain(
        self, loading: np.ndarray, w_tile: np.ndarray, w_row: np.ndarray, w_val: np.ndarray
    ) -> None:
        """A value still short of its row moves down one; new values enter row 0."""
        ch_tile, ch_row, ch_val = self.chain
        moving = (ch_tile[:-1] >= 0) & (ch_row[:-1] > self.row_of[:-1])
        for arr in self.chain:
            arr[1:] = np.where(moving, arr[:-1], arr[1:])
        ch_tile[0, loading], ch_row[0, loading], ch_val[0, loading] = w_tile, w_row, w_val

    def run(self) -> Run:
        for t in range(self.horizon):
            self.entries_check(t)
            loaded = self.load(t)
            has_act = self.stream(t)
            self.operand_check(t, has_act)
            self.products(t, has_act)
            self.shift_chain(*loaded)
        if (self.arrivals != self.folds).any() or (
            self.macs_left != 0
        ).any():  # cannot happen once every check passed
            raise AssertionError("the reference model lost a partial sum")
        buffers, cut = self.buffers, self.cut
        return Run(
            self.out,
            self.last_mac + 1,
            self.stream_reads,
            self.stationary_reads,
            self.psum_writes,
            self.readbacks,
            self.c_writes,
            0 if buffers is None else int(sum(t.words for t in cut)),
            tuple(buffers.ends) if buffers is not None else (0,) * len(cut),
        )


def run_stationary_reference(
    design: SystolicDesign,
    x: np.ndarray,
    w: np.ndarray,
    entries: tuple[Entry, ...],
    cut: tuple[Tile, ...],
    noun: str,
) -> Run:
    return _StationaryRun(design, x, w, entries, cut, noun).run()
