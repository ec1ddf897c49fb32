"""Reference cycle model of an output-stationary array (os), stepped cycle by cycle.

PE (r, q) of the mapped r x c sub-array accumulates C[m0 + r, n0 + q] of its tile. Every cycle:
  * A values enter row r at the left (A[m0 + r, k] in cycle a_j + r + k) and move one column
    right per cycle; B values enter column q at the top (B[k, n0 + q] in cycle b_j + q + k) and
    move one row down per cycle; both leave past the tile;
  * a PE holding an A and a B value multiplies them; they must be the same tile's same product
    k. Product 0 needs an empty accumulator. After product K - 1 the result is complete: with
    the drain charged and shadow registers, it moves into the PE's empty shadow register; with
    the drain not charged, it leaves the array at once (into an output buffer over HBM);
  * with the drain charged, column q of tile j shifts its results down and out from the tile's
    last row in cycles d_j + q .. d_j + q + mt - 1 (the shadow registers when present, else the
    accumulators), bottom row first; the drain moves before the products of the same cycle;
  * over HBM, each tile's results go to one of `buffers` output buffers, written back one tile
    at a time in tile order once all its results are in; a buffer is free again after that.
Padding streams zeros into padded rows and columns and drops their results. Checks within a
cycle: two tiles entering one row, one column or draining one column; folds in sequence; an
output buffer still in use; a drain reaching an unfinished result; A and B out of step; an
accumulator or shadow register still holding a result. Each raises SystolicTimingError.
"""

from __future__ import annotations

import numpy as np

from simcore.systolic.closed_form import Entry
from simcore.systolic.common import Run, SystolicTimingError, tile_arrays
from simcore.systolic.model import SystolicDesign, Tile
from simcore.systolic.reference_stationary import EMPTY, lane_events


class OutputBuffers:
    """Output buffers and the write-back engine that empties them, one tile at a time."""

    def __init__(self, design: SystolicDesign, cut: tuple[Tile, ...]) -> None:
        self.hbm, self.cut = design.hbm, cut
        self.owner = [EMPTY] * self.hbm.buffers
        self.free_at: list[int | None] = [0] * self.hbm.buffers
        self.got = [0] * len(cut)
        self.engine_free, self.next, self.ends = 0, 0, [0] * len(cut)

    def step(self, t: int) -> None:
        """Start the next write-back once the engine is idle and the tile's results are all in."""
        j = self.next
        if j < len(self.cut) and t >= self.engine_free and self.got[j] == self.cut[j].words:
            end = t + self.hbm.cycles(self.cut[j].words)
            self.engine_free, self.ends[j], self.next = end, end, j + 1
            self.free_at[j % self.hbm.buffers] = end

    def claim(self, t: int, j: int, pe: tuple[int, int]) -> None:
        """Tile j's result at `pe` needs its buffer: free, or already tile j's."""
        slot = j % self.hbm.buffers
        owner, free = self.owner[slot], self.free_at[slot]
        if owner not in (EMPTY, j):
            if free is None or free > t:
                when = (
                    "its write-back has not started"
                    if free is None
                    else f"its write-back ends in cycle {free}"
                )
                raise SystolicTimingError(
                    pe,
                    t,
                    "buffer",
                    f"the output buffer of tile {j} still holds tile {owner}'s results ({when})",
                )
        if owner != j:
            self.owner[slot], self.free_at[slot] = j, None

    @property
    def pending(self) -> bool:
        return self.next < len(self.cut)


