"""Study names are names, not paths: every name that is not one is refused in one line, and
nothing is written anywhere (in the results folder, beside it, or above it)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHAPE = ["--shape", "16x16x16", "--space", "chapter"]

NOT_NAMES = [
    ("..", "starts with '.'"),
    (".", "starts with '.'"),
    ("../escape", "is a path"),
    ("a/b", "is a path"),
    ("a\\b", "is a path"),
    ("/abs", "is a path"),
    (".hidden", "starts with '.'"),
    ("a\nb", "control or non-printable"),
    ("a\tb", "control or non-printable"),
    ("a\x00b", "control or non-printable"),
    ("a\x7fb", "control or non-printable"),
    ("zero\u200bwidth", "control or non-printable"),
    ("line\u2028separator", "control or non-printable"),
    ("bad\udcffbyte", "control or non-printable"),
    (" lead", "starts or ends with a space"),
    ("trail ", "starts or ends with a space"),
    ("x" * 256, "longer than 255 bytes"),
    ("é" * 128, "longer than 255 bytes"),
]


@pytest.mark.parametrize(("name", "why"), NOT_NAMES, ids=[repr(n)[:24] for n, _ in NOT_NAMES])
def test_tune_refuses_a_study_name_that_is_not_one(
    hostile, world: Path, name: str, why: str
) -> None:
    line = hostile.refuses(
        [*SHAPE, "--trials", "2", f"--study={name}"], "--study name", why.split(" (")[0]
    )
    assert repr(name)[:20] in line
    assert not (world.parent / "escape").exists() and not (world.parent / "study.journal").exists()


@pytest.mark.parametrize("name", ["..", "../escape", "a\nb", ".hidden"], ids=repr)
def test_tune_with_an_explicit_storage_still_refuses_the_name(hostile, name: str) -> None:
    hostile.refuses(
        [*SHAPE, "--trials", "2", f"--study={name}", "--storage", "other.journal"], "--study name"
    )


@pytest.mark.parametrize("command", ["leaderboard", "show", "export", "plot"])
@pytest.mark.parametrize("name", ["../escape", "a\nb", "no/such/folder"], ids=repr)
def test_readers_refuse_a_name_that_is_no_study_and_no_path(
    hostile, command: str, name: str
) -> None:
    hostile.refuses([command, name], "no leaderboard at", repr(name))


def test_the_parent_folder_is_not_a_study(hostile) -> None:
    hostile.refuses(["leaderboard", ".."], "no leaderboard at '..'")


def test_a_workload_whose_file_name_is_no_study_name(hostile, world: Path) -> None:
    (world / "two\nlines.csv").write_text("name,shape,weight\na,16x16x16,1\n")
    hostile.refuses(
        ["--workload", "two\nlines.csv", "--space", "chapter", "--trials", "2"], "name", "control"
    )


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".x", "a b"], ids=repr)
def test_a_workload_gemm_name_that_is_no_name(hostile, world: Path, name: str) -> None:
    (world / "g.csv").write_text(f"name,shape,weight\n{name},16x16x16,1\n")
    hostile.refuses(["--workload", "g.csv", "--space", "chapter", "--trials", "2"], "g.csv")


def test_a_good_name_with_spaces_and_unicode_inside_is_a_name(hostile, world: Path) -> None:
    hostile.accepts(
        [*SHAPE, "--trials", "2", "--study", "mon étude 1"],
        "wrote results/mon étude 1/leaderboard.parquet",
    )
    assert (world / "results" / "mon étude 1" / "study.journal").is_file()
    result = hostile.accepts(["studies"])
    assert "mon étude 1" in result.out
