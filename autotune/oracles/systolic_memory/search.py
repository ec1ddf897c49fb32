"""The memory of an architecture, searched with its block schedules (`--search-machine`): the
capacity of each buffer and of the accumulator store, and the DRAM link's bandwidth, each among
a few values around the architecture's own. The area budget (graded before a candidate runs)
is what makes larger buffers and a faster link a trade-off.

  <store>_kib      the store's capacity in KiB: the architecture's times 1/8, 1/4, 1/2, 1 or 2
                   (those that hold one array tile and are whole KiB)
  dram_mb_per_s    the link's bandwidth at the clock in MB/s: the architecture's times 1, 2 or 4
                   (those that are whole MB/s)

A point names its values; `apply` writes them into the architecture's description as overrides
and reads it again, so a searched machine is recorded like any other (its `arch_spec`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from autotune.oracles.systolic_memory.machine import ArchMachine, from_record, spec_of
from search_spaces.domains import Choice, Param, Point
from simcore.systolic.machine import ArchError, SystolicMachine

CAPACITY_SCALES = (Fraction(1, 8), Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(2))
BANDWIDTH_SCALES = (1, 2, 4)
DRAM = "dram_mb_per_s"


def stores(machine: SystolicMachine) -> list[tuple[str, str, Fraction]]:
    """(parameter, description key, KiB) of every on-chip store."""
    found = [
        (
            f"{s.name}_kib",
            f"buffers.{s.name}.capacity",
            Fraction(s.capacity * machine.word_bits, 8192),
        )
        for s in machine.memory.stores
    ]
    acc = machine.memory.accumulator
    if acc is not None:
        kib = Fraction(acc.capacity * machine.accumulator_bits, 8192)
        found.append(("accumulator_kib", "accumulator.capacity", kib))
    return found


def mb_per_s(machine: SystolicMachine) -> Fraction:
    return Fraction(machine.dram_bytes_per_second) / 10**6


def whole(value: Fraction) -> int | None:
    return int(value) if value.denominator == 1 else None


def record_of(machine: SystolicMachine) -> dict[str, int]:
    """The searchable values of a machine (those that are whole), as its record carries them."""
    found: dict[str, int] = {}
    for name, _key, kib in stores(machine):
        value = whole(kib)
        if value is not None:
            found[name] = value
    bandwidth = whole(mb_per_s(machine))
    if bandwidth is not None:
        found[DRAM] = bandwidth
    return found


def _changed(base: ArchMachine, overrides: dict[str, str]) -> ArchMachine:
    from simcore.systolic.archs import apply_overrides

    data = apply_overrides(json.loads(base.spec), [f"{k}={v}" for k, v in overrides.items()])
    return from_record({"arch": base.arch, "arch_spec": spec_of(data)})


@dataclass(frozen=True)
class MemorySpace:
    """Which stores' capacities and whether the link's bandwidth vary, among which values."""

    ranges: tuple[tuple[str, tuple[int, ...]], ...]
    limit: ClassVar[str] = "memory"  # nothing beyond the area budget: always 0

    @staticmethod
    def create(base: ArchMachine, given: str = "") -> MemorySpace:
        ranges = dict(default_ranges(base))
        for name, values in parse_ranges(given).items():
            if name not in ranges:
                known = ", ".join(ranges)
                raise ValueError(f"machine range {name}: not a searchable key (known: {known})")
            space = MemorySpace(((name, values),))
            for value in values:
                space.apply(base, {name: value})  # each value makes a machine, or ArchError
            ranges[name] = values
        return MemorySpace(tuple(ranges.items()))

    def params(self) -> tuple[Param, ...]:
        return tuple(
            Param(name, Choice(values), f"machine parameter {name}") for name, values in self.ranges
        )

    def apply(self, base: ArchMachine, point: Point) -> ArchMachine:
        keys = {name: key for name, key, _kib in stores(base.system)}
        own = record_of(base.system)
        overrides = {}
        for name, _values in self.ranges:
            if name not in point or point[name] == own.get(name):
                continue  # the architecture's own value, as its file says it
            value = point[name]
            if name == DRAM:
                overrides["dram.bandwidth"] = f"{value} MB/s"
            else:
                overrides[keys[name]] = f"{value} KiB"
        return _changed(base, overrides) if overrides else base

    def violation(self, machine: ArchMachine) -> float:
        return 0.0

    def seed_point(self, base: ArchMachine) -> Point:
        """The base machine's values, each clipped to the nearest of its range."""
        own = record_of(base.system)
        return {
            name: min(values, key=lambda v: (abs(v - own.get(name, v)), v))
            for name, values in self.ranges
        }

    def corners(self, base: ArchMachine) -> list[ArchMachine]:
        return [
            self.apply(base, {name: pick(values) for name, values in self.ranges})
            for pick in (min, max)
        ]

    def reachable(self, base: ArchMachine) -> list[ArchMachine]:
        return self.corners(base)[1:]


def default_ranges(base: ArchMachine) -> list[tuple[str, tuple[int, ...]]]:
    """Each store's capacity scaled by CAPACITY_SCALES where it still holds one array tile, and
    the bandwidth by BANDWIDTH_SCALES; values that do not print exactly are left out."""
    found = []
    for name, key, kib in stores(base.system):
        values = []
        for scale in CAPACITY_SCALES:
            value = whole(kib * scale)
            if value is None:
                continue
            try:
                _changed(base, {key: f"{value} KiB"})
            except ArchError:
                continue  # too small for one tile
            values.append(value)
        if values:
            found.append((name, tuple(values)))
    rates = [whole(mb_per_s(base.system) * s) for s in BANDWIDTH_SCALES]
    kept = tuple(r for r in rates if r is not None)
    if kept:
        found.append((DRAM, kept))
    return found


def _integer(text: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", text.strip(), re.ASCII):
        raise ValueError(text)
    return int(text)


def parse_ranges(text: str) -> dict[str, tuple[int, ...]]:
    """'unified_kib=4096|8192,dram_mb_per_s=34000|68000' -> the values of each key."""
    found: dict[str, tuple[int, ...]] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not raw.strip():
            raise ValueError(f"machine range {item!r}: expected KEY=A|B|C")
        if key in found:
            raise ValueError(f"machine range {key} is given twice")
        try:
            values = tuple(_integer(v) for v in raw.split("|"))
        except ValueError:
            raise ValueError(f"machine range {item!r}: expected whole numbers A|B|C") from None
        if any(v <= 0 for v in values):
            raise ValueError(f"machine range {item!r}: expected positive numbers")
        found[key] = values
    return found
