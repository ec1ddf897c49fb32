"""Cycle-by-cycle model of a weight-stationary array running weight tiles back to back.

Every cycle moves three kinds of tokens, each tagged with the tile it belongs to:
  * activations enter row r at the left (skewed: activation i of tile j in cycle S_j + i + r)
    and move one column right per cycle;
  * weights enter each column at the top (skewed: column q in cycles L_j + q .. + k_j - 1,
    bottom row's weight first) and shift down one row per cycle through the shadow registers
    (the active ones when there is no shadow register) until they reach their row;
  * partial sums move one row down per cycle and leave from the tile's last row into the
    accumulator, where a K split's sums are read back and added.
Every cycle it checks that each PE multiplies by its own row's weight of the activation's tile
and that the partial sum arriving from above belongs to the same tile and row of A; any
violation raises `SystolicTimingError` naming the PE and the cycle. Timing conventions and the
tile order are those of `simcore.systolic`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from simcore.systolic.model import (
    Schedule,
    SystolicArray,
    Traffic,
    WeightFetch,
    WeightTile,
    stream_schedule,
    tile_end,
    weight_tiles,
)

EMPTY = -1


class SystolicTimingError(RuntimeError):
    """A schedule is infeasible: some PE would see the wrong weight or partial sum."""


def _fail(row: int, col: int, cycle: int, what: str) -> SystolicTimingError:
    return SystolicTimingError(f"PE ({row}, {col}), cycle {cycle}: {what}")


@dataclass(frozen=True, eq=False)
class SystolicResult:
    """The product, the measured cycle count and the words the model actually moved."""

    array: SystolicArray
    c: np.ndarray
    cycles: int
    loads: tuple[int, ...]
    streams: tuple[int, ...]
    fetch_ends: tuple[int, ...]
    traffic: Traffic
    hbm_words: int

    @property
    def macs(self) -> int:
        return self.traffic.macs

    @property
    def utilisation(self) -> float:
        return self.macs / (self.array.pes * self.cycles)


def _operands(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"A and B must be 2-D, got shapes {a.shape} and {b.shape}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: A is {a.shape}, B is {b.shape}")
    if 0 in a.shape or 0 in b.shape:
        raise ValueError(f"A and B must not be empty, got shapes {a.shape} and {b.shape}")
    return a, b


def _pairs(
    schedule: Schedule | Sequence[tuple[int, int]],
    array: SystolicArray,
    shape: tuple[int, int, int],
    count: int,
) -> tuple[tuple[int, int], ...]:
    if isinstance(schedule, Schedule):
        if (schedule.m, schedule.k, schedule.n) != shape or (
            (schedule.array.rows, schedule.array.cols) != (array.rows, array.cols)
        ):
            raise ValueError("schedule was computed for another shape or array size")
        return schedule.pairs
    entries = [tuple(p) for p in schedule]
    if len(entries) != count:
        raise ValueError(f"schedule has {len(entries)} (load, stream) pairs for {count} tiles")
    pairs: list[tuple[int, int]] = []
    for j, entry in enumerate(entries):
        if len(entry) != 2 or any(isinstance(v, bool) or not isinstance(v, int) for v in entry):
            raise ValueError(f"tile {j}: schedule entry must be two ints, got {entry!r}")
        load, stream = int(entry[0]), int(entry[1])
        if load < 0 or stream < 0:
            raise ValueError(f"tile {j}: load and stream cycles must not be negative, got {entry}")
        pairs.append((load, stream))
    return tuple(pairs)


def _events(
    tiles: Sequence[tuple[int, int, int]], horizon: int, width: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (cycle, lane): how many tokens enter, and the tile and sequence number of one.

    Each entry of `tiles` is (first cycle, lanes, length): lane x gets items s = 0 .. length-1
    in cycles first + x + s. Collisions are kept as counts so the run can fail in step.
    """
    count = np.zeros((horizon, width), dtype=np.int64)
    tile = np.full((horizon, width), EMPTY, dtype=np.int64)
    seq = np.full((horizon, width), EMPTY, dtype=np.int64)
    for j, (first, lanes, length) in enumerate(tiles):
        lane = np.arange(lanes)[:, None]
        s = np.arange(length)[None, :]
        t = first + lane + s
        lane = np.broadcast_to(lane, t.shape)
        s = np.broadcast_to(s, t.shape)
        np.add.at(count, (t, lane), 1)
        tile[t, lane] = j
        seq[t, lane] = s
    return count, tile, seq


