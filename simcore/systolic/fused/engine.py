"""Timing a fused group's event schedule (the rule in ops.py), two ways held equal by tests.

* `run_reference` expands the tree and times the operations one at a time, keeping every
  start and end (the timeline the audit and the replay read).
* `run_fast` times the tree itself and jumps whole periods of a repeat. The rule uses only max
  and +, so a shift of every time shifts every later time. Before each repetition the state (the
  units' free times, each slot's data and free times, the run's end, the array's tile-stream
  state) is taken relative to a base, the earliest time from which each unit the tree uses can
  still act (the link's and the vector unit's free times; the array's stream and fetch gates),
  the memory part clamped at zero: a time below the base is never the maximum again, since every
  later operation starts after its unit is free and a block's gates only raise the array's. The
  array's state is kept exactly (relative to the base). When the
  state recurs p repetitions later, every further p repetitions shift it by the same cycles:
  the engine jumps as many whole periods as remain, then times the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.systolic.blocked.stream import gate, initial_state_of, run_tiles, tile_step
from simcore.systolic.fused.ops import ARRAY, ArrayWork, Chunk, Op, Tree, expand

HISTORY = 8  # states kept per open repeat: periods of up to this many repetitions are found


@dataclass(frozen=True)
class Timeline:
    ops: tuple[Op, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    cycles: int
    streams: tuple[int, ...]  # a block's first tile's stream start (others: the start)


class _State:
    """Units' free times, each slot's data time and free time, the same as the array sees them
    (ordered by the tile stream where the array itself wrote or read the slot), the run's end,
    and the array's tile-stream state (None until its first block)."""

    def __init__(self, slots: int) -> None:
        self.free = [0, 0, 0]
        self.ready = [0] * slots
        self.released = [0] * slots
        self.ready_ext = [0] * slots
        self.released_ext = [0] * slots
        self.end = 0
        self.array: tuple[float, ...] | None = None
        self.stream_start = 0  # the last block's first tile's stream start

    def run(self, op: Op) -> tuple[int, int]:
        if op.work is not None:
            return self.run_array(op, op.work)
        start = self.free[op.unit]
        for s in op.reads:
            start = max(start, self.ready[s])
        for s in op.writes:
            start = max(start, self.released[s], self.ready[s])
        end = start + op.duration
        self.free[op.unit] = end
        for s in op.reads:
            self.released[s] = max(self.released[s], end)
            self.released_ext[s] = max(self.released_ext[s], end)
        for s in op.writes:
            self.ready[s] = end + op.latency
            self.ready_ext[s] = self.ready[s]
        self.end = max(self.end, end + op.latency)
        return start, end

    def run_array(self, op: Op, work: ArrayWork) -> tuple[int, int]:
        """The block's tiles after the previous block's, gated by its blocks' arrival."""
        fetch = stream = 0
        for n, s in enumerate(op.reads):
            if n == work.held:
                fetch = max(fetch, self.ready_ext[s])
            elif s not in op.writes:
                stream = max(stream, self.ready_ext[s])
        for s in op.writes:
            stream = max(stream, self.ready_ext[s], self.released_ext[s])
        arr = self.array if self.array is not None else initial_state_of(work.params)
        arr = gate(arr, fetch, stream, work.params)
        first = tile_step(arr, work.runs[0][1][0][0], work.params)[1]
        start = int(first[0])
        self.stream_start = int(first[0] if work.params.output else first[3])
        self.array = run_tiles(arr, work.runs, work.params)
        end = int(self.array[-1])
        self.free[ARRAY] = end
        for s in op.reads:
            self.released[s] = max(self.released[s], end)
        for s in op.writes:
            self.ready[s] = end
            self.ready_ext[s] = 0
        self.end = max(self.end, end)
        return start, end

    def floor(self, unit: int) -> float:
        """The earliest time the unit can still act from."""
        if unit != ARRAY:
            return self.free[unit]
        if self.array is None:
            return 0
        gates = (self.array[2],) if len(self.array) > 5 else (self.array[2], self.array[3])
        return max(0, min(gates))

    def values(self) -> list[int]:
        return [
            *self.free,
            self.end,
            *self.ready,
            *self.released,
            *self.ready_ext,
            *self.released_ext,
        ]

    def load(self, values: list[int]) -> None:
        n = len(self.ready)
        self.free = values[:3]
        self.end = values[3]
        self.ready = values[4 : 4 + n]
        self.released = values[4 + n : 4 + 2 * n]
        self.ready_ext = values[4 + 2 * n : 4 + 3 * n]
        self.released_ext = values[4 + 3 * n :]


def run_reference(tree: Tree, slots: int) -> Timeline:
    """Every operation timed in issue order."""
    state = _State(slots)
    ops = tuple(expand(tree))
    starts, ends, streams = [], [], []
    for op in ops:
        start, end = state.run(op)
        starts.append(start)
        ends.append(end)
        streams.append(start if op.work is None else state.stream_start)
    return Timeline(ops, tuple(starts), tuple(ends), state.end, tuple(streams))


@dataclass(frozen=True)
class FastRun:
    cycles: int
    ops_timed: int
    jumps: int


class _Fast:
    def __init__(self, tree: Tree, slots: int) -> None:
        self.state = _State(slots)
        self.units = sorted({op.unit for op in expand_units(tree)})
        self.timed = 0
        self.jumps = 0

    def base(self) -> int:
        return int(min(self.state.floor(u) for u in self.units))

    def signature(self) -> tuple[int, tuple[float, ...]]:
        base = self.base()
        memory = tuple(max(v, base) - base for v in self.state.values())
        array = self.state.array
        return base, memory + (() if array is None else tuple(v - base for v in array))

    def walk(self, tree: Tree) -> None:
        for node in tree:
            if isinstance(node, Chunk):
                for op in node.ops:
                    self.state.run(op)
                self.timed += len(node.ops)
            else:
                self.repeat(node.count, node.body)

    def repeat(self, count: int, body: Tree) -> None:
        kept: list[tuple[int, int, tuple[float, ...]]] = []  # (repetition, base, signature)
        done = 0
        while done < count:
            base, sig = self.signature()
            match = next((k for k in reversed(kept) if k[2] == sig), None)
            if match is not None:
                period, shift = done - match[0], base - match[1]
                times = (count - done) // period
                if times:
                    self.shift(times * shift, base)
                    done += times * period
                    self.jumps += 1
                    kept = []
                    if done >= count:
                        break
            kept = (kept + [(done, base, sig)])[-HISTORY:]
            self.walk(body)
            done += 1

    def shift(self, by: int, base: int) -> None:
        self.state.load([max(v, base) + by for v in self.state.values()])
        if self.state.array is not None:
            self.state.array = tuple(v + by for v in self.state.array)  # -inf stays -inf


def expand_units(tree: Tree) -> list[Op]:
    """One operation of every distinct kind of node (enough to know the units used)."""
    found: list[Op] = []
    for node in tree:
        if isinstance(node, Chunk):
            found.extend(node.ops)
        else:
            found.extend(expand_units(node.body))
    return found


def run_fast(tree: Tree, slots: int) -> FastRun:
    """The tree's cycles, whole periods of its repeats jumped (equal to run_reference's)."""
    fast = _Fast(tree, slots)
    fast.walk(tree)
    return FastRun(fast.state.end, fast.timed, fast.jumps)
