"""Nothing written outside its place: a study folder, a storage or a pictures folder inside the
results folder that is a link is refused in one line; a derived file that is a link (a
leaderboard) is replaced by a regular file, and what it pointed to is left as it was; `--out`
makes no folder outside the results folder; `--out -` is standard output; an `--out` on the
place of a study's pictures is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.autotune.hostile.conftest import Hostile, run_cli

SHAPE = ["--shape", "16x16x16", "--space", "chapter"]
ELSEWHERE = "elsewhere"


@pytest.fixture()
def elsewhere(world: Path) -> Path:
    """A folder outside results/ holding a file that must never change."""
    folder = world / ELSEWHERE
    folder.mkdir()
    (folder / "precious.txt").write_text("precious\n")
    return folder


LINKED_STUDY = [
    [*SHAPE, "--trials", "2", "--study", "linked"],
    ["leaderboard", "linked"],
    ["show", "linked"],
    ["export", "linked"],
    ["plot", "linked"],
]


@pytest.mark.parametrize("argv", LINKED_STUDY, ids=lambda argv: argv[0])
def test_a_linked_study_folder_is_never_written_through(
    hostile: Hostile, world: Path, elsewhere: Path, argv: list[str]
) -> None:
    (world / "results" / "linked").symlink_to(elsewhere)
    line = hostile.refuses(argv, "results/linked", "is a link", "never writes through")
    assert "Traceback" not in line
    assert sorted(p.name for p in elsewhere.iterdir()) == ["precious.txt"]


def test_a_linked_journal_is_never_appended_to(
    hostile: Hostile, world: Path, elsewhere: Path
) -> None:
    folder = world / "results" / "journal-link"
    folder.mkdir()
    (folder / "study.journal").symlink_to(elsewhere / "precious.txt")
    hostile.refuses([*SHAPE, "--trials", "2", "--study", "journal-link"], "is a link")
    assert (elsewhere / "precious.txt").read_text() == "precious\n"


def test_a_linked_leaderboard_is_replaced_by_a_file(world: Path, elsewhere: Path) -> None:
    board = world / "results" / "base" / "leaderboard.parquet"
    board.unlink()
    board.symlink_to(elsewhere / "precious.txt")
    result = run_cli(["leaderboard", "base"])
    assert result.code == 0, result.err
    assert not board.is_symlink() and board.read_bytes().startswith(b"PAR1")
    assert (elsewhere / "precious.txt").read_text() == "precious\n"


def test_a_linked_pictures_folder_is_refused(
    hostile: Hostile, world: Path, elsewhere: Path
) -> None:
    (world / "results" / "base" / "plots").symlink_to(elsewhere)
    hostile.refuses(["plot", "base"], "pictures folder", "is a link")


OUT_IN_NO_FOLDER = [
    ["export", "base", "--out", "nowhere/deeper/x.json"],
    ["baseline", "--shape", "16x16x16", "--out", "nowhere/x.parquet"],
    ["sweep", "--shape", "16x16x16", "--out", "nowhere/x.parquet"],
    ["plot", "base", "--out", "nowhere/deeper"],
]


@pytest.mark.parametrize("argv", OUT_IN_NO_FOLDER, ids=lambda argv: argv[0])
def test_out_makes_no_folder_outside_the_results(hostile: Hostile, argv: list[str]) -> None:
    hostile.refuses(argv, "--out", "does not exist")


def test_optimum_makes_no_folder_outside_the_results(hostile: Hostile) -> None:
    pytest.importorskip("ortools")
    argv = ["optimum", "--shape", "16x16x16", "--slots", "8", "--out", "nowhere/x.json"]
    hostile.refuses(argv, "--out", "nowhere", "does not exist")


def test_export_onto_the_pictures_place_is_refused_and_plot_still_draws(
    hostile: Hostile, world: Path
) -> None:
    hostile.refuses(["export", "base", "--out", "results/base/plots"], "pictures")
    (world / "results" / "base" / "plots").write_text("someone's file\n")
    line = hostile.refuses(["plot", "base"], "results/base/plots", "--out DIR")
    assert "error: --out" not in line  # no flag was given: none is blamed


def test_out_dash_is_standard_output(world: Path) -> None:
    before = set(os.listdir(world))
    exported = run_cli(["export", "base", "--out", "-"])
    assert exported.code == 0 and exported.out.lstrip().startswith("{"), exported.err
    assert set(os.listdir(world)) == before  # no file named "-"
    plotted = run_cli(["plot", "base", "--out", "-"])
    assert plotted.code == 2 and "several pictures" in plotted.err


@pytest.mark.parametrize("command", ["baseline", "sweep"])
def test_out_dash_tables_are_parquet_on_standard_output(
    world: Path, command: str, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from autotune.cli.main import main

    code = main([command, "--shape", "16x16x16", "--out", "-"])
    captured = capfdbinary.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith(b"PAR1") and captured.out.endswith(b"PAR1")
    assert not (world / "-").exists()
    refused = run_cli([command, "--shape", "16x16x16", "--out", "-", "--json"])
    assert refused.code == 2 and "both write standard output" in refused.err
