"""A fused group's event schedule: operations on the DRAM link, the array and the vector unit,
each reading and writing blocks held in slots of the on-chip stores, in issue order.

The timing rule (the memory engine's, written over slots so that one schedule can hold several
products and the vector unit's work):
  * the link and the vector unit serve their operations one at a time, in issue order;
  * the array runs each block's tiles after the previous block's tiles under the array's own
    recurrence, as a block schedule of the memory system does (`simcore.systolic.blocked.stream`):
    fill and drain overlap across blocks; the stationary operand's block gates the tiles' fetch,
    the streamed blocks and the C block gate their stream (a slot whose last writer or reader
    was the array itself is ordered by the tile stream); a block has ended when its last tile
    has;
  * an operation starts when its unit is free, every slot it reads holds its data (a load's
    data is in place the link's latency after the link has moved it; a product's or the
    vector unit's when it ends), and every slot it writes is free: the operations that read
    the slot's previous block have ended (a drain ends when the link has moved the block);
  * a product that adds into partial sums reads and writes its C slot; a fresh one only
    writes it;
  * the run ends when the last operation has ended and the last drain's data is in DRAM (its
    latency after the link moved it).
A schedule is a tree: chunks of operations, and bodies repeated a number of times (the engines
time the tree; the reference expands it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterator, NamedTuple, Union

from simcore.systolic.blocked.stream import BlockTiles, StreamParams

LINK, ARRAY, VECTOR = range(3)
UNITS: tuple[str, ...] = ("link", "array", "vector")
# kinds of operation: the link's loads ("load"), read-backs of partial sums ("back"), drains of
# outputs ("drain") and of partial sums ("spill"); the array's blocks ("compute"); the vector
# unit's elementwise work ("vector")
LINK_KINDS = ("load", "back", "drain", "spill")
Span = tuple[int, int]


@dataclass(frozen=True)
class ArrayWork:
    """A block on the array: its tiles (nested runs of one kind), the stream's parameters and
    which of the operation's reads is the stationary block (-1: none, os)."""

    runs: BlockTiles
    params: StreamParams
    held: int


class Op(NamedTuple):
    unit: int
    kind: str
    duration: int
    reads: tuple[int, ...]
    writes: tuple[int, ...]
    latency: int  # cycles after its end before a link operation's data is in place
    tensor: str = ""  # the DRAM tensor a link operation moves; the vector unit's steps
    rows: Span = (0, 0)  # the block's elements (a product: its m, k and n extents)
    cols: Span = (0, 0)
    words: Fraction = Fraction(0)  # link words moved
    elements: int = 0  # elements moved, multiply-adds, or elements worked on
    what: str = ""  # a link operation's width class (simcore.systolic.blocked.schedule.transfer)
    work: ArrayWork | None = None  # a block on the array: its tiles


@dataclass(frozen=True, eq=False)
class Chunk:
    ops: tuple[Op, ...]


@dataclass(frozen=True, eq=False)
class Repeat:
    count: int
    body: tuple["Node", ...]


Node = Union[Chunk, Repeat]
Tree = tuple[Node, ...]
MIN_REPEATS = 3


def expand(tree: Tree) -> Iterator[Op]:
    """The tree's operations in issue order, every repetition."""
    for node in tree:
        if isinstance(node, Chunk):
            yield from node.ops
        else:
            for _ in range(node.count):
                yield from expand(node.body)


def tree_ops(tree: Tree) -> int:
    return sum(len(n.ops) if isinstance(n, Chunk) else n.count * tree_ops(n.body) for n in tree)


def weighted(tree: Tree, times: int = 1) -> Iterator[tuple[Op, int]]:
    """Every distinct operation of the tree with how many times it runs."""
    for node in tree:
        if isinstance(node, Chunk):
            for op in node.ops:
                yield op, times
        else:
            yield from weighted(node.body, times * node.count)


class Ring:
    """`size` slots from `start`, handed out in turn."""

    def __init__(self, start: int, size: int) -> None:
        self.start, self.size, self.value = start, size, 0

    def take(self) -> int:
        slot = self.start + self.value % self.size
        self.value += 1
        return slot


class Emitter:
    """Appends operations; `compress` builds a tree whose loops are kept once with a count."""

    def __init__(self, compress: bool = False) -> None:
        self.compress = compress
        self._levels: list[list[Node]] = [[]]
        self._ops: list[Op] = []
        self.rings: list[Ring] = []

    def ring(self, start: int, size: int) -> Ring:
        ring = Ring(start, size)
        self.rings.append(ring)
        return ring

    def add(self, op: Op) -> None:
        self._ops.append(op)

    def _flush(self) -> None:
        if self._ops:
            self._levels[-1].append(Chunk(tuple(self._ops)))
            self._ops = []

    def cycle(self, start: int, stop: int, body: Callable[[int], None], parity: int = 1) -> None:
        """body(i) for i in start..stop-1: iterations that issue the same operations but for
        their rings' phases and a state of period `parity` (the caller's guarantee). A tree keeps
        one period, found from the rings' use in the first iteration."""
        if stop <= start:
            return
        if not self.compress:
            for i in range(start, stop):
                body(i)
            return
        before = [ring.value for ring in self.rings]
        self._flush()
        self._levels.append([])
        body(start)
        period = parity
        for ring, value in zip(self.rings, before):
            moved = ring.value - value
            period = math.lcm(period, ring.size // math.gcd(ring.size, moved) if moved else 1)
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
        for ring, value in zip(self.rings, before):
            moved = ring.value - value
            if moved % ring.size:
                raise AssertionError(f"a period of {period} leaves a ring off its phase")
            ring.value += (repeats - 1) * moved
        for i in range(start + repeats * period, stop):
            body(i)

    def tree(self) -> Tree:
        self._flush()
        return tuple(self._levels[0])
