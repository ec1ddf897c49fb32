"""Timing a fused group's event schedule (the rule in ops.py), two ways held equal by tests.

* `run_reference` expands the tree and times the operations one at a time, keeping every
  start and end (the timeline the audit and the replay read).
* `run_fast` times the tree itself and jumps whole periods of a repeat. The rule uses only max
  and +, so a shift of every time shifts every later time. Before each repetition the state (the
  units' free times, each slot's data and free times, the run's end) is taken relative to a base,
  the earliest free time of the units the tree uses, clamped at zero: a time below the base is
  never the maximum again, since every later operation starts after its unit is free. When the
  state recurs p repetitions later, every further p repetitions shift it by the same cycles:
  the engine jumps as many whole periods as remain, then times the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.systolic.fused.ops import Chunk, Op, Tree, expand

HISTORY = 8  # states kept per open repeat: periods of up to this many repetitions are found


@dataclass(frozen=True)
class Timeline:
    ops: tuple[Op, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    cycles: int


class _State:
    """Units' free times, each slot's data time and free time, and the run's end."""

    def __init__(self, slots: int) -> None:
        self.free = [0, 0, 0]
        self.ready = [0] * slots
        self.released = [0] * slots
        self.end = 0

    def run(self, op: Op) -> tuple[int, int]:
        start = self.free[op.unit]
        for s in op.reads:
            start = max(start, self.ready[s])
        for s in op.writes:
            start = max(start, self.released[s], self.ready[s])
        end = start + op.duration
        self.free[op.unit] = end
        for s in op.reads:
            self.released[s] = max(self.released[s], end)
        for s in op.writes:
            self.ready[s] = end + op.latency
        self.end = max(self.end, end + op.latency)
        return start, end

    def values(self) -> list[int]:
        return [*self.free, self.end, *self.ready, *self.released]

    def load(self, values: list[int]) -> None:
        n = len(self.ready)
        self.free = values[:3]
        self.end = values[3]
        self.ready = values[4 : 4 + n]
        self.released = values[4 + n :]


def run_reference(tree: Tree, slots: int) -> Timeline:
    """Every operation timed in issue order."""
    state = _State(slots)
    ops = tuple(expand(tree))
    starts, ends = [], []
    for op in ops:
        start, end = state.run(op)
        starts.append(start)
        ends.append(end)
    return Timeline(ops, tuple(starts), tuple(ends), state.end)


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
        return min(self.state.free[u] for u in self.units)

    def signature(self) -> tuple[int, tuple[int, ...]]:
        base = self.base()
        return base, tuple(max(v, base) - base for v in self.state.values())

    def walk(self, tree: Tree) -> None:
        for node in tree:
            if isinstance(node, Chunk):
                for op in node.ops:
                    self.state.run(op)
                self.timed += len(node.ops)
            else:
                self.repeat(node.count, node.body)

    def repeat(self, count: int, body: Tree) -> None:
        kept: list[tuple[int, int, tuple[int, ...]]] = []  # (repetition, base, signature)
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
