"""Leaderboard rows and files: deterministic ranking, typed columns, atomic parquet writes."""

from __future__ import annotations

import json
import os
import random
import stat
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autotune import __version__
from autotune.errors import AutotuneError
from autotune.record import Evaluation, Provenance, TrialRecord
from autotune.results import files, load, tables
from autotune.results import leaderboard as board
from simcore.ga1.machine import Machine
from tests.helpers.examples import examples


def make_row(
    cycles: int | None, params: str, trial: int, machine: str = "{}", violation: float = 0.0
) -> dict[str, object]:
    feasible = cycles is not None
    return {
        "family": "blocked",
        "params_json": params,
        "machine_json": machine,
        "cycles": cycles,
        "feasible": feasible,
        "violation": violation if not feasible else 0.0,
        "trial": trial,
    }


def make_record(
    cycles: int | None, params: str, trial: int, machine: str = "m", violation: float = 0.0
) -> board.Ranked:
    evaluation = Evaluation(cycles is not None, 0.0 if cycles is not None else violation, {})
    record = TrialRecord(trial, {}, evaluation, Provenance())
    return board.Ranked(record, machine, params, None if cycles is None else (float(cycles),))


records_strategy = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(1, 5)),
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["m1", "m2"]),
        st.integers(0, 50),
        st.sampled_from([0.5, 1.0, 3.0]),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=examples(60), deadline=None)
@given(records_strategy, st.randoms(use_true_random=False))
def test_sort_is_deterministic_and_follows_the_documented_key(
    specs: list[tuple], rng: random.Random
) -> None:
    found = [make_record(c, p, t, m, v) for c, p, m, t, v in specs]
    shuffled = list(found)
    rng.shuffle(shuffled)
    ranked = board.rank(found)
    assert [r.sort_key() for r in board.rank(shuffled)] == [
        r.sort_key() for r in ranked
    ]  # the input order never matters
    feasible = [r for r in ranked if r.values is not None]
    assert ranked[: len(feasible)] == feasible  # feasible first
    keys = [(r.values, r.machine_json, r.params_json, r.trial) for r in feasible]
    assert keys == sorted(keys)
    infeasible = [
        (r.evaluation.violation, r.machine_json, r.params_json, r.trial)
        for r in ranked[len(feasible) :]
    ]
    assert infeasible == sorted(infeasible)  # least over the limit first
    # One objective: the front is every feasible record with the best value.
    best = min((r.values for r in feasible), default=None)
    assert [r.pareto for r in ranked] == [r.values is not None and r.values == best for r in ranked]


def test_ties_break_on_machine_then_params_then_trial() -> None:
    found = [
        make_record(10, "b", 1, "m1"),
        make_record(10, "a", 7, "m2"),
        make_record(10, "a", 3, "m1"),
        make_record(10, "a", 2, "m1"),
        make_record(9, "z", 9, "m9"),
    ]
    ranked = board.rank(found)
    assert [(r.values[0], r.machine_json, r.params_json, r.trial) for r in ranked] == [  # type: ignore[index]
        (9, "m9", "z", 9),
        (10, "m1", "a", 2),
        (10, "m1", "a", 3),
        (10, "m1", "b", 1),
        (10, "m2", "a", 7),
    ]


def test_pareto_flags_with_two_objectives() -> None:
    values = [(100, 64), (90, 128), (120, 32), (130, 64), None, (90, 128)]
    assert board.pareto_flags(values) == [
        True,
        True,
        True,
        False,
        False,
        True,
    ]  # equal points are both on the front


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.one_of(st.none(), st.tuples(st.integers(0, 4), st.integers(0, 4))), max_size=10))
def test_pareto_front_is_exactly_the_non_dominated_points(values: list) -> None:
    flags = board.pareto_flags(values)
    for mine, flag in zip(values, flags):
        dominated = mine is not None and any(
            o is not None and o != mine and o[0] <= mine[0] and o[1] <= mine[1] for o in values
        )
        assert flag == (mine is not None and not dominated)


def test_frame_columns_are_typed() -> None:
    rows = [
        dict(make_row(10, "a", 1), bi=4, mxu_util=0.5, verified=True, serpentine=True),
        dict(
            make_row(None, "b", 2, violation=2.0),
            bi=None,
            mxu_util=None,
            verified=None,
            serpentine=None,
        ),
    ]
    frame = board.to_frame(rows)
    assert list(frame["rank"]) == [1, 2]
    assert str(frame["cycles"].dtype) == "Int64" and str(frame["bi"].dtype) == "Int64"
    assert str(frame["mxu_util"].dtype) == "Float64"
    assert str(frame["verified"].dtype) == "boolean" and str(frame["serpentine"].dtype) == "boolean"
    json_rows = board.json_rows(frame)
    assert (
        json_rows[1]["cycles"] is None
        and json_rows[1]["mxu_util"] is None
        and json_rows[1]["verified"] is None
    )
    assert json_rows[0]["cycles"] == 10 and isinstance(json_rows[0]["cycles"], int)
    json.dumps(json_rows)  # plain JSON, no numpy or pandas scalars
    assert board.to_frame([]).empty


