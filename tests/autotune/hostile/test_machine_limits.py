"""Machines out of range: a machine parameter that makes even a small shape too large to count is
named by its own setting (`--machine KEY=VALUE`, `--machine-grid KEY=VALUE`), never blamed on
`--shape`; values past 64 bits are refused where they are parsed. And the systolic command's
`--max-memory` holds on every path: the cycle model's check of the array and the block-schedule
search of a machine with its memory. One line, exit 2, nothing written."""

from __future__ import annotations

import pytest

from tests.autotune.hostile.conftest import Hostile

PAST_64_BITS = "99999999999999999999"
PAST_THE_COUNTS = "9999999999999999"  # fits 64 bits; a 64x64x64 schedule's cycles do not
PES = "1000000000000000000"  # fits 64 bits; a 64x64x64 design's cycles on so many PEs do not
SHAPE = ["--shape", "64x64x64"]

MACHINES = [
    (["--machine", f"dma_setup={PAST_64_BITS}", *SHAPE], ("--machine", "dma_setup", "at most")),
    (
        ["--machine", f"dma_setup={PAST_THE_COUNTS}", *SHAPE],
        (f"--machine dma_setup={PAST_THE_COUNTS} is out of range", "64-bit"),
    ),
    (
        ["--machine", f"mxu_fill={PAST_THE_COUNTS},slots=32", *SHAPE],
        (f"--machine mxu_fill={PAST_THE_COUNTS} is out of range",),
    ),
    (
        ["sweep", "--machine-grid", f"dma_setup=16,{PAST_64_BITS}", *SHAPE],
        ("--machine-grid", "dma_setup", "at most"),
    ),
    (
        ["sweep", "--machine-grid", f"dma_setup=16,{PAST_THE_COUNTS}", *SHAPE],
        (f"--machine-grid dma_setup={PAST_THE_COUNTS} is out of range",),
    ),
    (
        ["sweep", "--machine", f"mxu_cycles={PAST_THE_COUNTS}", *SHAPE],
        (f"--machine mxu_cycles={PAST_THE_COUNTS} is out of range",),
    ),
    (
        ["--oracle", "systolic", "--machine", f"pe_budget={PES}", *SHAPE],
        (f"--machine pe_budget={PES} is out of range",),
    ),
    (
        ["--oracle", "systolic", "--machine", f"max_hbm_words={PAST_64_BITS}", *SHAPE],
        ("--machine", "max_hbm_words must be at most"),
    ),
    (
        ["ops", "gpt2", "--oracle", "ga1", "--machine", f"dma_setup={PAST_THE_COUNTS}"],
        (f"--machine dma_setup={PAST_THE_COUNTS} is out of range", "(operation "),
    ),
    (
        ["ops", "gpt2", "--oracle", "systolic", "--machine", f"pe_budget={PAST_THE_COUNTS}"],
        (f"--machine pe_budget={PAST_THE_COUNTS} is out of range",),
    ),
]


@pytest.mark.parametrize(("argv", "named"), MACHINES, ids=lambda v: str(v)[:70])
def test_a_machine_out_of_range_is_named_not_the_shape(
    hostile: Hostile, argv: list[str], named: tuple[str, ...]
) -> None:
    line = hostile.refuses(argv, *named)
    assert "--shape" not in line


def test_a_shape_too_large_on_the_default_machine_is_still_the_shape(hostile: Hostile) -> None:
    hostile.refuses(["--shape", "10000000000000x10000000000x100000000"], "--shape", "64-bit")


SYSTOLIC_MEMORY = [
    (
        ["systolic", "--array", "8x8", "--shape", "5000x1x5000", "--check", "--max-memory", "50M"],
        ("--check", "cycle model", "--max-memory"),
    ),
    (
        ["systolic", "--arch", "gemmini", "--shape", "1048576x1048576x1048576"]
        + ["--max-memory", "500M"],
        ("--shape", "block schedules", "--max-memory"),
    ),
    (
        ["systolic", "--arch", "gemmini", "--shape", "4096x4096x4096", "--max-memory", "150M"],
        ("--shape", "block schedules", "the limit is 150 MB (--max-memory)"),
    ),
]


@pytest.mark.parametrize(("argv", "named"), SYSTOLIC_MEMORY, ids=lambda v: str(v)[:70])
def test_systolic_max_memory_holds_on_every_path(
    hostile: Hostile, argv: list[str], named: tuple[str, ...]
) -> None:
    hostile.refuses(argv, *named)


def test_a_check_past_the_memory_limit_runs_scaled_down(hostile: Hostile) -> None:
    """The full problem's check (400 MB) past --max-memory runs on a smaller problem instead."""
    argv = ["systolic", "--array", "8x8", "--shape", "5000x1x5000", "--check"]
    result = hostile.accepts([*argv, "--max-memory", "200M"], "checked (scaled)")
    assert "full shape" not in result.out


def test_the_automatic_check_is_left_out_past_the_memory_limit(hostile: Hostile) -> None:
    result = hostile.accepts(
        ["systolic", "--array", "8x8", "--shape", "64x64x64", "--max-memory", "50M"], "cycles"
    )
    assert "verified" not in result.out
