"""The fast engine: the reference engine's timing rule (see `reference`) as a state recurrence
over the steps, with runs of identical steps, and of identical loop passes, jumped.

After each step the state is (end of the step, link free, last use of the previous A block, of
the previous B block, drain end of the previous C block, latest event). A step's kind fixes
everything else about it (which blocks come in, what is drained, the block's time), and a kind
follows from where the step and its predecessor lie in each loop (first, inside, last). The
recurrence uses only max and + on the state, so it commutes with a shift of time: if a pass of
identical units leaves the state equal to the state p units before, shifted by d, every further
p units shift it by d again. Each loop level is cut into runs of units of one kind (the first,
the second, the inside ones, the last); inside a run the engine looks for that recurrence after
every unit and jumps whole periods, and simulates the rest. A state that never recurs is simply
stepped through: the result is exact either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import BlockSchedule, block_cycles, check_design, transfer
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign

State = tuple[int, int, int, int, int, int]  # step end, link free, a prev, b prev, c prev, latest
Kind = tuple[
    int, int, int, int, bool, int
]  # load a, load b, drain, read-back (-1: none), new c, block time
Index = tuple[int, int, int]  # (i, k, j)
PERIODS = 4  # periods looked for: 1 .. PERIODS units


@dataclass(frozen=True)
class FastRun:
    cycles: int
    steps_simulated: int
    jumps: int


class _Engine:
    def __init__(
        self, machine: SystolicMachine, design: SystolicDesign, s: BlockSchedule, shape: Shape
    ) -> None:
        self.machine, self.design, self.s, self.shape = machine, design, s, shape
        self.grid = dict(zip("mkn", s.grid(shape)))
        self.sizes = {"m": (s.bm, shape.m), "k": (s.bk, shape.k), "n": (s.bn, shape.n)}
        self.counts = [self.grid[d] for d in s.order]
        self.single = tuple(b == 1 for b in s.buffering)
        self.latency = machine.memory.dram.latency
        self.kinds: dict[tuple, Kind] = {}
        self.simulated = 0
        self.jumps = 0

    # --- kinds --------------------------------------------------------------------------
    def extent(self, dim: str, index: int) -> int:
        block, size = self.sizes[dim]
        return min(block, size - index * block)

    def kind(self, prev: Index | None, cur: Index) -> Kind:
        g = self.grid
        last = (cur[0] == g["m"] - 1, cur[1] == g["k"] - 1, cur[2] == g["n"] - 1)
        if prev is None:
            key: tuple = (None, last, cur[1] == 0)
        else:
            p_last = (prev[0] == g["m"] - 1, prev[1] == g["k"] - 1, prev[2] == g["n"] - 1)
            diff = (prev[0] != cur[0], prev[1] != cur[1], prev[2] != cur[2])
            key = (diff, last, cur[1] == 0, p_last)
        found = self.kinds.get(key)
        if found is None:
            found = self.kinds[key] = self._make_kind(prev, cur)
        return found

    def _occupancy(self, what: str, elements: int) -> int:
        words, rate = transfer(self.machine, what, elements)
        return self.machine.memory.dram.occupancy(words, rate)

    def _make_kind(self, prev: Index | None, cur: Index) -> Kind:
        i, k, j = cur
        bm, bk, bn = self.extent("m", i), self.extent("k", k), self.extent("n", j)
        new_a = prev is None or (prev[0], prev[1]) != (i, k)
        new_b = prev is None or (prev[1], prev[2]) != (k, j)
        new_c = prev is None or (prev[0], prev[2]) != (i, j)
        drain = back = -1
        if new_c and prev is not None:
            final = prev[1] == self.grid["k"] - 1
            elements = self.extent("m", prev[0]) * self.extent("n", prev[2])
            drain = self._occupancy("c-final" if final else "c-partial", elements)
        if new_c and k > 0:
            back = self._occupancy("c-back", bm * bn)
        return (
            self._occupancy("a", bm * bk) if new_a else -1,
            self._occupancy("b", bk * bn) if new_b else -1,
            drain,
            back,
            new_c,
            block_cycles(self.machine, self.design, bm, bk, bn),
        )

    # --- the recurrence -----------------------------------------------------------------
    def step(self, st: State, kind: Kind) -> State:
        ce, lf, ap, bp, cp, fin = st
        occ_a, occ_b, occ_d, occ_back, new_c, time = kind
        single_a, single_b, single_c = self.single
        lat = self.latency
        ready = ce
        if occ_a >= 0:
            lf = max(lf, ce if single_a else ap) + occ_a
            ready = max(ready, lf + lat)
            ap = ce
        if occ_b >= 0:
            lf = max(lf, ce if single_b else bp) + occ_b
            ready = max(ready, lf + lat)
            bp = ce
        if new_c:
            free = cp
            if occ_d >= 0:
                lf = max(lf, ce) + occ_d
                fin = max(fin, lf + lat)
                free, cp = (lf, lf) if single_c else (cp, lf)
            if occ_back >= 0:
                lf = max(lf, free) + occ_back
                ready = max(ready, lf + lat)
            else:
                ready = max(ready, free)
        ce = ready + time
        # values the rule never reads again are pinned, so that a repeating state is seen
        if single_a:
            ap = ce
        if single_b:
            bp = ce
        if single_c:
            cp = ce
        lf = max(lf, min(ce, ap, bp, cp))
        return (ce, lf, ap, bp, cp, max(fin, ce))

    # --- the loop levels ----------------------------------------------------------------
    def index(self, levels: list[int]) -> Index:
        where = dict(zip(self.s.order, levels))
        return (where["m"], where["k"], where["n"])

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
        if level == 2:
            cur = self.index(prefix + [x])
            self.simulated += 1
            return self.step(st, self.kind(prev, cur)), cur
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
        st, prev = self.walk(0, [], (0, 0, 0, 0, 0, 0), None)
        assert prev is not None
        ce, lf, _ap, _bp, _cp, fin = st
        elements = self.extent("m", prev[0]) * self.extent("n", prev[2])
        final = prev[1] == self.grid["k"] - 1
        end = max(lf, ce) + self._occupancy("c-final" if final else "c-partial", elements)
        return max(fin, end + self.latency)


def _segments(n: int) -> list[tuple[int, int]]:
    """Units of one kind: the first, the second, the inside ones, the last."""
    if n <= 3:
        return [(x, x) for x in range(n)]
    return [(0, 0), (1, 1), (2, n - 2), (n - 1, n - 1)]


def _normal(st: State) -> tuple[int, ...]:
    return tuple(v - st[0] for v in st)


def _shift(st: State, d: int) -> State:
    return tuple(v + d for v in st)  # type: ignore[return-value]


def _period(history: list[State]) -> tuple[int, int] | None:
    """(p, d): the last state is the state p units earlier shifted by d."""
    last = history[-1]
    norm = _normal(last)
    for p in range(1, min(PERIODS, len(history) - 1) + 1):
        before = history[-1 - p]
        if _normal(before) == norm:
            return p, last[0] - before[0]
    return None


def run_fast(
    machine: SystolicMachine, design: SystolicDesign, schedule: BlockSchedule, shape: Shape
) -> FastRun:
    """The run's cycles by the recurrence with jumps (equal to `reference.run_reference`)."""
    check_design(machine, design)
    engine = _Engine(machine, design, schedule.clipped(shape), shape)
    cycles = engine.total()
    return FastRun(cycles, engine.simulated, engine.jumps)


StepFunction = Callable[[State, Kind], State]
