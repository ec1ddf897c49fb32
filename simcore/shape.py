"""Matrix-product shapes: M x K x N, with A of M x K and B of K x N."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# Counts (cycles, multiply-accumulates, words moved) are held as 64-bit integers: in numpy
# arrays, the compiled engine, Optuna's storage and parquet files.
COUNT_LIMIT = 2**63 - 1


class ShapeError(ValueError):
    """A shape is malformed or has a zero or negative dimension."""


class CountLimitError(ShapeError):
    """A shape whose counts could exceed COUNT_LIMIT on the machine asked for."""


@dataclass(frozen=True, order=True)
class Shape:
    m: int
    k: int
    n: int

    def __post_init__(self) -> None:
        for name in ("m", "k", "n"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ShapeError(f"shape dimension {name} must be an integer, got {value!r}")
            if value <= 0:
                raise ShapeError(f"shape dimension {name.upper()} must be positive, got {value}")

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the product."""
        return self.m * self.k * self.n

    def tiles(self, T: int) -> tuple[int, int, int]:
        """Tile counts (Mt, Kt, Nt) for tiles of edge T, partial tiles rounded up."""
        return math.ceil(self.m / T), math.ceil(self.k / T), math.ceil(self.n / T)

    def __str__(self) -> str:
        return f"{self.m}x{self.k}x{self.n}"


# ASCII digits only: int() would also take other scripts' digits ('١٢٨') and the regex's \d match them.
_SHAPE = re.compile(r"^\s*(-?[0-9]+)\s*[xX]\s*(-?[0-9]+)\s*[xX]\s*(-?[0-9]+)\s*$", re.ASCII)


def parse_shape(text: str) -> Shape:
    """'128x128x128' -> Shape(128, 128, 128); clear errors for anything else."""
    match = _SHAPE.match(text)
    if not match:
        raise ShapeError(f"malformed shape {text!r}: expected MxKxN, for example 128x128x128")
    m, k, n = (int(g) for g in match.groups())
    return Shape(m, k, n)


def check_count(shape: Shape, most: int, what: str) -> None:
    """Refuse (CountLimitError) a shape whose largest count, `most` (`what` says of what), is
    past COUNT_LIMIT."""
    if most > COUNT_LIMIT:
        raise CountLimitError(
            f"shape {shape} is too large to count exactly: {what} could reach {_brief(most)}, "
            f"past the 64-bit limit of {COUNT_LIMIT:.3g}"
        )


def _brief(count: int) -> str:
    """A huge count in three digits (a float holds at most about 1e308)."""
    if count.bit_length() > 1000:
        return f"more than 2^{count.bit_length() - 1}"
    return f"{count:.3g}"
