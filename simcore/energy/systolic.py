"""The systolic array's energy and area from the counts its model makes.

Buffers (SRAM): the oracle's Traffic (A and B reads, partial-sum writes and read-backs, C writes)
and, with an HBM link, each stationary tile written into its buffer as it arrives (ws, is) or
each result tile read from its buffer as it leaves (os). Partial sums are accumulator words.
Off chip: the HBM link's words (`hbm_words`), one DMA set-up per tile moved over it.

Registers, per PE, from the dataflow (every count follows from the design and the shape):
  stationary  ws, is: each stationary word is written into its PE and read out once to the
              multiplier, which it then drives for the whole stream (a held value is not read
              again); with shadow registers it is written and read twice (shadow, then working)
  accumulator ws, is: each MAC reads the partial sum of the PE before it and writes its own;
              os: each MAC reads and writes the PE's accumulator, each result is read out once
              (and, with shadow registers, written into and read from the shadow register)
  forward     each streamed operand value is latched in every PE that multiplies it and read
              there: once per MAC for ws and is (one operand streams), twice for os (both do)
Padding zeros of padded edge tiles are made in the array and not costed.
These are the physical counts; systolic_cost charges them by an accounting (PHYSICAL by default,
or ZIGZAG's conventions, which add tagged line items: simcore.energy.accountings).

The buffers are costed as one SRAM of their total capacity (`buffer_words`): the streamed
operand and the results whole (partial sums at accumulator width), and the stationary matrix
whole, or `hbm.buffers` tiles of the mapped sub-array when it comes over the HBM link.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simcore.energy.accountings import PHYSICAL, Accounting
from simcore.energy.cost import Category, Cost, Item, area_mm2
from simcore.energy.technology import Technology
from simcore.shape import Shape
from simcore.systolic.model import (
    SystolicDesign,
    Traffic,
    design_traffic,
    hbm_words,
    roles,
    tile_count,
)


@dataclass(frozen=True)
class SystolicCounts:
    """Every action of one GEMM on a systolic design (words, or register accesses)."""

    dataflow: str
    macs: int
    cycles: int
    traffic: Traffic
    fetch_writes: int
    writeback_reads: int
    hbm_reads: int
    hbm_writes: int
    transfers: int
    stationary_reads: int
    stationary_writes: int
    accumulator_reads: int
    accumulator_writes: int
    forward_reads: int
    forward_writes: int
    buffer_words: float


def buffer_words(design: SystolicDesign, shape: Shape, accumulator_words: float) -> float:
    """On-chip buffer capacity in words: see the module docstring."""
    m, k, n = shape.m, shape.k, shape.n
    tile = design.used.rows * design.used.cols
    staged = None if design.hbm.on_chip else design.hbm.buffers * tile
    if design.dataflow == "ws":
        return m * k + (k * n if staged is None else staged) + m * n * accumulator_words
    if design.dataflow == "is":
        return k * n + (m * k if staged is None else staged) + m * n * accumulator_words
    return m * k + k * n + (m * n if staged is None else staged)


def systolic_counts(
    design: SystolicDesign,
    shape: Shape,
    cycles: int,
    tech: Technology,
    traffic: Traffic | None = None,
) -> SystolicCounts:
    """The counts of one GEMM. `traffic` defaults to the model's formula (design_traffic), which
    the cycle model's moved words are held equal to; pass SystolicResult.traffic to use those."""
    t = design_traffic(design, shape) if traffic is None else traffic
    role = roles(design.dataflow, shape)
    stationary = role.row_dim * role.col_dim
    shadow = design.assumptions.shadow
    link = 0 if design.hbm.on_chip else hbm_words(design, shape)
    transfers = 0 if design.hbm.on_chip else tile_count(design, shape)
    if design.dataflow == "os":
        held = (0, 0)
        acc_reads = t.macs + stationary + (stationary if shadow else 0)
        acc_writes = t.macs + (stationary if shadow else 0)
        forwarded = 2 * t.macs
        fetch, writeback, reads, writes = 0, link, 0, link
    else:
        held = (stationary * (2 if shadow else 1),) * 2
        acc_reads = acc_writes = forwarded = t.macs
        fetch, writeback, reads, writes = link, 0, link, 0
    return SystolicCounts(
        design.dataflow,
        t.macs,
        cycles,
        t,
        fetch,
        writeback,
        reads,
        writes,
        transfers,
        held[0],
        held[1],
        acc_reads,
        acc_writes,
        forwarded,
        forwarded,
        buffer_words(design, shape, tech.accumulator_words),
    )


