"""Energy and area of a block schedule on a machine with its memory (`MemoryRun`).

Every line is a count of the run times an energy of the table. Per word of the machine's
`word_bits` the table's per-word energies are scaled by word_bits / the table's word_bits (an
access costs per bit). Each store is costed as an SRAM of its own capacity (the table's
capacity scaling), the accumulator store too, at accumulator width. The DRAM link is costed with
the table's DRAM line, or its HBM line for an HBM machine, per byte moved, plus one set-up per
request. Registers are the array's, summed over the blocks (`systolic_counts` of each block).
"""

from __future__ import annotations

import math
from fractions import Fraction

from simcore.energy.cost import Category, Cost, Item
from simcore.energy.systolic import _register_items, systolic_counts
from simcore.energy.technology import Technology, TechnologyError
from simcore.shape import Shape
from simcore.systolic.blocked.evaluate import MemoryRun
from simcore.systolic.machine import SystolicMachine


def _kib(words: int, bits: int) -> float:
    return words * bits / 8 / 1024


def store_sizes(machine: SystolicMachine) -> list[tuple[str, float, int]]:
    """(name, KiB, bits per word) of every on-chip store."""
    out = [
        (s.name, _kib(s.capacity, machine.word_bits), machine.word_bits)
        for s in machine.memory.stores
    ]
    acc = machine.memory.accumulator
    if acc is not None:
        out.append(
            ("accumulator", _kib(acc.capacity, machine.accumulator_bits), machine.accumulator_bits)
        )
    return out


def _dram_line(machine: SystolicMachine, tech: Technology) -> tuple[float, float, str]:
    if machine.memory.dram_kind == "hbm":
        if tech.hbm_read_pj is None or tech.hbm_write_pj is None:
            raise TechnologyError(
                f"energy.hbm_read_pj: missing key (machine {machine.name}'s DRAM link is HBM)"
            )
        return tech.hbm_read_pj, tech.hbm_write_pj, "HBM"
    return tech.dram_read_pj, tech.dram_write_pj, "DRAM"


def _register_counts(run: MemoryRun, tech: Technology):  # type: ignore[no-untyped-def]
    """The array's register accesses summed over the blocks (one SystolicCounts)."""
    total = None
    for (bm, bk, bn), count in run.counts.block_shapes:
        c = systolic_counts(run.design, Shape(bm, bk, bn), 0, tech)
        scaled = {f: getattr(c, f) * count for f in _REGISTER_FIELDS}
        total = scaled if total is None else {f: total[f] + scaled[f] for f in _REGISTER_FIELDS}
    assert total is not None
    return c.__class__(**{**c.__dict__, **total})


_REGISTER_FIELDS = (
    "stationary_reads",
    "stationary_writes",
    "accumulator_reads",
    "accumulator_writes",
    "forward_reads",
    "forward_writes",
)


def memory_cost(run: MemoryRun, tech: Technology) -> Cost:
    machine = run.machine
    scale = machine.word_bits / tech.word_bits
    on_chip = []
    for name, kib, bits in store_sizes(machine):
        counts = run.counts.store(name)
        per = bits / tech.word_bits
        on_chip.append(
            Item(f"{name} reads ({kib:g} KiB)", float(counts.reads), tech.sram_read_pj(kib) * per)
        )
        on_chip.append(
            Item(
                f"{name} writes ({kib:g} KiB)", float(counts.writes), tech.sram_write_pj(kib) * per
            )
        )
    read_pj, write_pj, line = _dram_line(machine, tech)
    per_byte = 8 / tech.word_bits
    by_bytes = run.counts.dram.bytes(machine)
    dram = run.counts.dram
    off_chip = [
        Item(f"{line} reads of A (bytes)", float(by_bytes["a_reads"]), read_pj * per_byte),
        Item(f"{line} reads of B (bytes)", float(by_bytes["b_reads"]), read_pj * per_byte),
        Item(
            f"{line} reads of partial sums (bytes)", float(by_bytes["c_reads"]), read_pj * per_byte
        ),
        Item(
            f"{line} writes of C and partial sums (bytes)",
            float(by_bytes["c_writes"]),
            write_pj * per_byte,
        ),
        Item(f"{line} requests (set-ups)", dram.requests, tech.dma_setup_pj),
    ]
    registers = _register_items(_register_counts(run, tech), tech)
    categories = (
        Category("compute", (Item("MACs", run.shape.macs, tech.mac_pj * scale),)),
        Category("register", registers),
        Category("on_chip", tuple(on_chip)),
        Category("off_chip", tuple(off_chip)),
    )
    return Cost(
        "systolic+memory",
        tech.name,
        run.shape.macs,
        run.cycles,
        categories,
        memory_area(machine, run.design.assumptions.shadow, tech),
    )


def memory_area(machine: SystolicMachine, shadow: bool, tech: Technology) -> tuple[Item, ...]:
    """The PEs, their shadow registers, every store and the DRAM link's lanes (um2 each)."""
    pes = machine.array.pes
    items = [Item(f"PEs ({machine.array})", pes, tech.pe_um2)]
    if shadow:
        width = machine.accumulator_words if machine.dataflow == "os" else Fraction(1)
        items.append(
            Item("shadow registers (one per PE)", pes, tech.shadow_register_um2 * float(width))
        )
    for name, kib, _bits in store_sizes(machine):
        items.append(Item(f"{name} SRAM KiB", kib, tech.sram_um2_per_kib))
    lanes = math.ceil(machine.memory.dram.words_per_cycle)
    items.append(Item("DRAM link lanes (words per cycle)", lanes, tech.dma_lane_um2))
    return tuple(items)
