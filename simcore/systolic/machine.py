"""A systolic machine with its memory: the array and its dataflow, the clock, the word widths, the
on-chip buffers (each holding one or more of the operands a, b and c), an accumulator store for
partial sums, the off-chip link (DRAM or HBM) and the vector unit beside the array (lanes, the
special-function path's cycles, its share of the ports of the store holding a).

Units: buffer capacities are in operand words (`word_bits`), the accumulator's in accumulator
words (`accumulator_bits`); widths and the link's bandwidth are in words per cycle of their own
store (the link's in operand words). A partial sum that leaves for DRAM is an accumulator word,
a final output an output word (`output_bits`). `machine_from_dict` reads the file layout
(simcore/systolic/archs/*.toml, docs/memory.md) and `with_overrides` applies KEY=VALUE settings
to it; both check every key and range and fail in one line naming the key (`ArchError`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Mapping

from simcore.memory import Buffer, Link
from simcore.systolic.model import DATAFLOWS, SystolicArray
from simcore.systolic.vector_unit import VectorUnit, default_vector_unit

OPERANDS: tuple[str, ...] = ("a", "b", "c")
OPERAND_NAMES = {"a": "A (ifmap)", "b": "B (filter)", "c": "C (ofmap)"}
DRAM_KINDS: tuple[str, ...] = ("ddr", "lpddr", "hbm")


class ArchError(ValueError):
    """A machine description is malformed or out of range; the message names the key."""


@dataclass(frozen=True)
class Store:
    """An on-chip buffer and the operands it holds (a and b as operand words; c, when no
    accumulator store holds it, as accumulator words of accumulator_bits / word_bits words)."""

    name: str
    holds: tuple[str, ...]
    buffer: Buffer

    @property
    def capacity(self) -> int:
        return self.buffer.capacity


@dataclass(frozen=True)
class MemorySystem:
    """The on-chip stores, the accumulator store (None: c lives in a buffer) and the link."""

    stores: tuple[Store, ...]
    accumulator: Buffer | None
    dram: Link
    dram_kind: str = "ddr"

    def __post_init__(self) -> None:
        names = [s.name for s in self.stores]
        if len(set(names)) != len(names):
            raise ArchError(f"buffers: two buffers are named alike ({_few(names)})")
        for operand in OPERANDS:
            holders = [s.name for s in self.stores if operand in s.holds]
            if operand == "c" and self.accumulator is not None:
                if holders:
                    raise ArchError(f"buffers.{holders[0]}.holds: c lives in the accumulator store")
                continue
            if len(holders) != 1:
                where = "no buffer" if not holders else f"buffers {_few(holders)}"
                raise ArchError(
                    f"buffers: operand {operand} must be held by one buffer, not {where}"
                )
        if self.dram_kind not in DRAM_KINDS:
            raise ArchError(
                f"dram.kind: must be one of {', '.join(DRAM_KINDS)}, got {self.dram_kind!r}"
            )

    def store_of(self, operand: str) -> Store | None:
        """The buffer holding `operand`; None for c held by the accumulator store."""
        for store in self.stores:
            if operand in store.holds:
                return store
        return None


@dataclass(frozen=True)
class SystolicMachine:
    """A systolic array with its memory system and clock."""

    name: str
    array: SystolicArray
    dataflow: str
    clock_hz: Fraction
    memory: MemorySystem
    word_bits: int = 8
    accumulator_bits: int = 32
    output_bits: int = 8
    description: str = ""
    sources: tuple[tuple[str, str], ...] = ()
    assumed: tuple[tuple[str, str], ...] = ()
    arrays: int = 1  # arrays side by side along the columns, each rows x cols / arrays
    vector: VectorUnit | None = None  # None: one lane per array column (`vector_unit`)

    def __post_init__(self) -> None:
        arrays = self.arrays
        if isinstance(arrays, bool) or not isinstance(arrays, int) or arrays < 1:
            raise ArchError(f"array.arrays: expected a whole number from 1, got {arrays!r}")
        if self.array.cols % arrays:
            raise ArchError(
                f"array.arrays: {arrays} arrays do not split the {self.array.cols} columns evenly"
            )
        if self.dataflow not in DATAFLOWS:
            raise ArchError(
                f"array.dataflow: must be one of {', '.join(DATAFLOWS)}, got {self.dataflow!r}"
            )
        for key in ("word_bits", "accumulator_bits", "output_bits"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 64:
                raise ArchError(
                    f"words.{key}: must be a whole number of bits from 1 to 64, got {value!r}"
                )

    def lane_array(self, lanes: int) -> SystolicArray:
        """The array one of `lanes` groups of side-by-side arrays forms (lanes divides arrays)."""
        if (
            isinstance(lanes, bool)
            or not isinstance(lanes, int)
            or lanes < 1
            or self.arrays % lanes
        ):
            raise ValueError(f"lanes must divide the machine's {self.arrays} arrays, got {lanes!r}")
        return SystolicArray(self.array.rows, self.array.cols // lanes)

    def port_share(self, lanes: int) -> "SystolicMachine":
        """The machine as each of `lanes` lanes sees it: every store's port split evenly among
        the lanes (each owns its share of the banks); capacities and the link stay whole."""
        if lanes == 1:
            return self

        def split(buffer: Buffer) -> Buffer:
            return Buffer(buffer.capacity, buffer.read_width / lanes, buffer.write_width / lanes)

        memory = self.memory
        stores = tuple(replace(s, buffer=split(s.buffer)) for s in memory.stores)
        accumulator = None if memory.accumulator is None else split(memory.accumulator)
        return replace(self, memory=replace(memory, stores=stores, accumulator=accumulator))

    @property
    def accumulator_words(self) -> Fraction:
        """Operand words one accumulator word takes in a buffer or on the link."""
        return Fraction(self.accumulator_bits, self.word_bits)

    @property
    def output_words(self) -> Fraction:
        return Fraction(self.output_bits, self.word_bits)

    def bytes_of(self, elements: int, bits: int) -> Fraction:
        return Fraction(elements * bits, 8)

    @property
    def dram_bytes_per_second(self) -> Fraction:
        return self.memory.dram.words_per_cycle * self.word_bits / 8 * self.clock_hz

    @property
    def vector_unit(self) -> VectorUnit:
        """The vector unit beside the array: the file's [vector] table, else one lane per
        array column (`default_vector_unit`) with the whole width of the store holding a."""
        if self.vector is not None:
            return self.vector
        store = self.memory.store_of("a")
        assert store is not None  # a is always held by a buffer
        width = min(store.buffer.read_width, store.buffer.write_width)
        return replace(default_vector_unit(self.array.cols), port_words=width)

    def source(self, key: str) -> str | None:
        return dict(self.sources).get(key)


def machine_from_dict(data: Mapping[str, Any]) -> SystolicMachine:
    """Validate a parsed machine description (the file layout) and build the machine."""
    from simcore.systolic.machine_parse import parse_machine

    return parse_machine(data)


def _few(names: list[str], most: int = 4) -> str:
    """Names for a one-line error: the first `most`, then how many more."""
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown} and {len(names) - most:,} more"
