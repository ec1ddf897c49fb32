"""An on-chip buffer: a capacity in words, a read and a write width in words per cycle, and the
blocks it holds, each single or double buffered (a second slot lets the next block arrive while
the current one is in use)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from simcore.memory.link import exact_rate


@dataclass(frozen=True)
class Residency:
    """A block of `words` held in `slots` slots (1: single, 2: double buffered)."""

    name: str
    words: int | Fraction
    slots: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.slots, bool) or self.slots not in (1, 2):
            raise ValueError(f"{self.name}: buffering must be 1 or 2 slots, got {self.slots!r}")
        if self.words < 0:
            raise ValueError(f"{self.name}: block words must not be negative, got {self.words}")

    @property
    def footprint(self) -> int | Fraction:
        return self.words * self.slots


@dataclass(frozen=True)
class Buffer:
    """Capacity in words; read and write width in words per cycle."""

    capacity: int
    read_width: Fraction
    write_width: Fraction

    def __post_init__(self) -> None:
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int):
            raise ValueError(f"capacity must be a whole number of words, got {self.capacity!r}")
        if self.capacity <= 0:
            raise ValueError(f"capacity must be positive, got {self.capacity}")
        object.__setattr__(self, "read_width", exact_rate(self.read_width, "read_width"))
        object.__setattr__(self, "write_width", exact_rate(self.write_width, "write_width"))

    def footprint(self, held: tuple[Residency, ...]) -> int | Fraction:
        return sum((r.footprint for r in held), 0)

    def over(self, held: tuple[Residency, ...]) -> int | Fraction:
        """Words the blocks need beyond the capacity (0 when they fit)."""
        return max(0, self.footprint(held) - self.capacity)

    def read_cycles(self, words: int | Fraction) -> int:
        return math.ceil(Fraction(words) / self.read_width)

    def write_cycles(self, words: int | Fraction) -> int:
        return math.ceil(Fraction(words) / self.write_width)
