"""Wrong kinds of file: a folder where a file is expected, a file where a folder is, a missing
one, and files autotune did not write. Each is refused in one line that says which (never "not
found" for a folder, never "File exists"), and nothing is created or cut."""

from __future__ import annotations

from pathlib import Path

import pytest

SHAPE = ["--shape", "16x16x16", "--space", "chapter"]
TUNE = [*SHAPE, "--trials", "2", "--study", "fresh"]

A_FOLDER = [
    (["--workload", "adir.csv", "--space", "chapter"], ("adir.csv", "is a directory")),
    ([*TUNE, "--enqueue", "adir"], ("--enqueue", "adir", "is a directory")),
    (["check", "--reference", "adir", "--trials", "2"], ("adir", "is a directory")),
    (["check", "--reference", "adir", "--trials", "2", "--update"], ("adir", "is a directory")),
    ([*TUNE, "--storage", "adir"], ("adir", "is a directory")),
    (["studies", "--storage", "adir"], ("adir", "is a directory")),
    (["leaderboard", "base", "--storage", "adir"], ("adir", "is a directory")),
    (["export", "base", "--out", "adir"], ("--out", "adir", "is a directory")),
    (["baseline", "--shape", "16x16x16", "--out", "adir"], ("--out", "adir", "is a directory")),
    (["sweep", "--shape", "16x16x16", "--out", "adir"], ("--out", "adir", "is a directory")),
    (["leaderboard", "results/base/study.journal/"], ("cannot read results/base/study.journal",)),
]

A_FILE = [
    ([*TUNE, "--results", "afile"], ("--results", "afile is a file, not a folder")),
    (["studies", "--results", "afile"], ("--results", "afile is a file, not a folder")),
    (["export", "base", "--out", "afile/x.json"], ("--out", "afile is a file, not a folder")),
    (
        ["baseline", "--shape", "16x16x16", "--out", "afile/x.parquet"],
        ("--out", "afile is a file, not a folder"),
    ),
    (
        ["sweep", "--shape", "16x16x16", "--out", "afile/x.parquet"],
        ("--out", "afile is a file, not a folder"),
    ),
    (["plot", "base", "--out", "afile"], ("--out", "afile is a file, not a folder")),
    (
        ["check", "--reference", "afile/best.json", "--update", "--trials", "2"],
        ("afile is a file, not a folder",),
    ),
    ([*TUNE, "--storage", "afile/x.journal"], ("afile",)),
]

MISSING = [
    (["--workload", "missing.csv"], ("missing.csv", "not found")),
    ([*TUNE, "--enqueue", "missing.json"], ("--enqueue", "missing.json", "not found")),
    (["check", "--reference", "missing.json", "--trials", "2"], ("missing.json", "not found")),
    (["leaderboard", "nosuch"], ("no leaderboard at 'nosuch'",)),
    (["show", "nosuch"], ("no leaderboard at 'nosuch'",)),
    (["export", "nosuch"], ("no leaderboard at 'nosuch'",)),
    (["plot", "nosuch"], ("no leaderboard at 'nosuch'",)),
    (["leaderboard", "nosuch.parquet"], ("no leaderboard at 'nosuch.parquet'",)),
    (["studies", "--storage", "missing.journal"], ("missing.journal", "not found")),
    (
        [*TUNE, "--storage", "nofolder/x.journal"],
        ("nofolder/x.journal", "no such folder (nofolder)"),
    ),
    (
        [*TUNE, "--storage", "sqlite:////nonexistent-dir/x/y.db"],
        ("sqlite:////nonexistent-dir/x/y.db",),
    ),
    (["--workload", "w.yaml"], ("w.yaml", "unknown format")),
]

FOREIGN = [
    ([*TUNE, "--storage", "notes.txt"], ("notes.txt", "not a journal record")),
    ([*TUNE, "--storage", "blob"], ("blob", "not a journal record")),
    ([*TUNE, "--storage", "foreign.parquet"], ("foreign.parquet",)),
    ([*TUNE, "--storage", "results/base/leaderboard.parquet"], ("leaderboard.parquet",)),
    ([*TUNE, "--storage", "base.json"], ("base.json",)),
    (["studies", "--storage", "notes.txt"], ("notes.txt", "not a journal record")),
    (["leaderboard", "base", "--storage", "notes.txt"], ("notes.txt",)),
    ([*TUNE, "--enqueue", "foreign.parquet"], ("--enqueue", "not a JSON schedule file")),
    ([*TUNE, "--enqueue", "notes.txt"], ("--enqueue", "not a JSON schedule file")),
    ([*TUNE, "--enqueue", "results/base/study.journal"], ("--enqueue", "not a JSON schedule file")),
    (["leaderboard", "notes.txt"], ("cannot read notes.txt",)),
    (["leaderboard", "foreign.parquet"], ("foreign.parquet", "not an autotune result")),
    (["leaderboard", "base.json"], ("base.json",)),
    (
        ["check", "--reference", "foreign.parquet", "--trials", "2"],
        ("foreign.parquet", "unreadable"),
    ),
    (["--workload", "notes.txt"], ("notes.txt", "unknown format")),
]

ALL = (
    [("folder-as-file", a, n) for a, n in A_FOLDER]
    + [("file-as-folder", a, n) for a, n in A_FILE]
    + [("missing", a, n) for a, n in MISSING]
    + [("foreign", a, n) for a, n in FOREIGN]
)


@pytest.mark.parametrize(
    ("kind", "argv", "named"), ALL, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(ALL)]
)
def test_a_wrong_kind_of_file_is_named(
    hostile, kind: str, argv: list[str], named: tuple[str, ...]
) -> None:  # type: ignore[no-untyped-def]
    hostile.refuses(argv, *named)


def test_a_study_folder_that_is_a_file(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    (world / "results" / "taken").write_text("not a folder\n")
    hostile.refuses(
        [*SHAPE, "--trials", "2", "--study", "taken"], "results/taken is a file, not a folder"
    )


def test_a_study_storage_that_is_a_folder(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    (world / "results" / "odd" / "study.journal").mkdir(parents=True)
    hostile.refuses(
        [*SHAPE, "--trials", "2", "--study", "odd"], "results/odd/study.journal is a directory"
    )


def test_the_default_plot_folder_is_a_file(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    (world / "results" / "base" / "plots").write_text("in the way\n")
    hostile.refuses(["plot", "base"], "results/base/plots is a file, not a folder")


def test_an_unreadable_workload(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    (world / "latin1.csv").write_bytes("name,shape,weight\ncaf\xe9,8x8x8,1\n".encode("latin-1"))
    hostile.refuses(["--workload", "latin1.csv", "--space", "chapter"], "latin1.csv")


def test_a_binary_file_as_storage_is_not_cut(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    """A file without a newline looks like one torn record: it is refused, never truncated."""
    before = (world / "blob").read_bytes()
    hostile.refuses([*TUNE, "--storage", "blob"], "blob")
    assert (world / "blob").read_bytes() == before