def buffer_kib(counts: SystolicCounts, tech: Technology) -> float:
    return counts.buffer_words * tech.word_bits / 8 / 1024


def systolic_area(
    design: SystolicDesign, counts: SystolicCounts, tech: Technology
) -> tuple[Item, ...]:
    """The R x C PEs, their shadow registers (results are accumulator words in os), the buffers
    and the HBM link's lanes (um2 each)."""
    return _area_items(design, buffer_kib(counts, tech), tech)


def systolic_area_mm2(design: SystolicDesign, shape: Shape, tech: Technology) -> float:
    """The design's area in mm2 for `shape` (its buffers hold the shape's operands), known
    before the GEMM is timed."""
    kib = buffer_words(design, shape, tech.accumulator_words) * tech.word_bits / 8 / 1024
    return area_mm2(_area_items(design, kib, tech))


def _area_items(design: SystolicDesign, kib: float, tech: Technology) -> tuple[Item, ...]:
    pes = design.array.pes
    items = [Item(f"PEs ({design.array})", pes, tech.pe_um2)]
    if design.assumptions.shadow:
        width = tech.accumulator_words if design.dataflow == "os" else 1.0
        items.append(Item("shadow registers (one per PE)", pes, tech.shadow_register_um2 * width))
    items.append(Item("buffer SRAM KiB", kib, tech.sram_um2_per_kib))
    if not design.hbm.on_chip:
        lanes = math.ceil(float(design.hbm.hbm_words_per_cycle or 0))
        items.append(Item("HBM link lanes (words per cycle)", lanes, tech.dma_lane_um2))
    return tuple(items)


def _register_items(counts: SystolicCounts, tech: Technology) -> tuple[Item, ...]:
    items = []
    if counts.stationary_writes or counts.stationary_reads:
        items += [
            Item(
                "stationary register writes",
                counts.stationary_writes,
                tech.operand_register_write_pj,
            ),
            Item(
                "stationary register reads", counts.stationary_reads, tech.operand_register_read_pj
            ),
        ]
    items += [
        Item(
            "accumulator register writes",
            counts.accumulator_writes,
            tech.accumulator_register_write_pj,
        ),
        Item(
            "accumulator register reads",
            counts.accumulator_reads,
            tech.accumulator_register_read_pj,
        ),
        Item("forwarding register writes", counts.forward_writes, tech.forward_register_write_pj),
        Item("forwarding register reads", counts.forward_reads, tech.forward_register_read_pj),
    ]
    return tuple(items)


def _buffer_items(counts: SystolicCounts, tech: Technology) -> tuple[Item, ...]:
    kib = buffer_kib(counts, tech)
    read, write, wide = tech.sram_read_pj(kib), tech.sram_write_pj(kib), tech.accumulator_words
    t = counts.traffic
    items = [
        Item("A reads", t.a_reads, read),
        Item("B reads", t.b_reads, read),
        Item("partial-sum writes (accumulator words)", t.psum_writes, write * wide),
        Item("partial-sum read-backs (accumulator words)", t.psum_readbacks, read * wide),
        Item("C writes", t.c_writes, write),
    ]
    if counts.fetch_writes:
        items.append(Item("stationary tiles written from HBM", counts.fetch_writes, write))
    if counts.writeback_reads:
        items.append(Item("result tiles read for HBM", counts.writeback_reads, read))
    return tuple(items)


