"""What every fused program's builder shares: the slot layout, rings of streamed tiles, an
emitter whose loops keep the rings' counters, and the elementwise arithmetic of a tile.

A ring hands out its slots in turn; a builder takes the next slot for each tile it loads, so
the program needs no closed form for a slot. In a timing tree a loop emits one period of its
iterations and repeats it: the emitter then moves every ring's counter on by the loads of the
repetitions it did not emit, and refuses a period after which a ring is not back at its phase
(the repeated instructions would not be the program's).
"""

from __future__ import annotations

import math
from typing import Callable, Hashable

from simcore.ga1.machine import Machine
from simcore.ga1.schedules import ScheduleError
from simcore.ga1.vector.emit import MIN_REPEATS, Emitter, Node, Repeat
from simcore.ga1.vector.kernels.maps import GELU_CUBIC, GELU_TANH_SCALE


class Ring:
    """`size` slots from `start`, handed out in turn."""

    def __init__(self, start: int, size: int) -> None:
        self.start, self.size, self.value = start, size, 0

    def take(self) -> int:
        slot = self.start + self.value % self.size
        self.value += 1
        return slot

    def align(self) -> None:
        """Start again at the ring's first slot (a multiple of its size: its phase is 0)."""
        self.value = -(-self.value // self.size) * self.size


class Layout:
    """Named runs of slots, allocated in order; `check` refuses a layout over the scratchpad."""

    def __init__(self) -> None:
        self.size = 0
        self.regions: dict[str, tuple[int, int]] = {}

    def take(self, name: str, count: int) -> int:
        start = self.size
        self.regions[name] = (start, count)
        self.size += count
        return start

    def check(self, what: str, machine: Machine) -> None:
        if self.size > machine.slots:
            parts = ", ".join(f"{name} {n}" for name, (_s, n) in self.regions.items() if n)
            raise ScheduleError(
                f"{what} needs {self.size} slots, the scratchpad has {machine.slots} "
                f"({self.size - machine.slots} over: {parts})"
            )


class FusedEmitter(Emitter):
    """An emitter (flat program or timing tree) that keeps its rings' counters in loops."""

    def __init__(self, compress: bool = False) -> None:
        super().__init__(compress)
        self.rings: list[Ring] = []
        # bodies kept by key and ring phases: (nodes, rings' moves) and (unit, period, moves)
        self._bodies: dict[Hashable, tuple[tuple[Node, ...], tuple[int, ...]]] = {}
        self._units: dict[Hashable, tuple[tuple[Node, ...], int, tuple[int, ...]]] = {}

    def _phases(self) -> tuple[int, ...]:
        return tuple(ring.value % ring.size for ring in self.rings)

    def share(self, key: Hashable, body: Callable[[], None]) -> None:
        """body(); in a tree, a body already emitted under the same key at the same ring phases
        is shared, not emitted again (the caller guarantees that equal keys emit the same
        instructions but for their rings' phases)."""
        if not self.compress:
            body()
            return
        full = (key, self._phases())
        kept = self._bodies.get(full)
        if kept is None:
            before = [ring.value for ring in self.rings]
            self._flush()
            self._levels.append([])
            body()
            self._flush()
            moves = tuple(ring.value - value for ring, value in zip(self.rings, before))
            kept = self._bodies[full] = (tuple(self._levels.pop()), moves)
        else:
            for ring, moved in zip(self.rings, kept[1]):
                ring.value += moved
        self._flush()
        self._levels[-1].extend(kept[0])

    def ring(self, start: int, size: int) -> Ring:
        ring = Ring(start, size)
        self.rings.append(ring)
        return ring

    def loop(self, start: int, stop: int, period: int, body: Callable[[int], None]) -> None:
        count = stop - start
        repeats = count // period if period > 0 else 0
        if not self.compress or repeats < MIN_REPEATS:
            for i in range(start, stop):
                body(i)
            return
        before = [ring.value for ring in self.rings]
        self._flush()
        self._levels.append([])
        for i in range(start, start + period):
            body(i)
        self._flush()
        unit = tuple(self._levels.pop())
        self._levels[-1].append(Repeat(repeats, unit))
        self._advance(before, period, repeats)
        for i in range(start + repeats * period, stop):
            body(i)

    def cycle(
        self,
        start: int,
        stop: int,
        body: Callable[[int], None],
        parity: int = 1,
        key: Hashable = None,
    ) -> None:
        """body(i) for i in start..stop-1, whose iterations are the same instructions but for
        their rings' phases and a state of period `parity` (the caller's guarantee). In a tree,
        the period is found from the rings' loads in the first iteration; with a `key`, a unit
        already made under the same key at the same phases is shared."""
        if stop <= start:
            return
        if not self.compress:
            for i in range(start, stop):
                body(i)
            return
        full = None if key is None else (key, parity, self._phases())
        kept = self._units.get(full) if full is not None else None
        if kept is not None and (stop - start) // kept[1] >= MIN_REPEATS:
            unit, period, moves = kept
            repeats = (stop - start) // period
            self._flush()
            self._levels[-1].append(Repeat(repeats, unit))
            for ring, moved in zip(self.rings, moves):
                ring.value += repeats * moved
            for i in range(start + repeats * period, stop):
                body(i)
            return
        before = [ring.value for ring in self.rings]
        self._flush()
        self._levels.append([])
        body(start)
        period = parity
        for ring, value in zip(self.rings, before):
            period = math.lcm(period, ring_period(ring.value - value, ring.size))
        repeats = (stop - start) // period
        if repeats < MIN_REPEATS:
            self._flush()
            done = self._levels.pop()
            self._levels[-1].extend(done)
            for i in range(start + 1, stop):
                body(i)
            return
        for i in range(start + 1, start + period):
            body(i)
        self._flush()
        unit = tuple(self._levels.pop())
        self._levels[-1].append(Repeat(repeats, unit))
        moves = self._advance(before, period, repeats)
        if full is not None:
            self._units[full] = (unit, period, moves)
        for i in range(start + repeats * period, stop):
            body(i)

    def _advance(self, before: list[int], period: int, repeats: int) -> tuple[int, ...]:
        """Move the rings on by the repetitions a Repeat stands for beyond the one emitted;
        the moves of one period."""
        moves = []
        for ring, value in zip(self.rings, before):
            moved = ring.value - value
            if moved % ring.size:
                raise AssertionError(f"a period of {period} leaves a ring off its phase")
            ring.value += (repeats - 1) * moved
            moves.append(moved)
        return tuple(moves)


def ring_period(loads: int, size: int) -> int:
    """Units of `loads` loads each after which a ring of `size` slots is back at its phase."""
    return size // math.gcd(size, loads) if loads else 1


def periods(*values: int) -> int:
    return math.lcm(*values)


def activation(e: Emitter, kind: str, x: int, temp: int, ones: int, gelu: str) -> None:
    """x := kind(x) elementwise, as the vector operations compute it (docs/vector.md): GELU in
    tanh form as x / (1 + exp(-2u)), in erf form with the sfu's erf; SiLU as x / (1 + exp(-x))."""
    if kind == "relu":
        e.vop("relu", x, x)
    elif kind == "silu":
        e.vop("neg", temp, x)
        e.exp(temp, temp)
        e.vop("add", temp, temp, ones)
        e.vop("div", x, x, temp)
    elif gelu == "erf":
        e.vscale(temp, x, 1.0 / math.sqrt(2.0))
        e.sfu("erf", temp, temp)
        e.vop("add", temp, temp, ones)
        e.vop("mul", x, x, temp)
        e.vscale(x, x, 0.5)
    else:
        e.vop("mul", temp, x, x)
        e.vop("mul", temp, temp, x)
        e.vscale(temp, temp, GELU_CUBIC)
        e.vop("add", temp, temp, x)
        e.vscale(temp, temp, -2.0 * GELU_TANH_SCALE)
        e.exp(temp, temp)
        e.vop("add", temp, temp, ones)
        e.vop("div", x, x, temp)


def needs_ones(steps: tuple[str, ...], gelu: str) -> bool:
    """Whether the steps use a tile of ones (GELU and SiLU's 1 + ...)."""
    return "silu" in steps or "gelu" in steps


def make_ones(e: Emitter, slot: int) -> None:
    """A tile of ones, made on the vector unit: exp(0)."""
    e.zero(slot)
    e.exp(slot, slot)


def tiles(size: int, T: int) -> int:
    return -(-size // T)
