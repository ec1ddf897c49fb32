"""Damaged and foreign files. A derived file (a leaderboard, a workload summary) is a cache: when
it is damaged, stale or unverified the readers rebuild it from the storage, equal to what the
run wrote, with a one-line note. Damaged sources (a journal, a reference record, a schedule
file, a workload) are refused in one line and left as they were; a torn last journal record is
the one repair a writer makes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest

SHAPE = ["--shape", "16x16x16", "--space", "chapter"]
BASE = [*SHAPE, "--sampler", "grid", "--more-trials", "2", "--study", "base"]
BOARD = "results/base/leaderboard.parquet"


# --- the leaderboard, a cache ------------------------------------------------------------------


def truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def emptied(path: Path) -> None:
    path.write_bytes(b"")


def garbage(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 4)


def flipped_footer(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-6:-4] = b"\xff\xff"  # the footer's length: the file no longer parses
    path.write_bytes(bytes(data))


def foreign(path: Path) -> None:
    pd.DataFrame({"x": [1]}).to_parquet(path)


def removed(path: Path) -> None:
    path.unlink()


def text(path: Path) -> None:
    path.write_text("not a parquet file\n")


def stale(path: Path) -> None:
    _rewrite_metadata(path, trials=3)


def unverified(path: Path) -> None:
    _rewrite_metadata(path, unverified=True)


def tampered(path: Path) -> None:
    """The metadata changed behind autotune's back (its checksum no longer matches)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    metadata = {**json.loads(table.schema.metadata[b"autotune"]), "trials": 3}
    changed = {**table.schema.metadata, b"autotune": json.dumps(metadata).encode()}
    pq.write_table(table.replace_schema_metadata(changed), path)


def _rewrite_metadata(path: Path, **changes: object) -> None:
    """The file as autotune would write it with other metadata (its checksum recomputed)."""
    from autotune.results.files import read_parquet, write_parquet

    frame, metadata = read_parquet(path)
    write_parquet(frame, path, {**metadata, **changes})


DAMAGES: list[Callable[[Path], None]] = [
    truncated,
    emptied,
    garbage,
    flipped_footer,
    foreign,
    removed,
    text,
    stale,
    unverified,
    tampered,
]
READERS = [["leaderboard", "base"], ["show", "base"], ["export", "base"], ["plot", "base"]]


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("reader", READERS, ids=lambda a: a[0])
def test_a_damaged_leaderboard_is_rebuilt_equal(
    hostile,
    world: Path,
    damage: Callable[[Path], None],  # type: ignore[no-untyped-def]
    reader: list[str],
) -> None:
    damage(world / BOARD)
    result = hostile.accepts(
        reader,
        "rebuilt results/base/leaderboard.parquet from study 'base' (10 finished trials)",
        rebuilt=[BOARD],
        changed=[],
    )
    assert len([line for line in result.err.splitlines() if "rebuilt" in line]) == 1
    if not (world / BOARD).exists():
        pytest.fail("not rebuilt")