class _Buffers:
    """The on-chip weight buffers and the fetch engine that fills them, one tile at a time."""

    def __init__(self, fetch: WeightFetch, tiles: tuple[WeightTile, ...]) -> None:
        self.fetch = fetch
        self.tiles = tiles
        self.owner = [EMPTY] * fetch.buffers
        self.ready = [0] * fetch.buffers
        self.left = [0] * fetch.buffers
        self.free_at = [0] * fetch.buffers
        self.engine_free = 0
        self.next = 0
        self.ends = [0] * len(tiles)

    def step(self, t: int) -> None:
        """Start the next fetch if the engine is idle and its buffer has been shifted out."""
        j = self.next
        if j >= len(self.tiles) or t < self.engine_free:
            return
        slot = j % self.fetch.buffers
        if self.owner[slot] != EMPTY and (self.left[slot] > 0 or self.free_at[slot] > t):
            return
        end = t + self.fetch.cycles(self.tiles[j].words)
        self.owner[slot], self.ready[slot], self.left[slot] = j, end, self.tiles[j].words
        self.engine_free, self.ends[j], self.next = end, end, j + 1

    def read(self, t: int, j: int, col: int, words: int) -> None:
        """The array takes `words` weights of tile j; they must have been fetched in full."""
        slot = j % self.fetch.buffers
        if self.owner[slot] != j or self.ready[slot] > t:
            when = f"its fetch ends in cycle {self.ready[slot]}" if self.owner[slot] == j else (
                "its fetch has not started"
            )
            raise _fail(0, col, t, f"weights of tile {j} are not in the weight buffer ({when})")
        self.left[slot] -= words
        if self.left[slot] == 0:
            self.free_at[slot] = t + 1


