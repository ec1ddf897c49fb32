"""The fast engine: the reference engine's timing rule (see `reference`) as a state recurrence
over the steps, with runs of identical steps, and of identical loop passes, jumped.

After each step the state is the time the link is free, for each operand the time its tile's
slot is free and the end of its previous tile, the latest event, and the array's tile-stream
state (`stream`: its last element is the end of the step). A step's kind fixes everything else
about it (which tiles change, which blocks come in, what is drained, the block's tiles), and a
kind follows from where the step and its predecessor lie in each loop (first, inside, last).
The block's operands gate its first tile (the gates hold for its later tiles), and its tiles
run in nested runs of one kind, jumped as the array's closed form jumps them.
The recurrence uses only max and + on the state, so it commutes with a shift of time: if a pass
of identical units leaves the state equal to the state p units before, shifted by d, every
further p units shift it by d again. Each loop level is cut into runs of units of one kind (the
first, the second, the inside ones, the last); inside a run the engine looks for that recurrence
after every unit and jumps whole periods, and simulates the rest. A state that never recurs is
simply stepped through: the result is exact either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import (
    INDEXED_BY,
    SINGLE,
    Batch,
    BlockSchedule,
    check_design,
    transfer,
)
from simcore.systolic.blocked.stream import (
    ArrayState,
    BlockTiles,
    block_tiles,
    gate,
    initial_state,
    run_tiles,
    stream_params,
)
from simcore.systolic.closed_form import NEG
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign

# link free, (slot free for the tile in use, end of the previous tile) of a, b and c, the latest
# event, then the array's tile-stream state (its last element: the end of the last step)
State = tuple[float, ...]
MEMORY = 8  # the memory part's length
# new tile of a, its load (-1: none), the same of b, new tile of c, its drain, the read-back,
# a fresh C block that waits only for its slot, the block's tiles
Kind = tuple[bool, int, bool, int, bool, int, int, bool, BlockTiles]
Index = tuple[int, int, int, int]  # (i, k, j, the lanes' round)
PERIODS = 4  # periods looked for: 1 .. PERIODS units


@dataclass(frozen=True)
class FastRun:
    cycles: int
    compute_cycles: int  # the same tile stream with every DRAM transfer instant
    steps_simulated: int
    jumps: int


class _Engine:
    def __init__(
        self,
        machine: SystolicMachine,
        design: SystolicDesign,
        s: BlockSchedule,
        shape: Shape,
        dram: bool = True,
        batch: Batch = SINGLE,
    ) -> None:
        self.machine, self.design, self.s, self.shape = machine, design, s, shape
        self.lanes = batch.lanes
        self.lane_machine = machine.port_share(batch.lanes)  # the store ports a lane's array has
        self.width = MEMORY + len(initial_state(design))  # one lane's state
        self.dram = dram
        self.p = stream_params(design)
        self.held = {"ws": 1, "is": 0, "os": -1}[design.dataflow]  # a, b: which is fetched
        self.grid = dict(zip("mkn", s.grid(shape)))
        self.sizes = {"m": (s.bm, shape.m), "k": (s.bk, shape.k), "n": (s.bn, shape.n)}
        self.counts = [batch.rounds] + [self.grid[d] for d in s.order]
        self.single = tuple(b == 1 for b in s.buffering)
        self.latency = machine.memory.dram.latency
        self.kinds: dict[tuple[Any, ...], Kind] = {}
        self.simulated = 0
        self.jumps = 0

    # --- kinds --------------------------------------------------------------------------
    def extent(self, dim: str, index: int) -> int:
        block, size = self.sizes[dim]
        return min(block, size - index * block)

    def kind(self, prev: Index | None, cur: Index) -> Kind:
        g = (self.grid["m"], self.grid["k"], self.grid["n"])
        last = tuple(cur[d] == g[d] - 1 for d in range(3))
        first = tuple(cur[d] == 0 for d in range(3))
        if prev is None:
            key: tuple[Any, ...] = (None, last, first)
        else:
            p_last = tuple(prev[d] == g[d] - 1 for d in range(3))
            diff = tuple(prev[d] != cur[d] for d in range(4))
            key = (diff, last, first, p_last)
        found = self.kinds.get(key)
        if found is None:
            found = self.kinds[key] = self._make_kind(prev, cur)
        return found

    def _occupancy(self, what: str, elements: int) -> int:
        words, rate = transfer(self.machine, what, elements)
        return self.machine.memory.dram.occupancy(words, rate)

    def _changes(self, operand: str, prev: Index | None, cur: Index) -> tuple[bool, bool]:
        """(the operand's tile changes, its block comes in) between prev and cur."""
        dims = INDEXED_BY[operand]
        where = {"m": 0, "k": 1, "n": 2}
        if prev is None or prev[3] != cur[3]:  # a new run starts every tile afresh
            return True, True
        moved = {d for d in "mkn" if prev[where[d]] != cur[where[d]]}
        span = self.s.span["abc".index(operand)]
        new_tile = any(d in moved and self.s.level(d) < span for d in dims)
        if not (moved & set(dims)):
            return new_tile, False
        # a block already came in unless this is the tile's first sweep: every loop between the
        # innermost one that moves the tile and the innermost one over the operand that does not
        # index the operand is at its first block
        varying = [self.s.level(d) for d in dims if self.grid[d] > 1]
        outer = max((lv for lv in varying if lv < span), default=-1)
        inner = max(varying, default=-1)
        sweep = all(
            cur[where[d]] == 0 for d in "mkn" if d not in dims and outer < self.s.level(d) < inner
        )
        return new_tile, sweep

    def drain_occupancy(self, prev: Index) -> int:
        """Cycles on the link to drain every block of C's tile in use at step `prev`."""
        final = prev[1] == self.grid["k"] - 1
        span = self.s.span[2]
        sides = []
        for d, index in (("m", prev[0]), ("n", prev[2])):
            if self.s.level(d) < span:
                sides.append([self.extent(d, index)])
            else:
                sides.append([self.extent(d, x) for x in range(self.grid[d])])
        what = "c-final" if final else "c-partial"
        return sum(self._occupancy(what, em * en) for em in sides[0] for en in sides[1])

    def _make_kind(self, prev: Index | None, cur: Index) -> Kind:
        i, k, j, _run = cur
        bm, bk, bn = self.extent("m", i), self.extent("k", k), self.extent("n", j)
        tile_a, load_a = self._changes("a", prev, cur)
        tile_b, load_b = self._changes("b", prev, cur)
        tile_c, enter_c = self._changes("c", prev, cur)
        drain = -1
        if tile_c and prev is not None:
            drain = self.drain_occupancy(prev)
        back = self._occupancy("c-back", bm * bn) if enter_c and k > 0 else -1
        return (
            tile_a,
            self._occupancy("a", bm * bk) if load_a else -1,
            tile_b,
            self._occupancy("b", bk * bn) if load_b else -1,
            tile_c,
            drain,
            back,
            enter_c and k == 0,
            block_tiles(self.lane_machine, self.design, bm, bk, bn),
        )

    # --- the recurrence -----------------------------------------------------------------
    def step(self, st: State, kind: Kind) -> State:
        if not self.dram:
            arr = self.tiles(st[MEMORY:], kind[8])
            return (arr[-1],) * MEMORY + arr
        lf, af, ap, bf, bp, cf, cp, fin = st[:MEMORY]
        arr = st[MEMORY:]
        ce = arr[-1]  # the previous step is finished
        tile_a, occ_a, tile_b, occ_b, tile_c, occ_d, occ_back, fresh_c, runs = kind
        single_a, single_b, single_c = self.single
        lat = self.latency
        ready = [NEG, NEG, NEG]  # a, b, c in place
        if tile_a:
            af, ap = (ce, ce) if single_a else (ap, ce)
        if occ_a >= 0:
            lf = max(lf, af) + occ_a
            ready[0] = lf + lat
        if tile_b:
            bf, bp = (ce, ce) if single_b else (bp, ce)
        if occ_b >= 0:
            lf = max(lf, bf) + occ_b
            ready[1] = lf + lat
        if tile_c and occ_d >= 0:
            lf = max(lf, ce) + occ_d
            fin = max(fin, lf + lat)
            cf, cp = (lf, lf) if single_c else (cp, lf)
        if occ_back >= 0:
            lf = max(lf, cf) + occ_back
            ready[2] = lf + lat
        elif fresh_c:
            ready[2] = cf
        fetch = ready[self.held] if self.held >= 0 else NEG
        streamed = max(r for n, r in enumerate(ready) if n != self.held)
        arr = self.tiles(gate(arr, fetch, streamed, self.p), runs)
        ce = arr[-1]
        # values are raised to what every later use sees anyway (exact), or pinned where never
        # read again, so that a repeating state is seen: a C slot's free time is read by the
        # link (never before lf) and by a later stream (never before this stream window's end)
        floor = min(lf, arr[1])
        af, bf, cf = max(af, lf), max(bf, lf), max(cf, floor)
        ap = ce if single_a else max(ap, lf)
        bp = ce if single_b else max(bp, lf)
        cp = ce if single_c else max(cp, floor)
        return (lf, af, ap, bf, bp, cf, cp, max(fin, ce)) + arr

    def step_lanes(self, st: State, kind: Kind) -> State:
        """One step on every lane in turn, sharing the link (each lane's state keeps the link's
        free time; it is the same in all of them between steps)."""
        if self.lanes == 1:
            return self.step(st, kind)
        w = self.width
        lf = st[0]
        out: list[State] = []
        for lane in range(self.lanes):
            sub = self.step((lf,) + st[lane * w + 1 : (lane + 1) * w], kind)
            lf = sub[0]
            out.append(sub)
        return tuple(v for sub in out for v in (lf,) + sub[1:])

    def tiles(self, arr: ArrayState, runs: BlockTiles) -> ArrayState:
        return run_tiles(arr, runs, self.p)

    # --- the loop levels ----------------------------------------------------------------
    def index(self, levels: list[int]) -> Index:
        where = dict(zip("r" + self.s.order, levels))
        return (where["m"], where["k"], where["n"], where["r"])

    def last_of_unit(self, prefix: list[int]) -> Index:
        tail = [c - 1 for c in self.counts[len(prefix) :]]
        return self.index(prefix + tail)

    def walk(
        self, level: int, prefix: list[int], st: State, prev: Index | None
    ) -> tuple[State, Index | None]:
        n = self.counts[level]
        for lo, hi in _segments(n):
            st, prev = self.run(level, prefix, lo, hi, st, prev)
        return st, prev

    def unit(
        self, level: int, prefix: list[int], x: int, st: State, prev: Index | None
    ) -> tuple[State, Index | None]:
        if level == len(self.counts) - 1:
            cur = self.index(prefix + [x])
            self.simulated += 1
            return self.step_lanes(st, self.kind(prev, cur)), cur
        return self.walk(level + 1, prefix + [x], st, prev)

    def run(
        self, level: int, prefix: list[int], lo: int, hi: int, st: State, prev: Index | None
    ) -> tuple[State, Index | None]:
        """Units lo..hi of one kind at `level`, jumping whole periods once the state recurs."""
        history = [st]
        x = lo
        while x <= hi:
            st, prev = self.unit(level, prefix, x, st, prev)
            history.append(st)
            x += 1
            if hi - x + 1 <= 0:
                break
            period = _period(history)
            if period:
                p, d = period
                q = (hi - x + 1) // p
                if q:
                    st = _shift(st, q * d)
                    x += q * p
                    prev = self.last_of_unit(prefix + [x - 1])
                    self.jumps += 1
                    history = [st]
        return st, prev

    def total(self) -> int:
        start = ((0,) * MEMORY + initial_state(self.design)) * self.lanes
        st, prev = self.walk(0, [], start, None)
        assert prev is not None
        w = self.width
        lanes = [st[lane * w : (lane + 1) * w] for lane in range(self.lanes)]
        if not self.dram:
            return int(max(sub[-1] for sub in lanes))
        lf, end = st[0], 0.0
        for sub in lanes:  # each lane drains its last C tile, in lane order
            lf = max(lf, sub[-1]) + self.drain_occupancy(prev)
            end = max(end, sub[MEMORY - 1], lf + self.latency)
        return int(end)


def _segments(n: int) -> list[tuple[int, int]]:
    """Units of one kind: the first, the second, the inside ones, the last."""
    if n <= 3:
        return [(x, x) for x in range(n)]
    return [(0, 0), (1, 1), (2, n - 2), (n - 1, n - 1)]


def _normal(st: State, ref: int = MEMORY - 1) -> tuple[float, ...]:
    """The state seen from one of its times (the latest event, or a tile's stream start)."""
    return tuple(v - st[ref] for v in st)


def _shift(st: State, d: float) -> State:
    return tuple(v + d for v in st)  # -inf stays -inf


def _period(history: list[State]) -> tuple[int, int] | None:
    """(p, d): the last state is the state p units earlier shifted by d."""
    last = history[-1]
    norm = _normal(last)
    ref = MEMORY - 1
    for p in range(1, min(PERIODS, len(history) - 1) + 1):
        before = history[-1 - p]
        if _normal(before) == norm:
            return p, int(last[ref] - before[ref])
    return None


def run_fast(
    machine: SystolicMachine,
    design: SystolicDesign,
    schedule: BlockSchedule,
    shape: Shape,
    batch: Batch = SINGLE,
) -> FastRun:
    """The run's cycles by the recurrence with jumps (equal to `reference.run_reference`)."""
    check_design(machine, design, batch.lanes)
    clipped = schedule.clipped(shape)
    engine = _Engine(machine, design, clipped, shape, batch=batch)
    cycles = engine.total()
    ideal = _Engine(machine, design, clipped, shape, dram=False, batch=batch).total()
    return FastRun(cycles, ideal, engine.simulated, engine.jumps)