def test_a_leaderboard_given_by_path_is_rebuilt_too(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    garbage(world / BOARD)
    hostile.accepts(["leaderboard", BOARD], "rebuilt", rebuilt=[BOARD])


def test_a_leaderboard_of_a_newer_autotune_is_never_rebuilt_over(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    _rewrite_metadata(world / BOARD, schema=99)
    hostile.refuses(["leaderboard", "base"], "newer autotune", BOARD)
    hostile.refuses(BASE, "newer autotune", BOARD)


def test_a_workload_summary_is_rebuilt_from_its_gemm_studies(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    garbage(world / "results" / "wl" / "workload.parquet")
    hostile.accepts(
        ["leaderboard", "wl"],
        "rebuilt results/wl/workload.parquet from the 2 GEMM studies of 'wl'",
        "weighted total",
        rebuilt=["results/wl/workload.parquet"],
    )


def test_a_missing_workload_summary_is_rebuilt(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    (world / "results" / "wl" / "workload.parquet").unlink()
    hostile.accepts(["leaderboard", "wl"], "rebuilt results/wl/workload.parquet", "weighted total")


def test_a_damaged_summary_without_its_studies_is_one_line(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    shutil.rmtree(world / "results" / "wl-a")
    garbage(world / "results" / "wl" / "workload.parquet")
    hostile.refuses(
        ["leaderboard", "wl"], "results/wl/workload.parquet", "no storage holds its study"
    )


# --- the journal, the source -------------------------------------------------------------------

JOURNAL = "results/base/study.journal"


def journal_lines(world: Path) -> list[bytes]:
    return (world / JOURNAL).read_bytes().splitlines(keepends=True)


def test_a_garbage_record_refuses_tune_and_keeps_the_leaderboard_readable(
    hostile, world: Path
) -> None:  # type: ignore[no-untyped-def]
    lines = journal_lines(world)
    lines[5] = b"garbage\n"
    (world / JOURNAL).write_bytes(b"".join(lines))
    hostile.refuses(BASE, JOURNAL, "record 6", "not a journal record")
    hostile.accepts(
        ["leaderboard", "base"],
        "warning: cannot read storage 'results/base/study.journal': record 6",
        "study 'base'",
    )
    listed = hostile.accepts(["studies"])
    assert any(
        line.startswith("base") and "damaged: cannot read storage" in line
        for line in listed.out.splitlines()
    )
    assert any(line.startswith("wl-a") and "ga1" in line for line in listed.out.splitlines())


def test_a_torn_last_record_is_cut_and_the_study_resumes(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    with open(world / JOURNAL, "ab") as handle:
        handle.write(b'{"op_code":5,"worker_id":"x","study_id":0,"datetime_start":"20')
    hostile.accepts(["leaderboard", "base"])  # a reader ignores the tail and changes nothing
    hostile.accepts(BASE, "12 trials in storage", changed=[JOURNAL, BOARD])
    assert (world / JOURNAL).read_bytes().endswith(b"\n")


def test_a_tail_that_is_no_record_is_never_cut(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    with open(world / JOURNAL, "ab") as handle:
        handle.write(b"\x00\x01 binary tail")
    hostile.refuses(BASE, JOURNAL, "not a journal record", "nothing was cut")


@pytest.mark.parametrize("loss", ["emptied", "deleted", "replaced"])
def test_a_lost_journal_is_never_silently_restarted(hostile, world: Path, loss: str) -> None:  # type: ignore[no-untyped-def]
    path = world / JOURNAL
    if loss == "emptied":
        path.write_bytes(b"")
    elif loss == "deleted":
        path.unlink()
    else:
        shutil.copy(world / "results" / "wl-a" / "study.journal", path)
    line = hostile.refuses(
        BASE, BOARD, "lists 10 finished trials", "holds 0", "restore the storage"
    )
    assert "autotune leaderboard results/base/leaderboard.parquet" in line
    hostile.accepts(["leaderboard", BOARD], "study 'base', shape 16x16x16, 10 distinct entries")


def test_an_emptied_journal_is_listed_as_damaged(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    (world / JOURNAL).write_bytes(b"")
    listed = hostile.accepts(["studies"])
    assert any(
        line.startswith("base") and "holds no study" in line for line in listed.out.splitlines()
    )


def test_studies_when_every_storage_is_damaged(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    for journal in (world / "results").glob("*/study.journal"):
        journal.write_bytes(b"nonsense\n")
    listed = hostile.accepts(["studies"])
    assert sum("  damaged: " in line for line in listed.out.splitlines()) == 3
    hostile.accepts(["studies", "--json"], '"damaged"')


# --- a reference record, a schedule file, a workload -------------------------------------------

REFERENCES = [
    ('{"schema": 1}', "'records' list"),
    ('{"records": "x"}', "'records' list"),
    ('{"records": [{}]}', "record 1 lacks key"),
    (
        '{"records": [{"key": 1, "cycles": 5, "family": "b", "params": "{}"}]}',
        "record 1 has a malformed key",
    ),
    (
        '{"records": [{"key": "k", "cycles": -5, "family": "b", "params": "{}"}]}',
        "record 1 has a malformed key or cycles",
    ),
    (
        '{"records": [{"key": "k", "cycles": true, "family": "b", "params": "{}"}]}',
        "malformed key or cycles",
    ),
    ('{"records": [{"key": "k", "cycles": 5, "family": "b"}]}', "lacks params"),
    ("[]", "'records' list"),
    ('"text"', "'records' list"),
    ("{not json", "unreadable"),
    ("", "unreadable"),
]


@pytest.mark.parametrize(("content", "why"), REFERENCES, ids=[w for _, w in REFERENCES])
def test_a_malformed_reference_record(hostile, world: Path, content: str, why: str) -> None:  # type: ignore[no-untyped-def]
    (world / "ref.json").write_text(content)
    for update in ([], ["--update"]):
        line = hostile.refuses(
            ["check", "--reference", "ref.json", "--trials", "2", *update], "ref.json", why
        )
        assert "KeyError" not in line


def test_a_failing_check_never_updates_the_reference(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    records = [
        {"key": f"128x128x128|{key}", "cycles": 1, "family": "blocked", "params": "{}"}
        for key in (
            "T=8,slots=64,dma_setup=16,dma_words_per_cycle=16,mxu_cycles=64,mxu_fill=8,vpu_lanes=8,sfu_lanes=4",
        )
    ]
    (world / "ref.json").write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"schema": 1, "records": records}).encode()
    )
    result = hostile.accepts(
        ["check", "--reference", "ref.json", "--trials", "2", "--update"],
        "not updated: the check failed",
        code=1,
    )
    assert "check failed" in result.err


def exported(world: Path, **changes: object) -> str:
    data = json.loads((world / "base.json").read_text())
    data.update(changes)
    for key, value in changes.items():
        if value is None:
            data.pop(key)
    return json.dumps(data)


SCHEDULES: list[tuple[Callable[[Path], str], str]] = [
    (lambda w: exported(w, version=2), "format version 2 is newer"),
    (lambda w: exported(w, version=99), "format version 99 is newer"),
    (lambda w: exported(w, version=0), "format version 0"),
    (lambda w: exported(w, version="1"), "format version '1'"),
    (lambda w: exported(w, version=None), "format version None"),
    (lambda w: exported(w, format="other"), "not an exported schedule"),
    (lambda w: exported(w, params=None), "not an exported schedule"),
    (lambda w: exported(w, params=[1, 2]), "not an exported schedule"),
    (lambda w: exported(w, machine=None), "not an exported schedule"),
    (lambda w: exported(w, shape="8x8"), "malformed shape"),
    (lambda w: exported(w, machine={"slots": 16}), "another machine"),
    (lambda w: "[]", "holds no schedule"),
    (lambda w: "[1, 2]", "not an exported schedule"),
    (lambda w: "{", "not a JSON schedule file"),
]


@pytest.mark.parametrize(("make", "why"), SCHEDULES, ids=[w for _, w in SCHEDULES])
def test_a_malformed_schedule_file(
    hostile, world: Path, make: Callable[[Path], str], why: str
) -> None:  # type: ignore[no-untyped-def]
    (world / "s.json").write_text(make(world))
    hostile.refuses(
        [*SHAPE, "--trials", "2", "--study", "fresh", "--enqueue", "s.json"], "s.json", why
    )


def test_a_schedule_file_with_a_byte_order_mark_is_read(hostile, world: Path) -> None:  # type: ignore[no-untyped-def]
    (world / "s.json").write_bytes(
        b"\xef\xbb\xbf" + (world / "base.json").read_bytes().replace(b"\n", b"\r\n")
    )
    hostile.accepts(
        [*SHAPE, "--trials", "2", "--study", "fresh", "--enqueue", "s.json"], "2 trials in storage"
    )


WORKLOADS = [
    ("name,shape,weight\na,16x16x16,1e308\n", "weight 1e+308 is too large"),
    ("name,shape,weight\na,16x16x16,1e10\n", "too large"),
    ("name,shape,weight\na,16x16x16,inf\n", "weight must be a positive number"),
    ("name,shape,weight\na,16x16x16,nan\n", "weight must be a positive number"),
    ("name,shape,weight\na,16x16x16,-1\n", "weight must be positive"),
    ("name,shape,weight\na,16x16x16,0\n", "weight must be positive"),
    ("name,shape,weight\na,16x16x16,\uff11\n", "weight must be a positive number"),
    ("name,shape,weight\na,16x16x16,1_0\n", "weight must be a positive number"),
    ("name,shape,weight\na,16x16x16\n", "expected 3 fields"),
    ("name,shape,weight\na,16x16x16,\n", "missing weight"),
    ("name,shape,weight\na,1\uff16x16x16,1\n", "malformed shape"),
    ("name,shape,weight\na,16x16x16,1\na,8x8x8,1\n", "appears twice"),
    ("name,shape,weight\n", "is empty"),
    ("nam,shape,weight\na,16x16x16,1\n", "got 'nam','shape','weight'"),
    ("name,shape,weight\u200b\na,16x16x16,1\n", "'weight\\u200b'"),
    ("\ufeff\ufeffname,shape,weight\na,16x16x16,1\n", "'\\ufeffname'"),
]


@pytest.mark.parametrize(("content", "why"), WORKLOADS, ids=[w for _, w in WORKLOADS])
def test_a_malformed_csv_workload(hostile, world: Path, content: str, why: str) -> None:  # type: ignore[no-untyped-def]
    (world / "bad.csv").write_text(content, encoding="utf-8")
    hostile.refuses(
        ["--workload", "bad.csv", "--space", "chapter", "--trials", "2"], "bad.csv", why
    )


TOMLS = [
    (
        '[[gemm]]\nname = "a"\nshape = "16x16x16"\nweight = true\n',
        "weight must be a positive number",
    ),
    ('[[gemm]]\nname = "a"\nshape = 16\nweight = 1\n', "malformed shape"),
    ('[[gemm]]\nname = "a"\nshape = "16x16x16"\nweight = 1e300\n', "too large"),
    ("[[gemm]\n", "invalid TOML"),
    ("[other]\nx = 1\n", "unknown table"),
    ("gemm = 3\n", "array of tables"),
]


@pytest.mark.parametrize(("content", "why"), TOMLS, ids=[w for _, w in TOMLS])
def test_a_malformed_toml_workload(hostile, world: Path, content: str, why: str) -> None:  # type: ignore[no-untyped-def]
    (world / "bad.toml").write_text(content)
    hostile.refuses(
        ["--workload", "bad.toml", "--space", "chapter", "--trials", "2"], "bad.toml", why
    )


@pytest.mark.parametrize("encoding", ["bom", "crlf", "bom-crlf"])
def test_a_csv_workload_with_a_byte_order_mark_or_crlf_is_read(
    hostile, world: Path, encoding: str
) -> None:  # type: ignore[no-untyped-def]
    body = "name,shape,weight\na,16x16x16,2\n"
    data = (body.replace("\n", "\r\n") if "crlf" in encoding else body).encode()
    (world / "ok.csv").write_bytes((b"\xef\xbb\xbf" if "bom" in encoding else b"") + data)
    hostile.accepts(
        [
            "--workload",
            "ok.csv",
            "--space",
            "chapter",
            "--trials",
            "2",
            "--study",
            f"ok-{encoding}",
        ],
        "weighted total",
    )
