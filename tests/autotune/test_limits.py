"""The size guard: every GA-1 command estimates the work first and refuses, in one line naming
the estimate and the flag that raises the limit, what would not fit; huge slot counts are cheap."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from helpers.cli import run_error

from autotune.cli.limits import add_limits, check_work
from autotune.cli.main import main
from autotune.errors import WorkError
from autotune.oracles.ga1 import ORACLE as GA1
from simcore import Machine, Shape
from simcore.ga1.estimate import estimate

HUGE = "100000x100000x100000"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        ["baseline", "--shape", HUGE, "--schedules", "4x8:2", "--slots", "5000"],
        ["--shape", HUGE, "--trials", "5", "--slots", "5000"],
        ["sweep", "--shape", HUGE, "--slots", "5000"],
        # past the periodic method's slots, 2^28 products are over the default
        ["tune", "--shape", "4096x4096x8192", "--slots", "5000"],
    ],
)
def test_huge_shapes_are_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, argv: list[str]
) -> None:
    line = run_error(capsys, argv)
    assert (
        "tile products per evaluation" in line
        and "--max-products" in line
        and "--max-memory" in line
    )
    assert not (in_tmp / "results").exists() or not any((in_tmp / "results").rglob("*.db"))


def test_shapes_past_the_full_limit_are_timed_periodically(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert main(["--shape", "4096x4096x8192", "--trials", "4", "--verify-top", "1"]) == 0
    captured = capsys.readouterr()
    assert "2.68e+08 tile products, timed periodically" in captured.err
    assert "verified-reduced" not in captured.out  # the table says `scaled`; the detail says how
    assert " scaled " in captured.out


def test_the_limits_are_flags(capsys: pytest.CaptureFixture[str]) -> None:
    line = run_error(capsys, ["baseline", "--shape", "64x64x64", "--max-products", "100"])
    assert "512 tile products" in line and "100 tile products (--max-products)" in line
    line = run_error(capsys, ["baseline", "--shape", "64x64x64", "--max-memory", "1K"])
    assert "for a verification" in line and "1 KB (--max-memory)" in line
    line = run_error(capsys, ["baseline", "--shape", "64x64x64", "--max-memory", "lots"])
    assert "expected a size like 8G" in line


def test_raised_limits_let_the_work_through(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["baseline", "--shape", "64x64x64", "--schedules", "2x2:2", "--max-products", "512"])
        == 0
    )


def test_a_huge_slot_count_runs(capsys: pytest.CaptureFixture[str]) -> None:
    # The lower bound no longer loops over the slots, nor does any estimate: this is quick.
    assert main(["--shape", "128x128x128", "--slots", "100000", "--trials", "3"]) == 0
    assert "verified" in capsys.readouterr().out


def test_estimate_and_announcement(capsys: pytest.CaptureFixture[str]) -> None:
    work = estimate(Shape(1024, 1024, 1024), Machine(slots=64))
    assert work.products == 128**3
    assert work.verification_bytes > 8 * 4 * 1024**2  # A, B, C and the expected C, in float64
    parser = argparse.ArgumentParser()
    add_limits(parser)
    args = parser.parse_args([])
    assert args.max_products is None and GA1.most_work == 1 << 27  # the oracle's own limit
    check_work(args, GA1, Shape(2048, 2048, 1024), Machine(slots=64))  # 2^22: a second in full
    assert "tile products" not in capsys.readouterr().err
    check_work(args, GA1, Shape(4096, 4096, 4096), Machine(slots=64))  # 2^27: past a search's
    assert "1.34e+08 tile products, timed periodically" in capsys.readouterr().err
    check_work(args, GA1, Shape(4096, 8192, 4096), Machine(slots=64))  # periodic, or refused
    assert "a schedule that does not settle into a period is refused" in capsys.readouterr().err
    with pytest.raises(WorkError, match="needs 2.68e\\+08 tile products") as refused:
        check_work(args, GA1, Shape(4096, 8192, 4096), Machine(slots=5000))
    assert refused.value.setting == "max_products" and refused.value.work.products == 2**28


def test_a_machine_search_reaching_a_huge_scratchpad_is_refused(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    wide = ["--shape", "64x64x64", "--search-machine", "--machine-range", "slots=3:1000000000"]
    line = run_error(capsys, [*wide, "--max-scratchpad-words", "100000000000", "--trials", "3"])
    assert "on 1000000000 slots" in line and "--max-memory" in line and "--machine-range" in line
    assert not (in_tmp / "results").exists()


def test_the_scratchpad_budget_bounds_the_machines_a_search_reaches() -> None:
    from search_spaces.domains import IntRange
    from search_spaces.machine import MachineSpace

    space = MachineSpace((("slots", IntRange(3, 10**9)),), 64 * 64)
    assert {m.slots for m in space.reachable(Machine(slots=16))} == {3, 64}