def simulate_systolic(
    array: SystolicArray,
    a: np.ndarray,
    b: np.ndarray,
    schedule: Schedule | Sequence[tuple[int, int]] | None = None,
    fetch: WeightFetch | None = None,
) -> SystolicResult:
    """Run C = A B cycle by cycle; `schedule` gives (L_j, S_j) per tile (default: closed form)."""
    a, b = _operands(a, b)
    (m, k), n = a.shape, b.shape[1]
    fetch = fetch if fetch is not None else WeightFetch()
    tiles = weight_tiles(array, k, n)
    if schedule is None:
        schedule = stream_schedule(array, m, k, n, fetch)
    pairs = _pairs(schedule, array, (m, k, n), len(tiles))
    rows, cols = array.rows, array.cols

    t_k = np.array([t.k for t in tiles])
    t_n = np.array([t.n for t in tiles])
    t_k0 = np.array([t.k0 for t in tiles])
    t_n0 = np.array([t.n0 for t in tiles])
    horizon = 1 + max(
        max(tile_end(t, m, s), load + t.n + t.k) for t, (load, s) in zip(tiles, pairs)
    )
    act_count, act_tile_in, act_i_in = _events(
        [(s, t.k, m) for t, (_, s) in zip(tiles, pairs)], horizon, rows
    )
    w_count, w_tile_in, w_step_in = _events(
        [(load, t.n, t.k) for t, (load, _) in zip(tiles, pairs)], horizon, cols
    )
    buffers = None if fetch.on_chip else _Buffers(fetch, tiles)

    dtype = np.result_type(a, b)
    row_of = np.broadcast_to(np.arange(rows)[:, None], (rows, cols))
    col_of = np.broadcast_to(np.arange(cols)[None, :], (rows, cols))

    def empty() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        full = np.full((rows, cols), EMPTY, dtype=np.int64)
        return full, full.copy(), np.zeros((rows, cols), dtype=dtype)

    act_tile, act_i, act_val = empty()  # activation at each PE this cycle
    ps_tile, ps_i, ps_val = empty()  # partial sum arriving from above this cycle
    wa_tile, wa_row, wa_val = empty()  # active weight register: (tile, destination row, value)
    if array.shadow:
        ch_tile, ch_row, ch_val = empty()  # shadow registers form the load shift chain
    else:
        ch_tile, ch_row, ch_val = wa_tile, wa_row, wa_val  # loads shift through active ones

    acc = np.zeros((m, n), dtype=dtype)
    arrivals = np.zeros((m, n), dtype=np.int64)
    k_steps = tiles[0].k_steps
    macs = last_mac = a_reads = b_reads = psum_writes = readbacks = c_writes = 0

    def first(mask: np.ndarray) -> tuple[int, int]:
        r, q = np.argwhere(mask)[0]
        return int(r), int(q)

    for t in range(horizon):
        # Activations: shift one column right, inject at the left edge, drop past the tile.
        if (act_count[t] > 1).any():
            r = int(np.argmax(act_count[t] > 1))
            raise _fail(r, 0, t, "two tiles feed this row in the same cycle")
        for arr, inj in ((act_tile, act_tile_in[t]), (act_i, act_i_in[t])):
            arr[:, 1:] = arr[:, :-1]
            arr[:, 0] = inj
        act_val[:, 1:] = act_val[:, :-1]
        fed = np.flatnonzero(act_tile[:, 0] >= 0)
        act_val[fed, 0] = a[act_i[fed, 0], t_k0[act_tile[fed, 0]] + fed]
        a_reads += fed.size
        live = act_tile >= 0
        past = live & (col_of >= t_n[np.maximum(act_tile, 0)])
        act_tile[past] = EMPTY
        has_act = act_tile >= 0
        safe_tile = np.maximum(act_tile, 0)

        # Weights entering the top of each column this cycle (latched at the end of it).
        if (w_count[t] > 1).any():
            q = int(np.argmax(w_count[t] > 1))
            raise _fail(0, q, t, "two tiles load this column in the same cycle")
        loading = np.flatnonzero(w_count[t] == 1)
        w_in_tile = w_tile_in[t, loading]
        w_in_row = t_k[w_in_tile] - 1 - w_step_in[t, loading]  # bottom row's weight first
        w_in_val = b[t_k0[w_in_tile] + w_in_row, t_n0[w_in_tile] + loading]
        if buffers is not None:
            buffers.step(t)
            for j in np.unique(w_in_tile):
                cols_j = loading[w_in_tile == j]
                buffers.read(t, int(j), int(cols_j[0]), cols_j.size)
        b_reads += loading.size

        # Partial sums must meet the activation of the same tile and row of A.
        orphan = (ps_tile >= 0) & ~has_act
        if orphan.any():
            r, q = first(orphan)
            raise _fail(r, q, t, f"partial sum of tile {ps_tile[r, q]} arrives with no activation")
        astray = has_act & (row_of > 0) & ((ps_tile != act_tile) | (ps_i != act_i))
        if astray.any():
            r, q = first(astray)
            raise _fail(
                r, q, t,
                f"activation {act_i[r, q]} of tile {act_tile[r, q]} meets partial sum "
                f"{ps_i[r, q]} of tile {ps_tile[r, q]} (out of step)",
            )
        # The first activation of a tile swaps the shadow weight in.
        if array.shadow:
            swap = has_act & (wa_tile != act_tile)
            unready = swap & ((ch_tile != act_tile) | (ch_row != row_of))
            if unready.any():
                r, q = first(unready)
                raise _fail(
                    r, q, t,
                    f"weight of tile {act_tile[r, q]} not loaded in time: shadow register "
                    f"holds tile {ch_tile[r, q]}'s weight for row {ch_row[r, q]}",
                )
            wa_tile[swap], wa_row[swap], wa_val[swap] = ch_tile[swap], ch_row[swap], ch_val[swap]
        wrong = has_act & ((wa_tile != act_tile) | (wa_row != row_of))
        if wrong.any():
            r, q = first(wrong)
            raise _fail(
                r, q, t,
                f"multiplies activation of tile {act_tile[r, q]} by tile {wa_tile[r, q]}'s "
                f"weight for row {wa_row[r, q]}",
            )

        # Multiply-accumulate; sums from a tile's last row leave for the accumulator.
        out = np.where(has_act, np.where(ps_tile >= 0, ps_val, 0) + act_val * wa_val, 0)
        n_macs = int(np.count_nonzero(has_act))
        if n_macs:
            macs += n_macs
            last_mac = t
        leaves = has_act & (row_of == t_k[safe_tile] - 1)
        if leaves.any():
            lr, lq = np.nonzero(leaves)
            oi, on = act_i[lr, lq], t_n0[act_tile[lr, lq]] + lq
            np.add.at(acc, (oi, on), out[lr, lq])
            # The accumulator adds in any order: the first sum of a result is written, every
            # later one is read back, added and written; the last write is the C write.
            cell, hits = np.unique(oi * n + on, return_counts=True)
            before = arrivals.flat[cell]
            arrivals.flat[cell] = before + hits
            finals = int(np.count_nonzero(before + hits == k_steps))
            readbacks += int(oi.size - np.count_nonzero(before == 0))
            c_writes += finals
            psum_writes += int(oi.size) - finals
        stays = has_act & ~leaves
        ps_tile[1:], ps_i[1:], ps_val[1:] = (
            np.where(stays[:-1], act_tile[:-1], EMPTY),
            np.where(stays[:-1], act_i[:-1], EMPTY),
            np.where(stays[:-1], out[:-1], 0),
        )
        ps_tile[0], ps_i[0], ps_val[0] = EMPTY, EMPTY, 0

        # Load chain: a weight still short of its row moves down one; new weights enter row 0.
        moving = (ch_tile[:-1] >= 0) & (ch_row[:-1] > row_of[:-1])
        for arr in (ch_tile, ch_row, ch_val):
            arr[1:] = np.where(moving, arr[:-1], arr[1:])
        ch_tile[0, loading], ch_row[0, loading], ch_val[0, loading] = w_in_tile, w_in_row, w_in_val

    if (arrivals != k_steps).any():  # cannot happen when every check above passed
        raise SystolicTimingError("some results never left the array")
    traffic = Traffic(
        dataflow="ws",
        macs=macs,
        a_reads=a_reads,
        b_reads=b_reads,
        psum_writes=psum_writes,
        psum_readbacks=readbacks,
        c_writes=c_writes,
    )
    return SystolicResult(
        array=array,
        c=acc,
        cycles=last_mac + 1,
        loads=tuple(p[0] for p in pairs),
        streams=tuple(p[1] for p in pairs),
        fetch_ends=tuple(buffers.ends) if buffers is not None else (0,) * len(tiles),
        traffic=traffic,
        hbm_words=0 if fetch.on_chip else k * n,
    )