class _Grid:
    """The registers of the sub-array: A and B in flight, accumulators, shadow registers."""

    def __init__(self, rows: int, cols: int, dtype: np.dtype, shadow: bool) -> None:
        def ints() -> np.ndarray:
            return np.full((rows, cols), EMPTY, dtype=np.int64)

        self.row_of = np.broadcast_to(np.arange(rows)[:, None], (rows, cols))
        self.col_of = np.broadcast_to(np.arange(cols)[None, :], (rows, cols))
        self.a_tile, self.a_k, self.a_val = ints(), ints(), np.zeros((rows, cols), dtype=dtype)
        self.b_tile, self.b_k, self.b_val = ints(), ints(), np.zeros((rows, cols), dtype=dtype)
        # A register holds (tile, products done, row of the result in its tile, value).
        self.acc = [
            ints(),
            np.zeros((rows, cols), dtype=np.int64),
            self.row_of.copy(),
            np.zeros((rows, cols), dtype=dtype),
        ]
        self.shadow = (
            [
                ints(),
                np.zeros((rows, cols), dtype=np.int64),
                self.row_of.copy(),
                np.zeros((rows, cols), dtype=dtype),
            ]
            if shadow
            else None
        )


class _OutputRun:
    """One os run, stepped cycle by cycle."""

    def __init__(
        self,
        design: SystolicDesign,
        a: np.ndarray,
        b: np.ndarray,
        entries: tuple[Entry, ...],
        cut: tuple[Tile, ...],
    ) -> None:
        self.design, self.a, self.b, self.cut = design, a, b, cut
        self.assume = design.assumptions
        self.big_k = a.shape[1]
        ta = tile_arrays(cut)
        self.mt, self.nt, self.mr, self.nr, self.m0, self.n0 = (
            ta[f] for f in ("span_rows", "span_cols", "rows", "cols", "row0", "col0")
        )
        rows, cols = design.used.rows, design.used.cols
        k, mt, nt = self.big_k, self.mt, self.nt
        a_start, b_start = [e[0] for e in entries], [e[1] for e in entries]
        self.drains = [e[2] for e in entries] if self.assume.drain else None
        last = [
            max(x, y) + k + int(mt[j]) + int(nt[j])
            for j, (x, y) in enumerate(zip(a_start, b_start))
        ]
        if self.drains is not None:
            last = [
                max(v, d + int(nt[j]) + int(mt[j]))
                for j, (v, d) in enumerate(zip(last, self.drains))
            ]
        self.horizon = 1 + max(last)
        self.a_in = lane_events(
            [(s, int(mt[j]), k) for j, s in enumerate(a_start)], self.horizon, rows
        )
        self.b_in = lane_events(
            [(s, int(nt[j]), k) for j, s in enumerate(b_start)], self.horizon, cols
        )
        if self.drains is not None:
            self.d_in = lane_events(
                [(d, int(nt[j]), int(mt[j])) for j, d in enumerate(self.drains)], self.horizon, cols
            )
        self.out_buf = None if design.hbm.on_chip else OutputBuffers(design, cut)
        self.starts: dict[int, list[int]] = {}
        for j, (x, y) in enumerate(zip(a_start, b_start)):
            self.starts.setdefault(min(x, y), []).append(j)
        drain_work = mt * nt if self.assume.drain and not self.assume.shadow else 0
        self.work_left = (k * mt * nt + drain_work).astype(np.int64)  # for folds in sequence
        self.dtype = np.result_type(a, b)
        self.g = _Grid(rows, cols, self.dtype, self.assume.shadow and self.assume.drain)
        self.c = np.zeros((a.shape[0], b.shape[1]), dtype=self.dtype)
        self.a_reads = self.b_reads = self.c_writes = 0
        self.last_event = -1

    def emit(self, t: int, j: int, row: int, col: int, value: object, pe: tuple[int, int]) -> None:
        """A result of tile j leaves the array (padded rows and columns are dropped)."""
        if row >= self.mr[j] or col >= self.nr[j]:
            return
        if self.out_buf is not None:
            self.out_buf.claim(t, j, pe)
            self.out_buf.got[j] += 1
        self.c[self.m0[j] + row, self.n0[j] + col] = value
        self.c_writes += 1

    def entries_check(self, t: int) -> None:
        for (count, _, _), name, at in (
            (self.a_in, "row", lambda x: (x, 0)),
            (self.b_in, "column", lambda x: (0, x)),
        ):
            if (count[t] > 1).any():
                lane = int(np.argmax(count[t] > 1))
                raise SystolicTimingError(
                    at(lane), t, "collision", f"two tiles feed {name} {lane} in the same cycle"
                )
        if self.assume.in_sequence:
            for j in self.starts.get(t, []):
                busy = np.flatnonzero(self.work_left[:j] > 0)
                if busy.size:
                    raise SystolicTimingError(
                        (0, 0),
                        t,
                        "barrier",
                        f"tile {j} enters before tile {busy[0]} has finished (folds in sequence)",
                    )

    def drain(self, t: int) -> None:
        count, tile_in, step_in = self.d_in
        chain = self.g.shadow if self.g.shadow is not None else self.g.acc
        if (count[t] > 1).any():
            q = int(np.argmax(count[t] > 1))
            j = int(tile_in[t, q])
            raise SystolicTimingError(
                (int(self.mt[j]) - 1, q),
                t,
                "collision",
                f"two tiles drain column {q} in the same cycle",
            )
        moving = np.flatnonzero(count[t] == 1)
        for q in moving.tolist():  # the output buffer must take the result leaving the bottom row
            j, s = int(tile_in[t, q]), int(step_in[t, q])
            bottom = int(self.mt[j]) - 1
            if self.out_buf is not None and bottom - s < self.mr[j] and q < self.nr[j]:
                self.out_buf.claim(t, j, (bottom, int(q)))
        for q in moving.tolist():
            j, s = int(tile_in[t, q]), int(step_in[t, q])
            if s:
                continue
            span = int(self.mt[j])
            good = (
                (chain[0][:span, q] == j)
                & (chain[1][:span, q] == self.big_k)
                & (chain[2][:span, q] == np.arange(span))
            )
            if not good.all():
                r = int(np.argmin(good))
                raise SystolicTimingError(
                    (r, int(q)),
                    t,
                    "drain",
                    f"the drain of tile {j} reaches the unfinished result of row {r}",
                )
        for q in moving.tolist():
            j, s = int(tile_in[t, q]), int(step_in[t, q])
            bottom = int(self.mt[j]) - 1
            self.emit(t, j, int(chain[2][bottom, q]), int(q), chain[3][bottom, q], (bottom, int(q)))
            for arr in chain:
                arr[s + 1 : bottom + 1, q] = arr[s:bottom, q]
            chain[0][s, q] = EMPTY
            if self.g.shadow is None:
                self.work_left[j] -= 1
        if moving.size:
            self.last_event = t

    def stream(self, t: int) -> None:
        g = self.g
        for arr, inj in ((g.a_tile, self.a_in[1][t]), (g.a_k, self.a_in[2][t])):
            arr[:, 1:] = arr[:, :-1]
            arr[:, 0] = inj
        g.a_val[:, 1:] = g.a_val[:, :-1]
        fed = np.flatnonzero(g.a_tile[:, 0] >= 0)
        real = fed[fed < self.mr[g.a_tile[fed, 0]]]
        g.a_val[fed, 0] = 0
        g.a_val[real, 0] = self.a[self.m0[g.a_tile[real, 0]] + real, g.a_k[real, 0]]
        self.a_reads += real.size
        g.a_tile[(g.a_tile >= 0) & (g.col_of >= self.nt[np.maximum(g.a_tile, 0)])] = EMPTY
        for arr, inj in ((g.b_tile, self.b_in[1][t]), (g.b_k, self.b_in[2][t])):
            arr[1:, :] = arr[:-1, :]
            arr[0, :] = inj
        g.b_val[1:, :] = g.b_val[:-1, :]
        fed = np.flatnonzero(g.b_tile[0, :] >= 0)
        real = fed[fed < self.nr[g.b_tile[0, fed]]]
        g.b_val[0, fed] = 0
        g.b_val[0, real] = self.b[g.b_k[0, real], self.n0[g.b_tile[0, real]] + real]
        self.b_reads += real.size
        g.b_tile[(g.b_tile >= 0) & (g.row_of >= self.mt[np.maximum(g.b_tile, 0)])] = EMPTY

    def products(self, t: int) -> None:
        g, k = self.g, self.big_k
        has_a, has_b = g.a_tile >= 0, g.b_tile >= 0
        odd = (has_a != has_b) | (has_a & ((g.a_tile != g.b_tile) | (g.a_k != g.b_k)))
        if odd.any():
            r, q = (int(v) for v in np.argwhere(odd)[0])
            if has_a[r, q]:
                what = f"A of tile {g.a_tile[r, q]} (product {g.a_k[r, q]}) meets " + (
                    f"B of tile {g.b_tile[r, q]} (product {g.b_k[r, q]})" if has_b[r, q] else "no B"
                )
            else:
                what = f"B of tile {g.b_tile[r, q]} (product {g.b_k[r, q]}) meets no A"
            raise SystolicTimingError(
                (r, q), t, "step", what + ": the A and B streams are out of step"
            )
        acc_tile, acc_cnt, acc_row, acc_val = g.acc
        opening = has_a & (g.a_k == 0)
        busy = opening & (acc_tile != EMPTY)
        if busy.any():
            r, q = (int(v) for v in np.argwhere(busy)[0])
            raise SystolicTimingError(
                (r, q),
                t,
                "accumulator",
                f"the accumulator still holds tile {acc_tile[r, q]}'s "
                "result when tile {0}'s first product arrives".format(g.a_tile[r, q]),
            )
        closing = has_a & (g.a_k == k - 1)
        if g.shadow is not None:
            full = closing & (g.shadow[0] != EMPTY)
            if full.any():
                r, q = (int(v) for v in np.argwhere(full)[0])
                raise SystolicTimingError(
                    (r, q),
                    t,
                    "accumulator",
                    f"the shadow register still holds tile "
                    f"{g.shadow[0][r, q]}'s result when tile {g.a_tile[r, q]}'s result is complete",
                )
        if not has_a.any():
            return
        self.last_event = t
        acc_tile[opening], acc_cnt[opening], acc_row[opening], acc_val[opening] = (
            g.a_tile[opening],
            0,
            g.row_of[opening],
            0,
        )
        acc_val[has_a] += g.a_val[has_a] * g.b_val[has_a]
        acc_cnt[has_a] += 1
        np.add.at(self.work_left, g.a_tile[has_a], -1)
        if not closing.any():
            return
        if g.shadow is not None:
            for src, dst in zip(g.acc, g.shadow):
                dst[closing] = src[closing]
            acc_tile[closing] = EMPTY
        elif not self.assume.drain:
            for r, q in np.argwhere(closing):
                self.emit(t, int(acc_tile[r, q]), int(r), int(q), acc_val[r, q], (int(r), int(q)))
            acc_tile[closing] = EMPTY

    def run(self) -> Run:
        t = 0
        while t < self.horizon or (self.out_buf is not None and self.out_buf.pending):
            if self.out_buf is not None:
                self.out_buf.step(t)
            if t < self.horizon:
                self.entries_check(t)
                if self.drains is not None:
                    self.drain(t)
                self.stream(t)
                self.products(t)
            t += 1
        if self.out_buf is not None:
            self.last_event = max(self.last_event, max(self.out_buf.ends) - 1)
        if (self.work_left != 0).any() or self.c_writes != sum(tile.words for tile in self.cut):
            raise AssertionError(
                "the reference model lost a result"
            )  # cannot happen once every check passed
        words = self.c_writes
        ends = tuple(self.out_buf.ends) if self.out_buf is not None else (0,) * len(self.cut)
        return Run(
            self.c,
            self.last_event + 1,
            self.a_reads,
            self.b_reads,
            0,
            0,
            self.c_writes,
            0 if self.out_buf is None else words,
            ends,
        )


def run_output_reference(
    design: SystolicDesign,
    a: np.ndarray,
    b: np.ndarray,
    entries: tuple[Entry, ...],
    cut: tuple[Tile, ...],
) -> Run:
    return _OutputRun(design, a, b, entries, cut).run()
