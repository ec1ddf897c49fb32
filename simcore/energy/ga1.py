"""GA-1's energy and area from the counts its timing already makes.

What each instruction moves, by the chapter's instruction set (T x T words a tile):
  load   DMA: one tile from DRAM (T^2 DRAM reads) into a slot (T^2 scratchpad writes), one set-up
  store  DMA: one slot (T^2 scratchpad reads) to DRAM (T^2 DRAM writes), one set-up
  zero   vector unit: one slot written (T^2 scratchpad writes)
  mxu    matrix unit: c += a @ b, T^3 MACs; reads slots a, b and c (3 T^2 words), writes c (T^2)
The scratchpad is `slots` x T^2 words, so its energy per word is the technology's at that size.
Every GA-1 word is one word of the technology's word_bits (the chapter has one kind of word).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.energy.cost import Category, Cost, Item, area_mm2
from simcore.energy.technology import Technology
from simcore.ga1.machine import Machine
from simcore.ga1.program import LOAD, MXU, OP, OPCODE_NAMES, STORE, ZERO, Program
from simcore.ga1.timing import VPU, Timing, vector_duration


class CountError(ValueError):
    """Counts that cannot come from a run (negative, or not whole)."""


@dataclass(frozen=True)
class Ga1Counts:
    """What one GA-1 run did: cycles and instructions by kind. `other_vector` counts vector
    instructions other than zero, which are not costed."""

    cycles: int
    loads: int
    stores: int
    products: int
    zeros: int
    other_vector: int = 0

    def __post_init__(self) -> None:
        for name in ("cycles", "loads", "stores", "products", "zeros", "other_vector"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise CountError(f"{name} must be a non-negative integer, got {value!r}")

    @property
    def transfers(self) -> int:
        return self.loads + self.stores


def ga1_counts(timing: Timing, machine: Machine) -> Ga1Counts:
    """The counts of a timed matrix-product program (load, store, zero and mxu only: every
    matrix-product family's), from its Timing. Timing has no zero count, but zero is the only
    vector instruction of such a program and takes vector_duration(ZERO) cycles, so the vector
    unit's busy time divided by that is the number of zeros. For a program with other vector
    instructions that division is not their count: use ga1_counts_of_program."""
    zero_cycles = vector_duration(machine, ZERO)
    return Ga1Counts(
        int(timing.cycles),
        int(timing.loads),
        int(timing.stores),
        int(timing.products),
        int(timing.busy[VPU]) // zero_cycles,
    )


def ga1_counts_of_program(timing: Timing, program: Program) -> Ga1Counts:
    """Exact counts of any program: the instructions by opcode, the cycles from its Timing."""
    ops = (
        np.bincount(program.code[:, OP], minlength=len(OPCODE_NAMES))
        if len(program)
        else np.zeros(10, int)
    )
    other = int(ops.sum() - ops[LOAD] - ops[STORE] - ops[ZERO] - ops[MXU])
    return Ga1Counts(
        int(timing.cycles), int(ops[LOAD]), int(ops[STORE]), int(ops[MXU]), int(ops[ZERO]), other
    )


def scratchpad_kib(machine: Machine, tech: Technology) -> float:
    return machine.scratchpad_words * tech.word_bits / 8 / 1024


def ga1_area(machine: Machine, tech: Technology) -> tuple[Item, ...]:
    """The matrix unit's T x T MACs, the scratchpad, the DMA's lanes (um2 each)."""
    return (
        Item("matrix unit PEs (T x T)", machine.T * machine.T, tech.pe_um2),
        Item(
            f"scratchpad KiB ({machine.slots} slots x {machine.tile_words} words)",
            scratchpad_kib(machine, tech),
            tech.sram_um2_per_kib,
        ),
        Item("DMA lanes (dma_words_per_cycle)", machine.dma_words_per_cycle, tech.dma_lane_um2),
    )


def ga1_area_mm2(machine: Machine, tech: Technology) -> float:
    """The machine's area in mm2: it depends on the machine alone, not on the schedule."""
    return area_mm2(ga1_area(machine, tech))


# What depends on the machine and the technology only, kept for the last few pairs by identity
# (hashing a Technology costs more than costing a run); the objects are kept, so an id is theirs.
_FIXED: dict[tuple[int, int], tuple[Machine, Technology, float, float, tuple[Item, ...]]] = {}
_REGISTER = Category(
    "register", (), False, "GA-1 does not model the matrix unit's internal registers"
)
_NOT_COUNTED = (
    "the vector unit's arithmetic (its zero writes are counted)",
    "the instruction queues",
)


def _fixed(machine: Machine, tech: Technology) -> tuple[float, float, tuple[Item, ...]]:
    kept = _FIXED.get((id(machine), id(tech)))
    if kept is None or kept[0] is not machine or kept[1] is not tech:
        if len(_FIXED) >= 64:
            _FIXED.clear()
        kib = scratchpad_kib(machine, tech)
        kept = (
            machine,
            tech,
            tech.sram_read_pj(kib),
            tech.sram_write_pj(kib),
            ga1_area(machine, tech),
        )
        _FIXED[(id(machine), id(tech))] = kept
    return kept[2], kept[3], kept[4]


def ga1_cost(machine: Machine, counts: Ga1Counts, tech: Technology) -> Cost:
    """Energy and area of one GA-1 run from its counts."""
    read, write, area = _fixed(machine, tech)
    words = machine.T * machine.T
    loads, stores, products = counts.loads * words, counts.stores * words, counts.products * words
    macs = products * machine.T
    categories = (
        Category("compute", (Item("MACs (T^3 per product)", macs, tech.mac_pj),)),
        _REGISTER,
        Category(
            "on_chip",
            (
                Item("scratchpad writes: loads", loads, write),
                Item("scratchpad reads: stores", stores, read),
                Item("scratchpad writes: zeros", counts.zeros * words, write),
                Item("scratchpad reads: products (a, b, c)", 3 * products, read),
                Item("scratchpad writes: products (c)", products, write),
            ),
        ),
        Category(
            "off_chip",
            (
                Item("DRAM reads: loads", loads, tech.dram_read_pj),
                Item("DRAM writes: stores", stores, tech.dram_write_pj),
                Item("DMA set-ups", counts.loads + counts.stores, tech.dma_setup_pj),
            ),
        ),
    )
    not_counted: tuple[str, ...] = _NOT_COUNTED
    if counts.other_vector:
        not_counted = (f"{counts.other_vector} vector instructions other than zero", *_NOT_COUNTED)
    return Cost("ga1", tech.name, macs, counts.cycles, categories, area, not_counted)


def ga1_cost_of_timing(machine: Machine, timing: Timing, tech: Technology) -> Cost:
    """ga1_cost over a matrix-product program's Timing (what GA1Family.evaluate holds)."""
    return ga1_cost(machine, ga1_counts(timing, machine), tech)
