"""What a fused group's event schedule moves and computes, counted from its tree (each distinct
operation once, times how often it runs; never the expanded schedule).

* DRAM: elements, link words and requests read and written, per tensor (a tensor's partial sums
  are "NAME.partial");
* each on-chip store's reads and writes in its own words: a load writes its block, a drain
  reads it; a block on the array reads its A and B words and writes and reads back partial
  sums as the array model counts them (`model.traffic` of the block), and one that adds to sums
  already there reads them first; the vector unit reads its blocks and writes its result;
* the array's multiply-adds, busy cycles and block shapes; the vector unit's lane operations by
  kind and busy cycles.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from simcore.systolic.fused.ops import ARRAY, LINK, Op, Tree, weighted
from simcore.systolic.fused.slots import Slots
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign, traffic
from simcore.systolic.vector_unit import lane_ops


@dataclass(frozen=True)
class TensorTraffic:
    reads: int  # elements
    writes: int
    read_words: Fraction  # link words
    write_words: Fraction
    requests: int


@dataclass(frozen=True)
class FusedCounts:
    dram: dict[str, TensorTraffic]
    store_reads: dict[str, Fraction]
    store_writes: dict[str, Fraction]
    macs: int
    array_cycles: int
    block_shapes: tuple[tuple[tuple[int, int, int], int], ...]
    lane_ops: dict[str, int]
    vector_cycles: int

    @property
    def link_words(self) -> Fraction:
        return sum((t.read_words + t.write_words for t in self.dram.values()), Fraction(0))

    @property
    def requests(self) -> int:
        return sum(t.requests for t in self.dram.values())

    def dram_bytes(self, machine: SystolicMachine) -> Fraction:
        return self.link_words * machine.word_bits / 8

    def dram_elements(self) -> int:
        return sum(t.reads + t.writes for t in self.dram.values())

    def dram_writes(self, machine: SystolicMachine) -> Fraction:
        """Bytes written to DRAM."""
        words = sum((t.write_words for t in self.dram.values()), Fraction(0))
        return words * machine.word_bits / 8


@dataclass
class _Tally:
    reads: int = 0
    writes: int = 0
    read_words: Fraction = Fraction(0)
    write_words: Fraction = Fraction(0)
    requests: int = 0


def _add(table: dict[str, Fraction], key: str, value: Fraction) -> None:
    table[key] = table.get(key, Fraction(0)) + value


def fused_counts(tree: Tree, slots: Slots, design: SystolicDesign) -> FusedCounts:
    dram: dict[str, _Tally] = {}
    reads: dict[str, Fraction] = {}
    writes: dict[str, Fraction] = {}
    shapes: Counter[tuple[int, int, int]] = Counter()
    lanes: Counter[str] = Counter()
    macs = array_cycles = vector_cycles = 0
    for op, times in weighted(tree):
        if op.unit == LINK:
            _link(op, times, slots, dram, reads, writes)
        elif op.unit == ARRAY:
            m, (k, n) = op.rows[1], op.cols
            shapes[(m, k, n)] += times
            macs += times * op.elements
            array_cycles += times * op.duration
            _array(op, times, slots, design, reads, writes)
        else:
            vector_cycles += times * op.duration
            elements = op.elements
            for kind, count in lane_ops(tuple(op.tensor.split("+")), elements).items():
                lanes[kind] += times * count
            for s in op.reads:  # the block, then a bias (read once) or a residual block
                held = slots.words[s] / slots.wide[s]
                per = elements if s == op.reads[0] else min(Fraction(elements), held)
                _add(reads, slots.stores[s], times * per * slots.wide[s])
            _add(writes, slots.stores[op.writes[0]], times * elements * slots.wide[op.writes[0]])
    tensors = {
        name: TensorTraffic(t.reads, t.writes, t.read_words, t.write_words, t.requests)
        for name, t in dram.items()
    }
    return FusedCounts(
        tensors,
        reads,
        writes,
        macs,
        array_cycles,
        tuple(sorted(shapes.items())),
        dict(lanes),
        vector_cycles,
    )


def _link(
    op: Op,
    times: int,
    slots: Slots,
    dram: dict[str, _Tally],
    reads: dict[str, Fraction],
    writes: dict[str, Fraction],
) -> None:
    tally = dram.setdefault(op.tensor, _Tally())
    into = op.kind in ("load", "back")
    if into:
        tally.reads += times * op.elements
        tally.read_words += times * op.words
    else:
        tally.writes += times * op.elements
        tally.write_words += times * op.words
    tally.requests += times
    slot = op.writes[0] if into else op.reads[0]
    table = writes if into else reads
    _add(table, slots.stores[slot], times * op.elements * slots.wide[slot])


def _array(
    op: Op,
    times: int,
    slots: Slots,
    design: SystolicDesign,
    reads: dict[str, Fraction],
    writes: dict[str, Fraction],
) -> None:
    m, (k, n) = op.rows[1], op.cols
    t = traffic(design.used, m, k, n, design.dataflow)
    a, b = op.reads[0], op.reads[1]
    c = op.writes[0]
    wide = slots.wide[c]
    _add(reads, slots.stores[a], times * Fraction(t.a_reads))
    _add(reads, slots.stores[b], times * Fraction(t.b_reads))
    sums_read = t.psum_readbacks + (m * n if len(op.reads) > 2 else 0)
    _add(reads, slots.stores[c], times * sums_read * wide)
    _add(writes, slots.stores[c], times * (t.psum_writes + t.c_writes) * wide)
