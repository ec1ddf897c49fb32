"""The state of the exhaustive search (timed.py): one partial program, its moves, its bounds and
the states searched, walked depth first. Tiles are numbered A, then B, then C."""

from __future__ import annotations

import time
from collections.abc import Callable

from simcore.ga1.exact.transfers import tile_products
from simcore.ga1.machine import Machine
from simcore.ga1.program import (
    LOAD,
    MXU,
    NONE,
    STORE,
    TENSOR_A,
    TENSOR_B,
    TENSOR_C,
    ZERO,
)
from simcore.shape import Shape

# Accumulator states.
UNOPENED, OPEN, SPILLED, STORED = 0, 1, 2, 3


class Stop(Exception):
    """The node or time limit was reached."""


class _Entry:
    """A state seen: its times (signature) and whether its moves have all been searched."""

    __slots__ = ("closed", "times")

    def __init__(self, times: list[int]) -> None:
        self.closed = False
        self.times = times


# What a move changes and undoes: per slot (slot, ready, acc, last read, used), the engines, the
# last start, the end, the rows, columns and k steps touched.
_Saved = tuple[list[tuple[int, int, int, int, bool]], list[int], int, int, list[int]]


class Search:
    """The instance as tile ids (A, then B, then C), the state of one partial program, and the
    depth-first search over its moves."""

    def __init__(
        self,
        shape: Shape,
        machine: Machine,
        below: int,
        limits: tuple[int, float | None],
        stop: Callable[[], bool] | None = None,
    ) -> None:
        Mt, Kt, Nt = shape.tiles(machine.T)
        self.tiles = (Mt, Kt, Nt)
        self.slots = S = machine.slots
        self.dma_cycles, self.mxu_cycles, self.fill = (
            machine.dma_cycles,
            machine.mxu_cycles,
            machine.mxu_fill,
        )
        self.n_a = Mt * Kt
        self.n_op = self.n_a + Kt * Nt
        self.n_c = Mt * Nt
        self.products, self.uses = tile_products(self.tiles)
        self.everything = (1 << len(self.products)) - 1
        # (row, column, k step) of each tile, -1 where it has none
        self.index = [(t // Kt, -1, t % Kt) for t in range(self.n_a)]
        self.index += [(-1, t % Nt, t // Nt) for t in range(Kt * Nt)]
        self.index += [(t // Nt, t % Nt, -1) for t in range(Mt * Nt)]
        self.first = [0, 0, 0]  # rows, columns and k steps touched so far: always the first ones
        self.content = [-1] * S  # tile in each slot, -1: empty
        self.ready = [0] * S  # as timing.py: a value readable
        self.acc = [0] * S  # the next accumulation may start
        self.last_read = [0] * S  # the last read of the value ends
        self.used = [False] * S  # read since written (an accumulator: a product since opened)
        self.where = [-1] * (self.n_op + self.n_c)
        self.state = [UNOPENED] * self.n_c
        self.done = 0
        self.engines = [0, 0, 0]  # DMA, matrix unit, vector unit: free from
        self.last = 0  # the start of the instruction appended last
        self.end = 0
        self.best = below
        self.found: list[tuple[int, ...]] | None = None
        self.rows: list[tuple[int, ...]] = []
        self.seen: dict[tuple[object, ...], list[_Entry]] = {}
        self.nodes = 0
        self.max_nodes, self.deadline = limits
        self.stop = stop  # asked to stop: checked with the deadline

    def transfers_due(self) -> int:
        """Loads and stores every completion still needs: each operand still read and not
        resident, each accumulator not stored for good (twice when stored part-way)."""
        rest = self.everything & ~self.done
        due = sum(1 for t in range(self.n_op) if self.where[t] < 0 and self.uses[t] & rest)
        for state in self.state:
            due += 2 if state == SPILLED else 0 if state == STORED else 1
        return due

    def lower(self) -> int:
        """A bound on every completion: the transfers still due after the DMA's next start, and
        the products still due after the matrix unit's next start, then the fill and a store."""
        bound = self.end
        due = self.transfers_due()
        if not due:
            return bound
        dma = self.next_transfer()
        bound = max(bound, dma + self.dma_cycles * due)
        if self.done != self.everything:
            start = self.next_product(dma + self.dma_cycles)
            left = len(self.products) - bin(self.done).count("1")
            bound = max(bound, start + self.mxu_cycles * left + self.fill + self.dma_cycles)
        return bound

    def next_transfer(self) -> int:
        """The earliest start of any load or store: the DMA is free, and some slot's value is
        written (a store reads it) and, for a write, read by everyone before."""
        earliest = 1 << 62
        for s in range(self.slots):
            tile = self.content[s]
            ready = self.ready[s]
            free = ready if tile >= self.n_op else max(ready, self.last_read[s])
            earliest = min(earliest, free)
        return max(self.engines[0], self.last, earliest)

    def next_product(self, loaded: int) -> int:
        """The earliest start of any product still due: an operand or a stored accumulator not
        resident is ready no earlier than `loaded` (the end of the next transfer), an accumulator
        not yet opened no earlier than a zero on the vector unit."""
        earliest = 1 << 62
        rest, where, ready = self.everything & ~self.done, self.where, self.ready
        zeroed = max(self.engines[2], self.last) + 1
        for p, (a, b, c) in enumerate(self.products):
            if rest >> p & 1:
                start = max(
                    ready[where[a]] if where[a] >= 0 else loaded,
                    ready[where[b]] if where[b] >= 0 else loaded,
                )
                sc = where[c]
                if sc >= 0:
                    start = max(start, self.acc[sc])
                elif self.state[c - self.n_op] == UNOPENED:
                    start = max(start, zeroed)
                else:
                    start = max(start, loaded)
                earliest = min(earliest, start)
        return max(self.engines[1], self.last, earliest)

    def signature(self) -> tuple[tuple[object, ...], list[int]]:
        """The state's configuration and its times, clamped to the last start (nothing starts
        before it): a state with the same configuration and times no later does no worse."""
        last = self.last
        held: list[tuple[int, bool, int, int, int]] = []
        empty: list[int] = []
        for s in range(self.slots):
            if self.content[s] < 0:
                empty.append(max(self.ready[s], self.last_read[s], last))
            else:
                held.append(
                    (
                        self.content[s],
                        self.used[s],
                        max(self.ready[s], last),
                        max(self.acc[s], last),
                        max(self.last_read[s], last),
                    )
                )
        held.sort()
        empty.sort()
        key = (self.done, tuple(h[0] for h in held), tuple(self.state), len(empty))
        # read since written is no worse than not (it only allows more moves): 0 before 1
        times = [x for h in held for x in (0 if h[1] else 1, *h[2:])] + empty
        times += [max(engine, last) for engine in self.engines] + [last]
        return key, times

    def targets(self) -> list[int]:
        """Slots a write may take: one empty slot per cycle they became free, and every slot
        whose operand has been read since its load."""
        empties: dict[int, int] = {}
        others: list[int] = []
        for s in range(self.slots):
            tile = self.content[s]
            if tile < 0:
                empties.setdefault(max(self.ready[s], self.last_read[s], self.last), s)
            elif tile < self.n_op and self.used[s]:
                others.append(s)
        return list(empties.values()) + others

    def moves(self) -> list[tuple[int, int, int, int]]:
        """(start, engine, tile or product, slot) of every move, earliest first."""
        last, engines, rest = self.last, self.engines, self.everything & ~self.done
        found: list[tuple[int, int, int, int]] = []
        where, ready, acc, last_read = self.where, self.ready, self.acc, self.last_read
        for p, (a, b, c) in enumerate(self.products):
            sa, sb, sc = where[a], where[b], where[c]
            if rest >> p & 1 and sa >= 0 and sb >= 0 and sc >= 0:
                start = max(engines[1], ready[sa], ready[sb], acc[sc], last_read[sc], last)
                found.append((start, MXU, p, sc))
        targets = self.targets()
        first = self.first
        for tile in range(self.n_op + self.n_c):
            if any(x > n for x, n in zip(self.index[tile], first)):
                continue  # a row, column or k step beyond the next untouched one
            if tile < self.n_op:
                if where[tile] >= 0 or not self.uses[tile] & rest:
                    continue
                op, engine = LOAD, 0
            else:
                state = self.state[tile - self.n_op]
                if state == OPEN:
                    s = where[tile]
                    if self.used[s]:
                        found.append((max(engines[0], ready[s], last), STORE, tile, s))
                    continue
                if state == STORED:
                    continue
                op, engine = (ZERO, 2) if state == UNOPENED else (LOAD, 0)
            for s in targets:
                start = max(engines[engine], last_read[s], ready[s], last)
                found.append((start, op, tile, s))
        found.sort()
        return found

    def run(self) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise Stop
        if not self.nodes & 0xFFF and (
            (self.deadline is not None and time.monotonic() > self.deadline)
            or (self.stop is not None and self.stop())
        ):
            raise Stop
        if self.done == self.everything and all(s == STORED for s in self.state):
            if self.end < self.best:
                self.best, self.found = self.end, list(self.rows)
            return
        if self.lower() >= self.best:
            return
        entry = self.remember()
        if entry is None:
            return
        for start, op, what, slot in self.moves():
            if start >= self.best:
                break
            if op == MXU:
                self.product(start, what)
            elif op == STORE:
                self.store(start, what, slot)
            else:
                self.write(start, op, what, slot)
        entry.closed = True

    def remember(self) -> _Entry | None:
        """None when a state searched to the end dominates this one; else this state's entry,
        to be marked searched when its moves are done."""
        key, times = self.signature()
        entries = self.seen.setdefault(key, [])
        for other in entries:
            if other.closed and all(x <= y for x, y in zip(other.times, times)):
                return None
        entries[:] = [
            e for e in entries if not (e.closed and all(x <= y for x, y in zip(times, e.times)))
        ]
        entry = _Entry(times)
        entries.append(entry)
        return entry

    def product(self, start: int, p: int) -> None:
        a, b, c = self.products[p]
        sa, sb, sc = self.where[a], self.where[b], self.where[c]
        saved = self.save(sa, sb, sc)
        finish = start + self.mxu_cycles
        self.engines[1] = finish
        for s in (sa, sb):
            self.last_read[s] = max(self.last_read[s], finish)
        self.last_read[sc], self.ready[sc], self.acc[sc] = finish, finish + self.fill, finish
        self.used[sa] = self.used[sb] = self.used[sc] = True
        self.done |= 1 << p
        self.end = max(self.end, finish + self.fill)
        self.last = start
        dropped = [s for s in (sa, sb) if not self.uses[self.content[s]] & ~self.done]
        for s in dropped:
            self.where[self.content[s]], self.content[s] = -1, -1
        self.rows.append((MXU, NONE, sc, sa, sb, NONE, NONE, NONE))
        self.run()
        self.rows.pop()
        for s, tile in zip((sa, sb), (a, b)):
            if s in dropped:
                self.content[s], self.where[tile] = tile, s
        self.restore(saved)
        self.done &= ~(1 << p)

    def write(self, start: int, op: int, tile: int, s: int) -> None:
        """A load or a zero of `tile` into slot `s` (over the operand there, if any)."""
        saved = self.save(s)
        before = self.content[s]
        if before >= 0:
            self.where[before] = -1
        self.content[s], self.where[tile] = tile, s
        for axis, x in enumerate(self.index[tile]):
            self.first[axis] = max(self.first[axis], x + 1)
        finish = start + (self.dma_cycles if op == LOAD else 1)
        self.engines[0 if op == LOAD else 2] = finish
        self.ready[s] = self.acc[s] = finish
        self.used[s] = False
        self.end, self.last = max(self.end, finish), start
        c = tile - self.n_op
        state = self.state[c] if c >= 0 else UNOPENED
        if c >= 0:
            self.state[c] = OPEN
        self.rows.append((op, NONE, s, NONE, NONE) + self.coordinates(tile, op))
        self.run()
        self.rows.pop()
        if c >= 0:
            self.state[c] = state
        self.where[tile], self.content[s] = -1, before
        if before >= 0:
            self.where[before] = s
        self.restore(saved)

    def store(self, start: int, tile: int, s: int) -> None:
        saved = self.save(s)
        c = tile - self.n_op
        state = self.state[c]
        finish = start + self.dma_cycles
        self.engines[0] = finish
        self.last_read[s] = max(self.last_read[s], finish)
        self.end, self.last = max(self.end, finish), start
        self.state[c] = SPILLED if self.uses[tile] & ~self.done else STORED
        self.where[tile], self.content[s] = -1, -1
        self.rows.append((STORE, NONE, s, NONE, NONE, TENSOR_C) + self.coordinates(tile, STORE)[1:])
        self.run()
        self.rows.pop()
        self.where[tile], self.content[s], self.state[c] = s, tile, state
        self.restore(saved)

    def save(self, *slots: int) -> _Saved:
        per_slot = [(s, self.ready[s], self.acc[s], self.last_read[s], self.used[s]) for s in slots]
        return (per_slot, list(self.engines), self.last, self.end, list(self.first))

    def restore(self, saved: _Saved) -> None:
        per_slot, engines, self.last, self.end, first = saved
        for s, ready, acc, last_read, used in reversed(per_slot):
            self.ready[s], self.acc[s], self.last_read[s], self.used[s] = (
                ready,
                acc,
                last_read,
                used,
            )
        self.engines[:] = engines
        self.first[:] = first

    def coordinates(self, tile: int, op: int) -> tuple[int, int, int]:
        """(tensor, x, y) of a tile in a load or store row; none for a zero."""
        if op == ZERO:
            return NONE, NONE, NONE
        row, col, k = self.index[tile]
        if tile < self.n_a:
            return TENSOR_A, row, k
        if tile < self.n_op:
            return TENSOR_B, k, col
        return TENSOR_C, row, col
