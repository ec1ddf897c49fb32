"""Matrix-product shapes: M x K x N, with A of M x K and B of K x N."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# Counts (cycles, multiply-accumulates, words moved) are held as 64-bit integers: in numpy
# arrays, the compiled engine, Optuna's storage and parquet files.
COUNT_LIMIT = 2**63 - 1
# An integer read from text has at most this many digits (leading zeros aside): far past any
# count (COUNT_LIMIT has 19), and far below Python's own limit on converting digits (4,300).
MOST_DIGITS = 40
# Text quoted in an error is cut to this many characters.
QUOTE_CHARS = 40
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)


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


def quoted(text: str) -> str:
    """`text` for an error message: repr'd, and cut short when long (a line of a file may be
    megabytes)."""
    if len(text) <= QUOTE_CHARS:
        return repr(text)
    return f"{text[:QUOTE_CHARS]!r}... ({len(text)} characters)"


def parse_int(text: str, what: str) -> int:
    """An integer in ASCII digits with an optional sign, of at most MOST_DIGITS digits: int()
    alone would take other scripts' digits ('١٢٨') and '1_000', and past 4,300 digits fails
    with a message about Python. ValueError naming `what` otherwise."""
    text = text.strip()
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"{what} needs an integer, got {quoted(text)}")
    sign, digits = ("-" if text[0] == "-" else ""), text.lstrip("+-").lstrip("0")
    if len(digits) > MOST_DIGITS:
        raise ValueError(f"{what} has {len(digits)} digits, at most {MOST_DIGITS}")
    return int(sign + (digits or "0"))


# ASCII digits only: int() would also take other scripts' digits ('١٢٨') and the regex's \d match them.
_SHAPE = re.compile(r"^\s*(-?[0-9]+)\s*[xX]\s*(-?[0-9]+)\s*[xX]\s*(-?[0-9]+)\s*$", re.ASCII)


def parse_shape(text: str) -> Shape:
    """'128x128x128' -> Shape(128, 128, 128); clear errors for anything else (a dimension of
    thousands of digits included)."""
    match = _SHAPE.match(text)
    if not match:
        raise ShapeError(f"malformed shape {quoted(text)}: expected MxKxN, for example 128x128x128")
    try:
        m, k, n = (
            parse_int(g, f"shape dimension {name}") for g, name in zip(match.groups(), "MKN")
        )
    except ValueError as exc:
        raise ShapeError(str(exc)) from None
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
