"""What a block schedule moves, from the loop structure alone (no timing).

An operand's tile is replaced whenever a loop outside its span that indexes it moves (`loads`);
its blocks come in one request each, as they are first used. For C the count is the number of
visits V of each output block: V = Kb when k runs outside the innermost loop that moves C's
tile, else 1. Each visit but the first reads the partial sums back, each but the last spills
them, and the last writes the outputs.

Buffers: each load writes its block into its store, the array reads A and B and writes and
reads back partial sums inside a block as the array model counts them (`model.traffic` of the
block's sub-GEMM), a step with k > 0 adds its sums to the ones already in the C store (one
read per output element), and each drain reads its block out.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import INDEXED_BY, BlockSchedule
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign, Traffic, traffic


@dataclass(frozen=True)
class DramCounts:
    """DRAM traffic in elements (operand, accumulator or output words) and in requests."""

    a_reads: int
    b_reads: int
    c_reads: int  # partial sums read back
    c_partial_writes: int  # partial sums spilled
    c_final_writes: int  # outputs
    a_requests: int
    b_requests: int
    c_read_requests: int
    c_write_requests: int

    @property
    def c_writes(self) -> int:
        return self.c_partial_writes + self.c_final_writes

    @property
    def elements(self) -> int:
        return self.a_reads + self.b_reads + self.c_reads + self.c_writes

    @property
    def requests(self) -> int:
        return self.a_requests + self.b_requests + self.c_read_requests + self.c_write_requests

    def bytes(self, machine: SystolicMachine) -> dict[str, Fraction]:
        """Bytes per operand at their widths."""
        w, acc, out = machine.word_bits, machine.accumulator_bits, machine.output_bits
        return {
            "a_reads": Fraction(self.a_reads * w, 8),
            "b_reads": Fraction(self.b_reads * w, 8),
            "c_reads": Fraction(self.c_reads * acc, 8),
            "c_writes": Fraction(self.c_partial_writes * acc + self.c_final_writes * out, 8),
        }

    def link_words(self, machine: SystolicMachine) -> Fraction:
        """Words of the link (operand words) moved in all."""
        return sum(self.bytes(machine).values(), Fraction(0)) * 8 / machine.word_bits


@dataclass(frozen=True)
class StoreCounts:
    """Reads and writes of one on-chip store, in its own words."""

    name: str
    reads: Fraction
    writes: Fraction


@dataclass(frozen=True)
class BlockCounts:
    """Everything a block schedule moves."""

    dram: DramCounts
    stores: tuple[StoreCounts, ...]
    array: Traffic  # the array's own traffic, summed over the blocks
    accumulate_reads: int  # sums already in the C store read to add a step's sums
    blocks: int
    block_shapes: tuple[tuple[tuple[int, int, int], int], ...]  # (bm, bk, bn), how many

    def store(self, name: str) -> StoreCounts:
        for s in self.stores:
            if s.name == name:
                return s
        raise KeyError(name)


def block_parts(size: int, block: int) -> list[tuple[int, int]]:
    """(extent, count) runs of a dimension cut into blocks: the full ones, then the edge."""
    full, edge = divmod(size, block)
    return [(e, c) for e, c in ((block, full), (edge, 1 if edge else 0)) if c]


def loads(schedule: BlockSchedule, grid: dict[str, int], operand: str) -> tuple[int, int]:
    """(times each block of `operand` comes in (C: is visited), blocks of it) for the schedule.

    A tile is replaced whenever a loop outside its span that indexes the operand moves, so each
    block comes in once per distinct prefix of the loops down to p, the innermost loop outside
    the span that indexes the operand and has more than one block: as many times as the loops
    down to p that do not index it have blocks."""
    dims = INDEXED_BY[operand]
    span = schedule.span["abc".index(operand)]
    levels = list(schedule.order)
    outside = [n for n, d in enumerate(levels) if n < span and d in dims and grid[d] > 1]
    inner = max(outside, default=-1)
    repeat = 1
    for d in levels[: inner + 1]:
        if d not in dims:
            repeat *= grid[d]
    return repeat, grid[dims[0]] * grid[dims[1]]


def block_counts(
    machine: SystolicMachine, design: SystolicDesign, schedule: BlockSchedule, shape: Shape
) -> BlockCounts:
    s = schedule.clipped(shape)
    m, k, n = shape.m, shape.k, shape.n
    grid = dict(zip("mkn", s.grid(shape)))
    a_times, a_blocks = loads(s, grid, "a")
    b_times, b_blocks = loads(s, grid, "b")
    visits, c_blocks = loads(s, grid, "c")
    dram = DramCounts(
        m * k * a_times,
        k * n * b_times,
        m * n * (visits - 1),
        m * n * (visits - 1),
        m * n,
        a_blocks * a_times,
        b_blocks * b_times,
        c_blocks * (visits - 1),
        c_blocks * visits,
    )
    shapes = []
    total = Traffic(design.dataflow, 0, 0, 0, 0, 0, 0)
    for bm, cm in block_parts(m, s.bm):
        for bk, ck in block_parts(k, s.bk):
            for bn, cn in block_parts(n, s.bn):
                count = cm * ck * cn
                shapes.append(((bm, bk, bn), count))
                t = traffic(design.used, bm, bk, bn, design.dataflow)
                total = Traffic(
                    design.dataflow,
                    *(getattr(total, f) + count * getattr(t, f) for f in _TRAFFIC_FIELDS),
                )
    accumulate = m * n * (grid["k"] - 1)
    return BlockCounts(
        dram,
        _stores(machine, dram, total, accumulate),
        total,
        accumulate,
        grid["m"] * grid["k"] * grid["n"],
        tuple(shapes),
    )


_TRAFFIC_FIELDS = ("macs", "a_reads", "b_reads", "psum_writes", "psum_readbacks", "c_writes")


def _stores(
    machine: SystolicMachine, dram: DramCounts, array: Traffic, accumulate: int
) -> tuple[StoreCounts, ...]:
    memory = machine.memory
    c_store = memory.store_of("c")
    wide = Fraction(1) if c_store is None else machine.accumulator_words
    moves = {
        "a": (Fraction(array.a_reads), Fraction(dram.a_reads)),
        "b": (Fraction(array.b_reads), Fraction(dram.b_reads)),
        "c": (
            (array.psum_readbacks + accumulate + dram.c_writes) * wide,
            (array.psum_writes + array.c_writes + dram.c_reads) * wide,
        ),
    }
    reads: dict[str, Fraction] = {}
    writes: dict[str, Fraction] = {}
    for operand, (r, w) in moves.items():
        store = memory.store_of(operand)
        key = "accumulator" if store is None else store.name
        reads[key] = reads.get(key, Fraction(0)) + r
        writes[key] = writes.get(key, Fraction(0)) + w
    names = [s.name for s in memory.stores] + (["accumulator"] if memory.accumulator else [])
    return tuple(
        StoreCounts(name, reads.get(name, Fraction(0)), writes.get(name, Fraction(0)))
        for name in names
    )
