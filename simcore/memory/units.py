"""The quantities machine files are written in, converted exactly (Fractions, never floats):
sizes (B, KiB, MiB, GiB, kB, MB, GB, words), frequencies (Hz, kHz, MHz, GHz), bandwidths
(B/s, kB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s at a clock; B/cycle; words/cycle) and times
(cycles, ns, us at a clock). A bare number is refused where a unit is needed, so that 24 (bytes?
KiB? words?) is never guessed."""

from __future__ import annotations

import math
import re
from fractions import Fraction


class UnitError(ValueError):
    """A quantity is malformed, in an unknown unit, or out of range."""


_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+)\s*([A-Za-z/]+)\s*$")
# A number's text is bounded before it becomes a Fraction: "1e99999999" would build a
# hundred-million-digit integer, and no physical quantity needs more digits or a larger exponent.
MAX_NUMBER_CHARS = 40
MAX_EXPONENT = 40
_EXPONENT = re.compile(r"[eE]([-+]?[0-9]+)$")
SIZES = {
    "b": 1,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
}
FREQUENCIES = {"hz": 1, "khz": 10**3, "mhz": 10**6, "ghz": 10**9}
PER_SECOND = {f"{unit}/s": size for unit, size in SIZES.items()}
TIMES = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6)}


def _split(value: object, expected: str) -> tuple[Fraction, str]:
    """(number, unit as written) of a quantity string; a bare number has unit ''."""
    if isinstance(value, bool):
        raise UnitError(f"expected {expected}, got {value!r}")
    if isinstance(value, int):
        return Fraction(value), ""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnitError(f"expected {expected}, got {value}")
        return Fraction(str(value)), ""
    if not isinstance(value, str):
        raise UnitError(f"expected {expected}, got {type(value).__name__} {value!r}")
    match = _QUANTITY.match(value)
    number, unit = (match.group(1), match.group(2)) if match else (value.strip(), "")
    if len(number) > MAX_NUMBER_CHARS or abs(_exponent(number)) > MAX_EXPONENT:
        raise UnitError(
            f"expected {expected}, got {_short(value)}: a number of at most {MAX_NUMBER_CHARS} "
            f"characters and an exponent within ±{MAX_EXPONENT}"
        )
    try:
        return Fraction(number), unit
    except ValueError:
        raise UnitError(f"expected {expected}, got {_short(value)}") from None


def _exponent(number: str) -> int:
    """The exponent of a number's text (0 without one); called once its length is bounded."""
    found = _EXPONENT.search(number)
    return int(found.group(1)) if found else 0


def _short(value: str) -> str:
    """The value as written, cut in the middle past 40 characters (an error is one short line)."""
    return repr(value) if len(value) <= 40 else repr(value[:18] + "..." + value[-18:])


def _positive(number: Fraction, value: object) -> Fraction:
    if number <= 0:
        raise UnitError(f"must be positive, got {value!r}")
    return number


def parse_bytes(value: object, word_bits: int) -> Fraction:
    """A size in bytes: '24 MiB', '256 KiB', '64 kB', '4096 words' (of word_bits)."""
    number, unit = _split(value, "a size such as '256 KiB' or '4096 words'")
    key = unit.lower()
    if unit == "KB" or unit == "Kb":
        raise UnitError(f"ambiguous unit {unit!r}: write KiB (1024 bytes) or kB (1000 bytes)")
    if key in ("word", "words"):
        return _positive(number * word_bits / 8, value)
    if key not in SIZES:
        hint = "a bare number has no unit: " if not unit else f"unknown unit {unit!r}: "
        raise UnitError(f"{hint}give one of B, KiB, MiB, GiB, kB, MB, GB, words (got {value!r})")
    return _positive(number * SIZES[key], value)


def parse_frequency(value: object) -> Fraction:
    """A clock in Hz: '700 MHz', '1.05 GHz'."""
    number, unit = _split(value, "a frequency such as '700 MHz'")
    key = unit.lower()
    if key not in FREQUENCIES:
        raise UnitError(f"give a frequency in Hz, kHz, MHz or GHz (got {value!r})")
    return _positive(number * FREQUENCIES[key], value)


def parse_rate(value: object, word_bits: int) -> Fraction:
    """A width in words per cycle: 16, '16 words/cycle', '64 B/cycle'."""
    number, unit = _split(value, "a rate such as '16 words/cycle'")
    key = unit.lower()
    if key in ("", "word/cycle", "words/cycle"):
        return _positive(number, value)
    if key == "b/cycle":
        return _positive(number * 8 / word_bits, value)
    raise UnitError(f"give words/cycle or B/cycle (got {value!r})")


def parse_bandwidth(value: object, clock_hz: Fraction, word_bits: int) -> Fraction:
    """A bandwidth in words per cycle: '30 GB/s' at the clock, '64 B/cycle', '16 words/cycle'."""
    number, unit = _split(value, "a bandwidth such as '30 GB/s' or '16 words/cycle'")
    key = unit.lower()
    if key in PER_SECOND:
        bytes_per_cycle = number * PER_SECOND[key] / clock_hz
        return _positive(bytes_per_cycle * 8 / word_bits, value)
    try:
        return parse_rate(value, word_bits)
    except UnitError:
        raise UnitError(
            f"give GB/s, MB/s, GiB/s (at the clock), B/cycle or words/cycle (got {value!r})"
        ) from None


def parse_cycles(value: object, clock_hz: Fraction) -> int:
    """A whole number of cycles: 100, '100 cycles', '80 ns' (rounded up at the clock)."""
    number, unit = _split(value, "a time such as '100 cycles' or '80 ns'")
    key = unit.lower()
    if number < 0:
        raise UnitError(f"must not be negative, got {value!r}")
    if key in ("", "cycle", "cycles"):
        if number.denominator != 1:
            raise UnitError(f"expected a whole number of cycles, got {value!r}")
        return int(number)
    if key in TIMES:
        return math.ceil(number * TIMES[key] * clock_hz)
    raise UnitError(f"give cycles, ns or us (got {value!r})")