def convention_items(
    counts: SystolicCounts, tech: Technology, accounting: Accounting
) -> tuple[tuple[Item, ...], tuple[Item, ...]]:
    """The (register, on-chip) items that `accounting` charges beyond the physical one for the
    same counts (simcore.energy.accountings); none for os, which reduces inside each PE."""
    if counts.dataflow == "os":
        return (), ()
    tag, macs, t = accounting.name, counts.macs, counts.traffic
    read_back = t.psum_readbacks > 0
    register, on_chip = [], []
    if accounting.transfer_read:
        register.append(
            Item(
                f"output register reads to pass sums up ({tag})",
                macs,
                tech.accumulator_register_read_pj,
            )
        )
    if accounting.readback_register_write and read_back:
        register.append(
            Item(
                f"output register writes from read-backs ({tag})",
                macs,
                tech.accumulator_register_write_pj,
            )
        )
    kib = buffer_kib(counts, tech)
    wide = tech.accumulator_words
    if accounting.first_readback_charged and read_back:
        on_chip.append(
            Item(
                f"first-pass partial-sum read-backs ({tag})",
                t.c_writes,
                tech.sram_read_pj(kib) * wide,
            )
        )
    if accounting.finals_at_accumulator_width and read_back:
        on_chip.append(
            Item(
                f"C writes' extra partial-sum width ({tag})",
                t.c_writes,
                tech.sram_write_pj(kib) * (wide - 1),
            )
        )
    return tuple(register), tuple(on_chip)


def systolic_cost(
    design: SystolicDesign,
    counts: SystolicCounts,
    tech: Technology,
    accounting: Accounting = PHYSICAL,
) -> Cost:
    """Energy and area of one GEMM on `design` from its counts, charged by `accounting`
    (PHYSICAL, or ZIGZAG's conventions: simcore.energy.accountings)."""
    register, on_chip = convention_items(counts, tech, accounting)
    off_chip = []
    if counts.hbm_reads:
        off_chip.append(Item("HBM reads (stationary tiles)", counts.hbm_reads, tech.dram_read_pj))
    if counts.hbm_writes:
        off_chip.append(Item("HBM writes (result tiles)", counts.hbm_writes, tech.dram_write_pj))
    if counts.transfers:
        off_chip.append(
            Item("DMA set-ups (one per tile over HBM)", counts.transfers, tech.dma_setup_pj)
        )
    categories = (
        Category("compute", (Item("MACs", counts.macs, tech.mac_pj),)),
        Category("register", _register_items(counts, tech) + register),
        Category("on_chip", _buffer_items(counts, tech) + on_chip),
        Category("off_chip", tuple(off_chip)),
    )
    kept = (
        "A and B"
        if design.dataflow == "os"
        else ("A and C" if design.dataflow == "ws" else "B and C")
    )
    if design.hbm.on_chip:
        kept = "A, B and C"
    not_counted = (
        f"off-chip traffic of {kept}: the model keeps them in the on-chip buffers",
        "the stationary words' shifts down the array while loading (interconnect)",
    )
    return Cost(
        "systolic",
        tech.name,
        counts.macs,
        counts.cycles,
        categories,
        systolic_area(design, counts, tech),
        not_counted,
    )


def systolic_cost_of(
    design: SystolicDesign,
    shape: Shape,
    tech: Technology,
    cycles: int | None = None,
    accounting: Accounting = PHYSICAL,
) -> Cost:
    """systolic_cost of a GEMM, its cycles from the closed form unless given."""
    if cycles is None:
        from simcore.systolic.closed_form import cycles as closed_form

        cycles = closed_form(design, shape)
    return systolic_cost(design, systolic_counts(design, shape, cycles, tech), tech, accounting)
