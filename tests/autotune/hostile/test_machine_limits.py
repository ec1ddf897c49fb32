"""Machines out of range: a machine parameter that makes even a small shape too large to count is
named by its own setting (`--machine KEY=VALUE`, `--machine-grid KEY=VALUE`), never blamed on
`--shape`; values past 64 bits are refused where they are parsed. And the systolic command's
`--max-memory` holds on every path: the cycle model's check of the array and the block-schedule
search of a machine with its memory. One line, exit 2, nothing written."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from tests.autotune.hostile.conftest import Hostile
from tests.helpers.scalesim_cfg import scalesim_cfg

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


GPT2_GA1 = ["ops", "gpt2", "--oracle", "ga1"]
FUSE = [
    ([*GPT2_GA1, "--fuse", "--machine", "slots=1"], ("--machine slots=1", "too small")),
    ([*GPT2_GA1, "--machine", "slots=2"], ("--machine slots=2", "too small")),
    ([*GPT2_GA1, "--fuse", "--machine", "slots=3"], ("--machine slots=3", "fits 3 slots")),
    ([*GPT2_GA1, "--machine", "slots=3"], ("--machine slots=3", "fits 3 slots")),
    ([*GPT2_GA1, "--fuse", "--machine", "T=100000"], ("for a verification", "--max-memory")),
    ([*GPT2_GA1, "--fuse", "--machine", f"slots={PAST_64_BITS}"], ("--machine", "at most")),
    ([*GPT2_GA1, "--fuse", "--batch", "1000000000"], ("--max-products",)),
]


@pytest.mark.parametrize(("argv", "named"), FUSE, ids=lambda v: str(v)[:70])
def test_ops_fuse_names_the_machine_and_prices_its_verification(
    hostile: Hostile, argv: list[str], named: tuple[str, ...]
) -> None:
    hostile.refuses(argv, *named)


def _vector_arch(folder: Path, name: str, old: str, new: str) -> str:
    text = resources.files("simcore.systolic.archs").joinpath("gemmini.toml").read_text()
    assert old in text
    (folder / name).write_text(text.replace(old, new, 1))
    return name


VECTOR = [
    ("lanes = 16", "lanes = 0", "vector.lanes"),
    ("lanes = 16", "lanes = -4", "vector.lanes"),
    ("lanes = 16", "lanes = 1e30", "vector.lanes"),
    ("lanes = 16", "lanes = nan", "vector.lanes"),
    ("lanes = 16", 'lanes = "many"', "vector.lanes"),
    ("special_cycles = 4", "special_cycles = 0", "vector.special_cycles"),
    ("port_share = 0.5", "port_share = nan", "vector.port_share: expected a finite number"),
    ("port_share = 0.5", "port_share = inf", "vector.port_share: expected a finite number"),
    ("port_share = 0.5", "port_share = 1e-300", "vector.port_share: 1e-300 is outside"),
    ("port_share = 0.5", "port_share = 2.0", "vector.port_share"),
]


@pytest.mark.parametrize(("old", "new", "named"), VECTOR, ids=lambda v: str(v)[:40])
def test_ops_refuses_a_hostile_vector_table(
    hostile: Hostile, world: Path, old: str, new: str, named: str
) -> None:
    arch = _vector_arch(world, "vector.toml", old, new)
    line = hostile.refuses(["ops", "gpt2", "--oracle", "systolic", "--arch", arch], named)
    assert line.startswith("autotune: error: --arch vector.toml")


CFGS = [
    ({"rows": 0}, "ArrayHeight must be a positive integer"),
    ({"rows": "nan"}, "ArrayHeight"),
    ({"rows": 100000}, "array.rows"),
    ({"sram": PAST_64_BITS}, "IfmapSramSzkB"),
    ({"flow": "zz"}, "Dataflow must be ws, os or is"),
]


@pytest.mark.parametrize(("values", "named"), CFGS, ids=lambda v: str(v)[:40])
def test_a_tuned_run_on_a_hostile_scalesim_config(
    hostile: Hostile, world: Path, values: dict[str, object], named: str
) -> None:
    text = scalesim_cfg(values.get("rows", 16), 16)
    text = text.replace("IfmapSramSzkB: 64", f"IfmapSramSzkB: {values.get('sram', 64)}")
    (world / "hostile.cfg").write_text(
        text.replace("Dataflow: ws", f"Dataflow: {values.get('flow', 'ws')}")
    )
    argv = ["--oracle", "systolic", "--arch", "hostile.cfg", "--shape", "64x64x64"]
    hostile.refuses([*argv, "--trials", "3"], "--arch", named)


def test_a_tuned_run_on_a_binary_config(hostile: Hostile, world: Path) -> None:
    (world / "binary.cfg").write_bytes(bytes(range(256)))
    argv = ["--oracle", "systolic", "--arch", "binary.cfg", "--shape", "64x64x64"]
    hostile.refuses([*argv, "--trials", "3"], "--arch", "not a text file")
