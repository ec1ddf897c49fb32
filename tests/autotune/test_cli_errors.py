"""Bad input to the tuner: one line on stderr, exit status 2, no traceback, nothing half-done."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import run_error

from autotune.cli.main import main
from tests.helpers.waiting import PATIENCE, no_hang

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--shape", "12x12"], "malformed shape '12x12'"),
        (["--shape", "axbxc"], "malformed shape 'axbxc'"),
        (["tune", "--shape", "128x0x128"], "K must be positive, got 0"),
        (["--shape=-8x8x8"], "M must be positive, got -8"),
        (["--shape", "32x32x32", "--machine", "foo=1"], "unknown machine parameter 'foo'"),
        (
            ["--shape", "32x32x32", "--machine", "dma_words_per_cycle=0"],
            "dma_words_per_cycle must not be zero",
        ),
        (["--shape", "32x32x32", "--machine", "slots"], "is not KEY=VALUE"),
        (["--shape", "32x32x32", "--slots", "2"], "2 slots is too small for any schedule"),
        (["--shape", "32x32x32", "--trials", "0"], "--trials: must be at least 1, got 0"),
        (["--shape", "32x32x32", "--trials", "-3"], "--trials: must be at least 1, got -3"),
        (["--shape", "32x32x32", "--sampler", "anneal"], "invalid choice: 'anneal'"),
        (["--shape", "32x32x32", "--space", "nosuch"], "unknown search space 'nosuch'"),
        (["--shape", "32x32x32", "--objectives", "joules"], "unknown objective(s) joules"),
        (
            ["--shape", "32x32x32", "--search-machine", "--machine-range", "slots=9:3"],
            "empty integer range 9..3",
        ),
        (["--shape", "32x32x32", "--max-scratchpad-words", "4096"], "need --search-machine"),
        (["--shape", "32x32x32", "--timeout", "0"], "--timeout: must be a positive number"),
        (["leaderboard", "no-such-study"], "no leaderboard at 'no-such-study'"),
        (["show", "no-such-study"], "no leaderboard at 'no-such-study'"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, argv: list[str], expected: str
) -> None:
    line = run_error(capsys, argv)
    assert expected in line
    # Rejected before any study was created.
    assert not (in_tmp / "results").exists() or not any((in_tmp / "results").rglob("*.db"))


def test_negative_shape_as_separate_argument_is_still_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # argparse reads "-1x8x8" as an option, not a value: the message differs, the contract does not.
    line = run_error(capsys, ["--shape", "-1x8x8"])
    assert "--shape" in line


def test_unreachable_postgres_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--shape", "32x32x32", "--space", "chapter", "--trials", "5"]
    with no_hang("a run on a server that is not there"):
        line = run_error(capsys, [*argv, "--storage", "postgresql://nobody@127.0.0.1:1/none"])
    assert "cannot open storage 'postgresql://nobody@127.0.0.1:1/none'" in line


def test_sqlite_in_a_missing_directory(capsys: pytest.CaptureFixture[str]) -> None:
    line = run_error(
        capsys,
        [
            "--shape",
            "32x32x32",
            "--space",
            "chapter",
            "--trials",
            "5",
            "--storage",
            "sqlite:////nonexistent-dir/x/y.db",
        ],
    )
    assert "cannot open storage 'sqlite:////nonexistent-dir/x/y.db'" in line
    assert not Path("/nonexistent-dir").exists()


def test_existing_study_with_another_shape_or_machine(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    base = ["--space", "chapter", "--trials", "20", "--study", "shared"]
    assert main(["--shape", "32x32x32", *base]) == 0
    capsys.readouterr()
    import optuna

    from autotune.storage.locations import read_storage

    storage = str(in_tmp / "results" / "shared" / "study.journal")
    before = len(optuna.load_study(study_name="shared", storage=read_storage(storage)).trials)

    line = run_error(capsys, ["--shape", "64x64x64", *base])
    assert "already exists with a different shape" in line and "32x32x32" in line
    line = run_error(capsys, ["--shape", "32x32x32", "--machine", "dma_setup=4", *base])
    assert "already exists with a different machine" in line
    line = run_error(capsys, ["--shape", "32x32x32", "--slots", "16", *base])
    assert "different machine" in line
    # The refused runs added nothing to the study.
    assert (
        len(optuna.load_study(study_name="shared", storage=read_storage(storage)).trials) == before
    )


def test_subprocess_exit_code_and_single_stderr_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for argv in (
        ["--shape", "12x12"],
        ["--shape", "32x32x32", "--machine", "dma_words_per_cycle=0"],
        ["--shape", "32x32x32", "--sampler", "anneal"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "autotune", *argv],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stderr.startswith("autotune: error: ")
        assert "Traceback" not in done.stderr


def test_no_command_and_no_arguments_prints_help_and_fails(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 2
    assert "usage: autotune" in capsys.readouterr().out


# --- command-line defects, each fixed --------------------------------------------------------


def test_machine_slots_works_wherever_slots_does(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    import pandas as pd

    for argv in (
        ["--shape", "32x32x32", "--space", "chapter", "--trials", "3", "--study", "m32"],
        [
            "baseline",
            "--shape",
            "32x32x32",
            "--schedules",
            "2x2:2",
            "--out",
            "b.parquet",
            "--force",
        ],
        [
            "sweep",
            "--shape",
            "32x32x32",
            "--machine-grid",
            "dma_setup=4",
            "--schedules",
            "2x2:2",
            "--out",
            "s.parquet",
            "--force",
        ],
    ):
        for slots in (["--machine", "slots=32"], ["--machine", "slots=32", "--slots", "32"]):
            assert main([*argv, *slots]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert set(pd.read_parquet(in_tmp / "results" / "m32" / "leaderboard.parquet")["slots"]) == {32}
    assert set(pd.read_parquet(in_tmp / "b.parquet")["slots"]) == {32} and set(
        pd.read_parquet(in_tmp / "s.parquet")["slots"]
    ) == {32}
    line = run_error(capsys, ["--shape", "32x32x32", "--machine", "slots=32", "--slots", "16"])
    assert "--slots 16 and --machine slots=32 disagree" in line


@pytest.mark.parametrize(
    "argv", [["--shape", "32x32x32"], ["baseline", "--shape", "32x32x32"], ["sweep"]]
)
def test_a_repeated_machine_key_is_an_error(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert "--machine gives dma_setup twice" in run_error(
        capsys, [*argv, "--machine", "dma_setup=4,dma_setup=8"]
    )


def test_a_padded_shape_says_how_and_what_it_costs(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["--shape", "100x100x100", "--space", "chapter", "--trials", "3", "--study", "pad"])
        == 0
    )
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: 100x100x100 is not a multiple of the 8x8 tile: it runs zero-padded as 104x104x104 "
        "(13x13x13 tiles), 12.5% more matrix-unit work than the product needs"
    ]
    assert main(["baseline", "--shape", "100x100x100", "--schedules", "2x2:2"]) == 0
    assert capsys.readouterr().err.count("note: 100x100x100 is not a multiple") == 1
    assert main(["baseline", "--shape", "64x64x64", "--schedules", "2x2:2"]) == 0
    assert "note" not in capsys.readouterr().err


def test_check_with_a_missing_reference_fails(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    line = run_error(capsys, ["check", "--reference", "/nonexistent.json"])
    assert "reference record /nonexistent.json not found" in line
    line = run_error(capsys, ["check"])  # run from a folder without results/: no silent pass
    assert (
        "results/reference/best.json not found" in line
    )  # --results DIR finds it (tests/autotune/test_check.py)
