"""What a block schedule moves, from the loop structure alone (no timing).

An operand's block is loaded again whenever its block index changes from one step to the next.
Going from one step to the next, the innermost loop that advances and every loop inside it
change their index; so operand X (indexed by two of m, k, n) is loaded once per distinct
prefix of the loops down to p_X, the innermost loop that indexes X and has more than one block.
Each of its blocks comes in as many times as the loops down to p_X that do not index X have
blocks. For C the same count is the number of visits V of each output block: V = Kb when k runs
outside p_C, else 1. Each visit but the first reads the partial sums back, each but the last
spills them, and the last writes the outputs.

Buffers: each load writes its block into its store, the array reads A and B and writes and
reads back partial sums inside a block as the array model counts them (`model.traffic` of the
block's sub-GEMM), a step with k > 0 adds its sums to the ones already in the C store (one
read per output element), and each drain reads its block out.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import INDEXED_BY, BlockSchedule, block_cycles
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
    """Everything a block schedule moves, and the array's busy cycles."""

    dram: DramCounts
    stores: tuple[StoreCounts, ...]
    array: Traffic  # the array's own traffic, summed over the blocks
    accumulate_reads: int  # sums already in the C store read to add a step's sums
    blocks: int
    compute_cycles: int
    block_shapes: tuple[tuple[tuple[int, int, int], int], ...]  # (bm, bk, bn), how many

    def store(self, name: str) -> StoreCounts:
        for s in self.stores:
            if s.name == name:
                return s
        raise KeyError(name)


def _parts(size: int, block: int) -> list[tuple[int, int]]:
    full, edge = divmod(size, block)
    return [(e, c) for e, c in ((block, full), (edge, 1 if edge else 0)) if c]


def loads(schedule: BlockSchedule, grid: dict[str, int], operand: str) -> tuple[int, int]:
    """(times each block of `operand` is loaded or visited, runs in all) for the loop order."""
    dims = INDEXED_BY[operand]
    levels = [d for d in schedule.order]
    inner = max((n for n, d in enumerate(levels) if d in dims and grid[d] > 1), default=-1)
    repeat = runs = 1
    for d in levels[: inner + 1]:
        runs *= grid[d]
        if d not in dims:
            repeat *= grid[d]
    return repeat, runs


def block_counts(
    machine: SystolicMachine, design: SystolicDesign, schedule: BlockSchedule, shape: Shape
) -> BlockCounts:
    s = schedule.clipped(shape)
    m, k, n = shape.m, shape.k, shape.n
    grid = dict(zip("mkn", s.grid(shape)))
    a_times, a_runs = loads(s, grid, "a")
    b_times, b_runs = loads(s, grid, "b")
    visits, c_runs = loads(s, grid, "c")
    dram = DramCounts(
        m * k * a_times,
        k * n * b_times,
        m * n * (visits - 1),
        m * n * (visits - 1),
        m * n,
        a_runs,
        b_runs,
        c_runs - grid["m"] * grid["n"],
        c_runs,
    )
    shapes = []
    total = Traffic(design.dataflow, 0, 0, 0, 0, 0, 0)
    busy = 0
    for bm, cm in _parts(m, s.bm):
        for bk, ck in _parts(k, s.bk):
            for bn, cn in _parts(n, s.bn):
                count = cm * ck * cn
                shapes.append(((bm, bk, bn), count))
                t = traffic(design.used, bm, bk, bn, design.dataflow)
                total = Traffic(
                    design.dataflow,
                    *(getattr(total, f) + count * getattr(t, f) for f in _TRAFFIC_FIELDS),
                )
                busy += count * block_cycles(machine, design, bm, bk, bn)
    accumulate = m * n * (grid["k"] - 1)
    return BlockCounts(
        dram,
        _stores(machine, dram, total, accumulate),
        total,
        accumulate,
        grid["m"] * grid["k"] * grid["n"],
        busy,
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
