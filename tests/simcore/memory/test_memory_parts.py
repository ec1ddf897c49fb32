"""The link, the buffer and the units machine files are written in."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simcore.memory import (
    Buffer,
    Link,
    Residency,
    UnitError,
    parse_bandwidth,
    parse_bytes,
    parse_cycles,
    parse_frequency,
    parse_rate,
)


def test_a_request_occupies_setup_plus_its_words_over_the_bandwidth() -> None:
    link = Link(Fraction(3, 2), latency=10, setup=2)
    assert link.occupancy(3) == 2 + 2
    assert link.occupancy(4) == 2 + 3  # 4 / 1.5 rounds up
    assert link.arrival(100, 3) == 100 + 4 + 10
    assert link.occupancy(4, rate=Fraction(1)) == 2 + 4  # a slower port limits the link


def test_a_float_bandwidth_is_the_decimal_it_prints_as() -> None:
    assert Link(0.1).words_per_cycle == Fraction(1, 10)
    assert Link(0.1).occupancy(3) == 30


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"words_per_cycle": 0}, "words_per_cycle must be positive"),
        ({"words_per_cycle": float("inf")}, "words_per_cycle must be finite"),
        ({"words_per_cycle": True}, "words_per_cycle must be a number"),
        ({"words_per_cycle": 1, "latency": -1}, "latency must not be negative"),
        ({"words_per_cycle": 1, "setup": 1.5}, "setup must be a whole number of cycles"),
    ],
)
def test_a_bad_link_is_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Link(**kwargs)


@given(
    st.integers(0, 10**6), st.fractions(min_value=Fraction(1, 64), max_value=64), st.integers(0, 50)
)
def test_occupancy_is_the_least_whole_number_of_cycles_that_moves_the_words(
    words: int, rate: Fraction, setup: int
) -> None:
    link = Link(rate, 0, setup)
    cycles = link.occupancy(words) - setup
    assert cycles * rate >= words and (cycles == 0 or (cycles - 1) * rate < words)


def test_a_buffer_says_how_far_blocks_are_over_it() -> None:
    buffer = Buffer(100, 4, 2)
    held = (Residency("a", 30, 2), Residency("b", 50, 1))
    assert buffer.footprint(held) == 110 and buffer.over(held) == 10
    assert buffer.read_cycles(9) == 3 and buffer.write_cycles(9) == 5
    with pytest.raises(ValueError, match="buffering must be 1 or 2"):
        Residency("a", 3, 3)
    with pytest.raises(ValueError, match="capacity must be positive"):
        Buffer(0, 1, 1)


def test_units() -> None:
    assert parse_bytes("24 MiB", 8) == 24 * 2**20
    assert parse_bytes("64 kB", 8) == 64000
    assert parse_bytes("4096 words", 16) == 8192
    assert parse_frequency("700 MHz") == 700 * 10**6
    assert parse_bandwidth("34 GB/s", Fraction(700 * 10**6), 8) == Fraction(340, 7)
    assert parse_bandwidth("614 GB/s", Fraction(1050 * 10**6), 16) == Fraction(6140, 21)
    assert parse_bandwidth("16 B/cycle", Fraction(10**9), 8) == 16
    assert parse_rate("64 B/cycle", 16) == 32
    assert parse_cycles("150 ns", Fraction(1050 * 10**6)) == 158
    assert parse_cycles(100, Fraction(1)) == 100


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: parse_bytes(24, 8), "a bare number has no unit"),
        (lambda: parse_bytes("24 KB", 8), "ambiguous unit 'KB'"),
        (lambda: parse_bytes("-1 KiB", 8), "expected a size"),
        (lambda: parse_bytes("0 KiB", 8), "must be positive"),
        (lambda: parse_frequency("7 parsecs"), "give a frequency"),
        (lambda: parse_bandwidth("30 furlongs", Fraction(1), 8), "give GB/s"),
        (lambda: parse_cycles("1.5 cycles", Fraction(1)), "whole number of cycles"),
        (lambda: parse_cycles(-3, Fraction(1)), "must not be negative"),
    ],
)
def test_bad_quantities_are_refused_in_one_line(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnitError, match=message) as refused:
        call()
    assert "\n" not in str(refused.value)
