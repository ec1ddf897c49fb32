"""Clashes: nothing computed is overwritten. An output never lands on a study's own files nor
replaces a file without --force; a study name in another storage never takes over the first
study's results; tables of different machines never share a file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SHAPE = ["--shape", "16x16x16", "--space", "chapter"]

STUDY_FILES = [
    "results/base/study.journal",
    "results/base/leaderboard.parquet",
    "results/wl/workload.parquet",
    "results/wl-a/study.journal",
    "results/base/pareto.parquet",
    "results/base/study.db",
]


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "forced"])
@pytest.mark.parametrize("target", STUDY_FILES)
def test_export_never_writes_onto_a_study_file(hostile, target: str, force: list[str]) -> None:  # type: ignore[no-untyped-def]
    hostile.refuses(
        ["export", "base", "--out", target, *force], "--out", target, "a study's own file"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["baseline", "--shape", "16x16x16", "--schedules", "1x1:1"],
        ["sweep", "--shape", "16x16x16", "--machine-grid", "dma_setup=4", "--schedules", "1x1:1"],
    ],
    ids=lambda c: c[0],
)
@pytest.mark.parametrize(
    "target", ["results/base/study.journal", "results/base/leaderboard.parquet"]
)
def test_tables_never_write_onto_a_study_file(hostile, command: list[str], target: str) -> None:  # type: ignore[no-untyped-def]
    hostile.refuses([*command, "--out", target, "--force"], "--out", "a study's own file")


def test_an_explicit_journal_is_a_study_file_whatever_its_name(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    (world / "mine.log").write_bytes((world / "results" / "base" / "study.journal").read_bytes())
    hostile.refuses(
        ["export", "base", "--out", "mine.log", "--force"], "mine.log", "a study's own file"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["export", "base", "--out", "base.json"],
        ["export", "base", "--format", "asm", "--out", "notes.txt"],
        ["baseline", "--shape", "16x16x16", "--schedules", "1x1:1", "--out", "foreign.parquet"],
        [
            "sweep",
            "--shape",
            "16x16x16",
            "--machine-grid",
            "dma_setup=4",
            "--schedules",
            "1x1:1",
            "--out",
            "foreign.parquet",
        ],
    ],
    ids=["export-json", "export-asm", "baseline", "sweep"],
)
def test_an_existing_file_is_replaced_only_with_force(hostile, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    target = command[-1]
    hostile.refuses(command, "--out", target, "exists", "--force")
    hostile.accepts([*command, "--force"], changed=[target])


def test_plot_out_never_replaces_pictures_without_force(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    hostile.accepts(["plot", "base", "--out", "pics"], "wrote pics/history.png")
    hostile.refuses(["plot", "base", "--out", "pics"], "--out", "pics/history.png", "exists")
    hostile.accepts(
        ["plot", "base", "--out", "pics", "--force"],
        changed=["pics/history.png", "pics/timeline_rank1.png"],
    )
    hostile.accepts(["plot", "base"], "wrote results/base/plots/history.png")
    hostile.accepts(
        ["plot", "base"],
        changed=["results/base/plots/history.png", "results/base/plots/timeline_rank1.png"],
    )


def test_the_same_name_in_another_storage_keeps_off_the_first_study(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    line = hostile.refuses(
        [*SHAPE, "--trials", "2", "--study", "base", "--storage", "other.journal"],
        "results/base",
        "results/base/study.journal",
        "other.journal",
    )
    assert "another study name or results folder" in line
    assert not (world / "other.journal").exists()


def test_an_explicit_storage_leaderboard_is_owned_by_that_storage(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    hostile.accepts(
        [*SHAPE, "--trials", "3", "--study", "mine", "--storage", "mine.journal"],
        "3 trials in storage",
    )
    hostile.refuses(
        [*SHAPE, "--trials", "2", "--study", "mine", "--storage", "yours.journal"],
        "results/mine/leaderboard.parquet",
        "mine.journal",
        "yours.journal",
    )
    hostile.refuses(
        [*SHAPE, "--trials", "2", "--study", "mine"],
        "results/mine/leaderboard.parquet",
        "mine.journal",
    )
    hostile.accepts(
        [*SHAPE, "--more-trials", "2", "--study", "mine", "--storage", "mine.journal"],
        "5 trials in storage",
        changed=["mine.journal", "results/mine/leaderboard.parquet"],
    )


def test_a_reader_with_another_storage_does_not_take_the_leaderboard(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    hostile.accepts(
        [
            *SHAPE,
            "--trials",
            "3",
            "--study",
            "base",
            "--storage",
            "elsewhere.journal",
            "--results",
            "elsewhere",
        ]
    )
    hostile.refuses(
        ["leaderboard", "base", "--storage", "elsewhere.journal"],
        "results/base belongs to",
        "elsewhere.journal",
    )


BOARD_PATH = "results/base/leaderboard.parquet"


@pytest.mark.parametrize("storage", [":memory:", "sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_study_never_replaces_a_leaderboard(hostile, storage: str) -> None:  # type: ignore[no-untyped-def]
    hostile.refuses(
        [*SHAPE, "--trials", "2", "--study", "base", "--storage", storage],
        "results/base belongs to",
        storage,
    )


def test_a_second_in_memory_run_of_one_name_keeps_the_first(hostile) -> None:  # type: ignore[no-untyped-def]
    hostile.accepts(
        [*SHAPE, "--trials", "2", "--study", "m", "--storage", ":memory:"],
        "wrote results/m/leaderboard.parquet",
    )
    hostile.refuses(
        [*SHAPE, "--trials", "2", "--study", "m", "--storage", ":memory:"],
        "results/m/leaderboard.parquet",
        "in-memory",
    )


def test_tables_of_other_machines_never_share_a_file(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    for slots in ("16", "32"):
        hostile.accepts(
            ["baseline", "--shape", "16x16x16", "--schedules", "1x1:1", "--slots", slots]
        )
    hostile.accepts(
        ["baseline", "--shape", "16x16x16", "--schedules", "1x1:1", "--machine", "dma_setup=4"]
    )
    hostile.accepts(["baseline", "--shape", "16x16x16", "--schedules", "2x2:2"])
    names = sorted(p.name for p in (world / "results" / "baseline").iterdir())
    assert len(names) == 4 and all(n.startswith("16x16x16-s") for n in names), names
    for grid in ("dma_setup=4", "dma_setup=16"):
        hostile.accepts(
            ["sweep", "--shape", "16x16x16", "--machine-grid", grid, "--schedules", "1x1:1"]
        )
    assert len(list((world / "results" / "sweep").iterdir())) == 2
    # The same command again computes the same table into the same file.
    before = {p.name: p.read_bytes() for p in (world / "results" / "baseline").iterdir()}
    hostile.accepts(
        ["baseline", "--shape", "16x16x16", "--schedules", "2x2:2"],
        changed=[f"results/baseline/{n}" for n in before],
    )
    assert {p.name for p in (world / "results" / "baseline").iterdir()} == set(before)


def test_a_results_folder_of_another_storage_is_refused_before_any_trial(
    hostile, world: Path
) -> None:  # type: ignore[no-untyped-def]
    hostile.refuses(
        [*SHAPE, "--trials", "2", "--study", "wl-a", "--storage", "sqlite:///other.db"],
        "results/wl-a",
        "other.db",
    )
    assert not (world / "other.db").exists()


@pytest.mark.parametrize(
    "command",
    [["export", "copy.parquet"], ["baseline", "--shape", "16x16x16", "--schedules", "1x1:1"]],
    ids=["export-its-source", "baseline"],
)
def test_a_copied_leaderboard_is_a_study_file_too(hostile, world: Path, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    shutil.copy(world / "results" / "base" / "leaderboard.parquet", world / "copy.parquet")
    hostile.refuses(
        [*command, "--out", "copy.parquet", "--force"], "copy.parquet", "a study's own file"
    )


def test_a_refused_workload_run_creates_no_study_folder(hostile) -> None:  # type: ignore[no-untyped-def]
    hostile.refuses(
        [
            "--workload",
            "w.csv",
            "--space",
            "chapter",
            "--trials",
            "2",
            "--study",
            "wl",
            "--storage",
            ":memory:",
        ],
        "results/wl",
    )


def test_schedules_of_another_oracle_are_named_as_such(hostile) -> None:  # type: ignore[no-untyped-def]
    """A GA-1 export given to a systolic run: the file is blamed, not each of its machine's
    parameters."""
    argv = ["--oracle", "systolic", "--shape", "16x16x16", "--trials", "2", "--study", "fresh"]
    line = hostile.refuses([*argv, "--enqueue", "base.json"], "--enqueue", "ga1 oracle's schedules")
    assert "T=8" not in line
