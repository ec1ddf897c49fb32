"""GA-1's energy and area from the counts its timing already makes.

What each instruction moves, by the chapter's instruction set (T x T words a tile):
  load   DMA: one tile from DRAM (T^2 DRAM reads) into a slot (T^2 scratchpad writes), one set-up
  store  DMA: one slot (T^2 scratchpad reads) to DRAM (T^2 DRAM writes), one set-up
  zero   vector unit: one slot written (T^2 scratchpad writes)
  mxu    matrix unit: c += a @ b, T^3 MACs; reads slots a, b and c (3 T^2 words), writes c (T^2)
  other vector instructions: T^2 lane operations (a row reduction T (T - 1)), by kind (add,
         multiply, divide, special function; a broadcast, transpose or mask moves words only),
         reading their source slots and writing their destination (T^2 words each)
The scratchpad is `slots` x T^2 words, so its energy per word is the technology's at that size.
Every GA-1 word is one word of the technology's word_bits (the chapter has one kind of word).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from simcore.energy.cost import Category, Cost, Item, area_mm2
from simcore.energy.technology import Technology
from simcore.ga1.machine import Machine
from simcore.ga1.program import (
    EXP,
    LOAD,
    MXU,
    NONE,
    OP,
    ROWRED,
    S2,
    SFU,
    STORE,
    SUB,
    VOP,
    VOP_FUNCS,
    VSCALE,
    ZERO,
    Program,
)
from simcore.ga1.timing import VECTOR_OPCODES, VPU, Timing, vector_duration


class CountError(ValueError):
    """Counts that cannot come from a run (negative, or not whole)."""


def _check_counts(owner: object, names: tuple[str, ...]) -> None:
    for name in names:
        value = getattr(owner, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CountError(f"{name} must be a non-negative integer, got {value!r}")


@dataclass(frozen=True)
class VectorWork:
    """The vector unit's instructions beyond zero, by kind of arithmetic (each works on a tile
    of T^2 words; a row reduction takes T (T - 1) steps), and the scratchpad tiles they read and
    write. Broadcasts, transposes and masks move words only."""

    adds: int = 0  # add, subtract, max, relu, negate
    reductions: int = 0  # rowred
    muls: int = 0  # multiply, scale
    divs: int = 0
    special: int = 0  # exp and the sfu's functions
    tile_reads: int = 0
    tile_writes: int = 0

    def __post_init__(self) -> None:
        _check_counts(self, tuple(f.name for f in dataclasses.fields(self)))


@dataclass(frozen=True)
class Ga1Counts:
    """What one GA-1 run did: cycles and instructions by kind. `other_vector` counts vector
    instructions other than zero; `vector` is their work (None: not known, not costed)."""

    cycles: int
    loads: int
    stores: int
    products: int
    zeros: int
    other_vector: int = 0
    vector: VectorWork | None = None

    def __post_init__(self) -> None:
        _check_counts(self, ("cycles", "loads", "stores", "products", "zeros", "other_vector"))

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


# An instruction's kind: (opcode, function) with function NONE for opcodes that have none.
Kind = tuple[int, int]


def instruction_kinds(code: np.ndarray) -> dict[Kind, int]:
    """How many instructions of each kind (opcode, function; a unary vop's function is kept
    apart from a binary one's by its second slot) a program's rows hold."""
    if not len(code):
        return {}
    function = np.where(np.isin(code[:, OP], (VOP, ROWRED, SFU)), code[:, SUB], NONE)
    unary = (code[:, OP] == VOP) & (code[:, S2] == NONE)
    keys, counts = np.unique(
        np.stack([code[:, OP], function, unary.astype(np.int64)], axis=1),
        axis=0,
        return_counts=True,
    )
    found: dict[Kind, int] = {}
    for (op, sub, one), count in zip(keys.tolist(), counts.tolist()):
        kind = (op, sub if not one else -2 - sub)  # unary vops: -2 - function
        found[kind] = found.get(kind, 0) + count
    return found


def vector_work(kinds: dict[Kind, int]) -> VectorWork:
    """The vector work of instructions counted by kind (instruction_kinds)."""
    work = dict.fromkeys(("adds", "reductions", "muls", "divs", "special"), 0)
    reads = writes = 0
    for (op, sub), count in kinds.items():
        if op not in VECTOR_OPCODES or op == ZERO:
            continue
        unary = op == VOP and sub <= -2
        func = VOP_FUNCS[-2 - sub if unary else sub] if op == VOP else ""
        reads += count * (2 if op == VOP and not unary else 1)
        writes += count
        if op == ROWRED:
            work["reductions"] += count
        elif op in (EXP, SFU):
            work["special"] += count
        elif op == VSCALE or func == "mul":
            work["muls"] += count
        elif func == "div":
            work["divs"] += count
        elif op == VOP:
            work["adds"] += count
    return VectorWork(**work, tile_reads=reads, tile_writes=writes)


def ga1_counts_of_kinds(timing: Timing, kinds: dict[Kind, int]) -> Ga1Counts:
    """Exact counts from a Timing and the instructions counted by kind."""

    def total(opcode: int) -> int:
        return sum(count for (op, _), count in kinds.items() if op == opcode)

    other = sum(kinds.values()) - total(LOAD) - total(STORE) - total(ZERO) - total(MXU)
    work = vector_work(kinds) if other else None
    return Ga1Counts(
        int(timing.cycles), total(LOAD), total(STORE), total(MXU), total(ZERO), other, work
    )


def ga1_counts_of_program(timing: Timing, program: Program) -> Ga1Counts:
    """Exact counts of any program: the instructions by kind, the cycles from its Timing."""
    return ga1_counts_of_kinds(timing, instruction_kinds(program.code))


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
    categories: tuple[Category, ...] = (
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
    if counts.vector is not None:
        categories, not_counted = _with_vector(
            categories, counts.vector, machine, tech, read, write
        )
    elif counts.other_vector:
        not_counted = (f"{counts.other_vector} vector instructions other than zero", *_NOT_COUNTED)
    return Cost("ga1", tech.name, macs, counts.cycles, categories, area, not_counted)


def _with_vector(
    categories: tuple[Category, ...],
    work: VectorWork,
    machine: Machine,
    tech: Technology,
    read: float,
    write: float,
) -> tuple[tuple[Category, ...], tuple[str, ...]]:
    """The categories with the vector unit's lane operations and scratchpad accesses added."""
    T = machine.T
    words = T * T
    moves = (
        Item("scratchpad reads: vector unit", work.tile_reads * words, read),
        Item("scratchpad writes: vector unit", work.tile_writes * words, write),
    )
    each = (tech.vector_add_pj, tech.vector_mul_pj, tech.vector_div_pj, tech.sfu_pj)
    lanes: tuple[Item, ...] = ()
    not_counted: tuple[str, ...] = _NOT_COUNTED[1:]
    if all(e is not None for e in each):
        add, mul, div, special = (float(e) for e in each)  # type: ignore[arg-type]
        lanes = (
            Item("vector adds (T^2 per instruction)", work.adds * words, add),
            Item(
                "vector reduction steps (T (T - 1) per rowred)", work.reductions * T * (T - 1), add
            ),
            Item("vector multiplies (T^2 per instruction)", work.muls * words, mul),
            Item("vector divides (T^2 per instruction)", work.divs * words, div),
            Item(
                "special functions: exp, sfu (T^2 per instruction)", work.special * words, special
            ),
        )
    else:
        not_counted = (
            "the vector unit's arithmetic (the table has no vector_*_pj, sfu_pj)",
            *not_counted,
        )
    extended = []
    for category in categories:
        if category.name == "compute":
            category = category._replace(items=category.items + lanes)
        elif category.name == "on_chip":
            category = category._replace(items=category.items + moves)
        extended.append(category)
    return tuple(extended), not_counted


def ga1_cost_of_timing(machine: Machine, timing: Timing, tech: Technology) -> Cost:
    """ga1_cost over a matrix-product program's Timing (what GA1Family.evaluate holds)."""
    return ga1_cost(machine, ga1_counts(timing, machine), tech)
