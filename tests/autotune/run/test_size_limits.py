"""Shapes too large to count: every count a run records (cycles, multiply-accumulates, words) is a
64-bit integer, so a shape whose counts could pass one is refused in one line before any trial,
on every path (a shape, each GEMM of a workload, the systolic oracle and command, the chapter's
sweep); the bounds behind the refusal hold on real runs. Also: --input-shape without an ONNX
workload is refused, not ignored."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers.cli import run_error

from autotune.cli.main import main
from autotune.errors import PlanError, SizeError
from autotune.oracles.ga1.sizes import COUNT_MARGIN, largest_counts
from autotune.oracles.ga1.sweep import sweep_rows
from autotune.oracles.systolic_check import most_cycles
from autotune.run.resolve import plan_of
from simcore.ga1.machine import Machine
from simcore.ga1.schedules import chapter_sweep
from simcore.shape import COUNT_LIMIT, CountLimitError, Shape, check_count
from simcore.systolic.closed_form import cycles
from simcore.systolic.model import (
    DATAFLOWS,
    EDGES,
    FOLDS,
    ORDERS,
    Assumptions,
    HbmLink,
    Mapping,
    SystolicArray,
    SystolicDesign,
)

HUGE = "10000000x10000000x10000000"  # 1e21 MACs
PAST_MACS = "3000000x3000000x3000000"  # 2.7e19 MACs: past int64, its cycles would not be
CUBE = "1000000x1000000x1000000"  # 1e18 MACs: counted exactly
BIG_TOML = f'[[gemm]]\nname = "small"\nshape = "8x8x8"\nweight = 1\n\n[[gemm]]\nname = "matmul"\nshape = "{HUGE}"\nweight = 1\n'


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.toml").write_text(BIG_TOML)
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["tune", "--shape", HUGE, "--trials", "10"], f"shape {HUGE} is too large"),
        (["--shape", PAST_MACS, "--trials", "10"], "multiply-accumulates"),
        (["--oracle", "systolic", "--shape", HUGE], f"shape {HUGE} is too large"),
        (["--shape", HUGE, "--search-machine", "--trials", "3"], "too large to count"),
        (["--workload", "big.toml", "--trials", "3"], "--workload: GEMM 'matmul': shape"),
        (["--workload", "big.toml", "--search-machine", "--trials", "3"], "GEMM 'matmul'"),
        (["--oracle", "systolic", "--workload", "big.toml"], "GEMM 'matmul'"),
        (["systolic", "--shape", HUGE, "--array", "8x8"], f"shape {HUGE} is too large"),
        (["systolic", "--workload", "big.toml", "--array", "8x8"], "GEMM 'matmul'"),
        (["baseline", "--shape", HUGE], f"shape {HUGE} is too large"),
        (["baseline", "--shape", PAST_MACS], "multiply-accumulates"),
        (["sweep", "--shape", HUGE], f"shape {HUGE} is too large"),
        (["sweep", "--shape", PAST_MACS, "--tuned"], "too large to count"),
        (["optimum", "--shape", HUGE], HUGE),
        # A slow machine: the cycles, not the MACs, pass 64 bits.
        (["--shape", CUBE, "--machine", "dma_setup=100000"], "the cycles of a schedule"),
        (
            ["--shape", CUBE, "--search-machine", "--machine-range", "dma_setup=0:100000"],
            "the cycles of a schedule",
        ),
    ],
)
def test_a_shape_too_large_to_count_is_refused_before_any_trial(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, argv: list[str], expected: str
) -> None:
    line = run_error(capsys, argv)
    assert expected in line
    if "optimum" not in argv:
        assert "past the 64-bit limit of 9.22e+18" in line
    assert not (in_tmp / "results").exists()


def test_the_library_refuses_on_every_path() -> None:
    for oracle in ("ga1", "systolic"):
        with pytest.raises(SizeError, match="too large to count exactly"):
            plan_of(HUGE, oracle=oracle).validate()
        with pytest.raises(SizeError, match="GEMM 'matmul'"):
            plan_of(workload="big.toml", oracle=oracle).validate()
    with pytest.raises(SizeError, match="multiply-accumulates"):
        sweep_rows(Shape(3_000_000, 3_000_000, 3_000_000), Machine(slots=64), chapter_sweep())


@pytest.mark.parametrize("oracle", ["ga1", "systolic"])
def test_a_large_shape_that_counts_exactly_is_allowed(oracle: str) -> None:
    plan_of(CUBE, oracle=oracle).validate()
    plan_of(CUBE, oracle=oracle, search_machine=oracle == "ga1").validate()


def test_the_limit_is_a_64_bit_integer() -> None:
    assert COUNT_LIMIT == 2**63 - 1
    assert Shape(3, 5, 7).macs == 105
    check_count(Shape(1, 1, 1), COUNT_LIMIT, "cycles")
    with pytest.raises(CountLimitError, match="cycles could reach 9.22e\\+18"):
        check_count(Shape(1, 1, 1), COUNT_LIMIT + 1, "cycles")
    with pytest.raises(CountLimitError, match="more than 2\\^"):
        check_count(Shape(1, 1, 1), 10**400, "cycles")  # past a float: still one line


def test_the_ga1_bound_holds_for_the_chapter_schedules() -> None:
    from simcore.ga1.engine import chapter_generator

    rng = random.Random(3)
    for _ in range(12):
        shape = Shape(*(rng.choice([1, 8, 9, 24, 40]) for _ in range(3)))
        machine = Machine(
            T=rng.choice([1, 4, 8]),
            slots=64,
            dma_setup=rng.choice([0, 16, 200]),
            dma_words_per_cycle=rng.choice([1, 16]),
            mxu_cycles=rng.choice([1, 8, 100]),
            mxu_fill=rng.choice([0, 50]),
        )
        counts = {what.split(" (")[0]: most for most, what in largest_counts(shape, machine)}
        bound = counts["the cycles of a schedule on this machine"] // COUNT_MARGIN
        for schedule in chapter_sweep():
            if schedule.slots_needed(shape, machine) <= machine.slots:
                timing = chapter_generator(schedule, shape, machine).timing()
                assert timing.cycles <= bound, (shape, machine, schedule)


def test_the_systolic_bound_holds_for_any_design() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        shape = Shape(*(rng.choice([1, 2, 3, 7, 8, 31, 64]) for _ in range(3)))
        rows, cols = rng.randint(1, 12), rng.randint(1, 12)
        rate = rng.choice([None, 1, 2, 0.5, 3.7])
        design = SystolicDesign(
            SystolicArray(rows, cols),
            rng.choice(DATAFLOWS),
            Mapping(rng.randint(1, rows), rng.randint(1, cols), rng.choice(ORDERS)),
            Assumptions(
                rng.random() < 0.5, rng.choice(EDGES), rng.random() < 0.5, rng.choice(FOLDS)
            ),
            HbmLink(rate, rng.choice([1, 2])),
        )
        # most_cycles doubles the sum of the per-tile bounds, for headroom.
        assert cycles(design, shape) <= most_cycles(shape, rows * cols, rate) // 2


def test_tile_model_counts_in_python_integers() -> None:
    # Analytic, exact and never stored in 64 bits: a huge shape is not refused.
    argv = ["tile-model", "--shape", HUGE, "--tile", "64x64x32", "--operand-bytes", "2"]
    assert main([*argv, "--accumulator-bytes", "4"]) == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["tune", "--shape", "8x8x8", "--input-shape", "x=1x2"],
        ["systolic", "--shape", "8x8x8", "--array", "4x4", "--input-shape", "x=1x2"],
    ],
)
def test_input_shape_without_an_onnx_workload_is_refused(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, argv: list[str]
) -> None:
    line = run_error(capsys, argv)
    assert "--input-shape x=1x2 applies to an ONNX model" in line
    assert not (in_tmp / "results").exists()


@pytest.mark.parametrize("command", [["tune", "--workload"], ["gemms"]])
def test_input_shape_with_a_toml_workload_is_refused(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    line = run_error(capsys, [*command, "big.toml", "--input-shape", "x=1x2"])
    assert "input shapes apply to ONNX models only" in line


def test_input_shapes_for_a_shape_are_refused_by_the_library() -> None:
    with pytest.raises(PlanError, match="input_shapes apply to an ONNX workload"):
        plan_of("8x8x8", input_shapes={"x": (1, 2)})
