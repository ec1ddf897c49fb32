"""A link to off-chip memory: one request at a time, in the order they are issued.

A request of `words` occupies the link for `setup + ceil(words / words_per_cycle)` cycles; its
data is in place `latency` cycles after the occupancy ends (the latency of one request overlaps
the occupancy of the next: requests are pipelined). The bandwidth may be fractional (a Fraction,
or a decimal that is taken as written), so 30 GB/s at 700 MHz is exactly 300/7 bytes a cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction


def exact_rate(value: object, name: str = "words_per_cycle") -> Fraction:
    """A positive rate as a Fraction; a float is taken as the decimal it prints as."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    rate = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    if rate <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return rate


def _non_negative_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number of cycles, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value}")


@dataclass(frozen=True)
class Link:
    """Bandwidth in words per cycle, latency and set-up per request in cycles."""

    words_per_cycle: Fraction
    latency: int = 0
    setup: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "words_per_cycle", exact_rate(self.words_per_cycle))
        _non_negative_int("latency", self.latency)
        _non_negative_int("setup", self.setup)

    def occupancy(self, words: int | Fraction, rate: Fraction | None = None) -> int:
        """Cycles the link is busy moving `words` (at `rate` when a port is slower than it)."""
        use = self.words_per_cycle if rate is None else min(rate, self.words_per_cycle)
        return self.setup + math.ceil(Fraction(words) / use)

    def arrival(self, start: int, words: int | Fraction, rate: Fraction | None = None) -> int:
        """The cycle the data of a request that starts at `start` is in place."""
        return start + self.occupancy(words, rate) + self.latency

    def with_rate(self, words_per_cycle: Fraction) -> "Link":
        return Link(words_per_cycle, self.latency, self.setup)