def test_write_and_load_round_trip(tmp_path: Path) -> None:
    frame = board.to_frame([dict(make_row(10, "a", 1), m=8, k=8, n=8)])
    metadata = {
        "study": "s",
        "shape": "8x8x8",
        "base_machine": Machine().as_dict(),
        "objectives": ["cycles"],
    }
    path = tables.write("leaderboard", frame, tmp_path / "deep" / "leaderboard.parquet", metadata)
    loaded = load.load(str(path))
    assert loaded.metadata == {
        **metadata,
        "kind": "leaderboard",
        "schema": tables.SCHEMAS["leaderboard"],
        "autotune_version": __version__,
    }
    pd.testing.assert_frame_equal(loaded.frame, frame)
    assert load.load(str(path.parent)).frame.equals(loaded.frame)  # a results folder works too


@pytest.mark.parametrize("kind", sorted(tables.SCHEMAS))
def test_every_kind_is_readable_with_its_own_schema(tmp_path: Path, kind: str) -> None:
    frame = pd.DataFrame({"m": [8], "k": [8], "n": [8], "cycles": [10]})
    path = tables.write(kind, frame, tmp_path / f"{kind}.parquet", {"study": "s"})
    loaded = tables.read(path)
    assert loaded[1]["kind"] == kind and loaded[1]["schema"] == tables.SCHEMAS[kind]


def test_load_rejects_other_files(tmp_path: Path) -> None:
    other = tmp_path / "other.parquet"
    files.write_parquet(pd.DataFrame({"x": [1]}), other, {"kind": "something", "schema": 1})
    with pytest.raises(AutotuneError, match="not an autotune result this version reads"):
        load.load(str(other))
    future = tmp_path / "future.parquet"
    files.write_parquet(
        pd.DataFrame({"x": [1]}),
        future,
        {"kind": "leaderboard", "schema": tables.SCHEMAS["leaderboard"] + 1},
    )
    with pytest.raises(AutotuneError, match=f"schema {tables.SCHEMAS['leaderboard'] + 1}"):
        load.load(str(future))
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not parquet at all")
    with pytest.raises(AutotuneError, match="cannot read"):
        load.load(str(garbage))
    with pytest.raises(AutotuneError, match="no leaderboard"):
        load.load(str(tmp_path / "missing"))


def test_parquet_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "board.parquet"
    files.write_parquet(pd.DataFrame({"cycles": [1, 2]}), path, {"kind": "test", "version": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "board.parquet"
    ]  # no temporary left behind
    assert files.read_parquet(path)[1] == {"kind": "test", "version": 1}
    before = path.read_bytes()

    def broken(table, where, *args, **kwargs):  # type: ignore[no-untyped-def]
        Path(where).write_bytes(b"half a file")  # the crash comes after some bytes hit the disk
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(
        AutotuneError, match="cannot write .*board.parquet: disk full"
    ):  # one line, not a traceback
        files.write_parquet(pd.DataFrame({"cycles": [3]}), path, {"kind": "test", "version": 2})
    assert path.read_bytes() == before  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.parquet"]
    monkeypatch.undo()
    frame, metadata = files.read_parquet(path)
    assert list(frame["cycles"]) == [1, 2] and metadata["version"] == 1


def test_text_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "best.json"
    files.write_text("old\n", path)
    monkeypatch.setattr(os, "replace", lambda *_: (_ for _ in ()).throw(OSError("no rename")))
    with pytest.raises(AutotuneError, match="cannot write .*best.json: no rename"):
        files.write_text("new\n", path)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["best.json"]


def test_written_files_get_the_ordinary_mode(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        path = files.write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "board.parquet")
        text = files.write_text("x", tmp_path / "best.json")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert stat.S_IMODE(text.stat().st_mode) == 0o644


def test_a_co_design_with_no_feasible_machine_says_so_and_names_the_nearest() -> None:
    over = [("area", 54.8), ("area", 3.5), ("scratchpad", 7.0)]
    frame = pd.DataFrame(
        {
            "trial": [0, 0, 1, 2],
            "pareto": [False] * 4,
            "feasible": [False] * 4,
            "violation": [54.8, 54.8, 3.5, 7.0],
            "constraints_json": [
                json.dumps({f"{name}_over": value}) for name, value in [over[0], *over]
            ],
        }
    )
    text = tables.format_front(frame, {"objectives": ["cycles", "area"], "workload": "w"})
    last = text.splitlines()[-1]
    assert last == (
        "no feasible machine: all 3 tried are over a limit; "
        "the nearest, trial 1, is over the area limit by 3.5"
    )
