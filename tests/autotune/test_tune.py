"""The tuner end to end through `autotune.cli.main.main`: every command's smoke test, then what a
study must guarantee (the seeded baseline, ranking, one simulation per distinct candidate,
infeasible points recorded but never simulated, determinism, samplers, the leaderboard schema)."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Iterator

import optuna
import pandas as pd
import pyarrow.parquet as pq
import pytest
from optuna.trial import TrialState

from autotune.cli.main import build_parser, main
from autotune.oracles.ga1 import ORACLE as GA1
from autotune.oracles.ga1 import GA1Oracle
from autotune.record import RESULT as RESULT_ATTR
from autotune.results import load, tables
from autotune.search.objectives import INFEASIBLE_VALUE
from autotune.search.problem import Candidate, Problem
from autotune.storage import read_study
from search_spaces.base import canonical_json
from search_spaces.registry import families
from simcore.ga1.machine import MACHINE_KEYS, Machine
from simcore.shape import Shape

CONSTRAINT_NAME = "slots_over"

CHAPTER_BEST_64 = 37_440  # blocked 4x8, 2 buffers, on 128x128x128 with 64 slots
REQUIRED_COLUMNS = (
    "m",
    "k",
    "n",
    *MACHINE_KEYS,
    "family",
    "bi",
    "bj",
    "buffers",
    "order",
    "params_json",
    "machine_json",
    "cycles",
    "energy_pj",
    "energy_per_mac_pj",
    "edp",
    "area_mm2",
    "energy_compute_pj",
    "energy_on_chip_pj",
    "energy_off_chip_pj",
    "tiles_moved",
    "loads",
    "stores",
    "mxu_util",
    "dma_busy",
    "lower_bound",
    "ratio_to_bound",
    "ratio_to_chapter_best",
    "feasible",
    "violation",
    "verified",
    "trial",
    "sampler",
    "seed",
    "study",
    "timestamp",
    "autotune_version",
)


def run(capsys: pytest.CaptureFixture[str], argv: list[str], expect: int = 0) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == expect, (argv, code, captured.err)
    assert "Traceback" not in captured.err
    return captured.out


def load_study(root: Path, study: str) -> optuna.Study:
    found = read_study(str(root / "results" / study / "study.journal"), study)
    assert found is not None
    return found


def leaderboard(root: Path, study: str) -> pd.DataFrame:
    loaded = load.load(str(root / "results" / study / "leaderboard.parquet"))
    frame, metadata = loaded.frame, loaded.metadata
    assert metadata["study"] == study
    return frame


@pytest.fixture(scope="module")
def chapter128(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One 128x128x128 study over the chapter's space at 64 slots, shared by several tests."""
    root = tmp_path_factory.mktemp("chapter128")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(
                [
                    "--shape",
                    "128x128x128",
                    "--space",
                    "chapter",
                    "--trials",
                    "30",
                    "--study",
                    "c128",
                ]
            )
        assert code == 0
        yield root, out.getvalue()


# --- smoke tests of every command ---------------------------------------------------------------


def test_help_of_every_command_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    commands = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert {"baseline", "tune", "leaderboard", "show", "check"} <= commands
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for command in commands:
        assert command in text
    for command in sorted(commands):
        with pytest.raises(SystemExit) as exit_info:
            main([command, "--help"])
        assert exit_info.value.code == 0
        assert f"usage: autotune {command}" in capsys.readouterr().out


def test_baseline_table_json_and_parquet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = run(capsys, ["baseline", "--shape", "64x64x64", "--out", str(tmp_path / "table.parquet")])
    assert "blocked 4x8" in out and "cycles" in out and "wrote" in out
    table = pd.read_parquet(tmp_path / "table.parquet")
    assert len(table) > 5 and set(table["m"]) == {64}

    out = run(
        capsys,
        [
            "baseline",
            "--shape",
            "64x64x64",
            "--slots",
            "16,64",
            "--json",
            "--out",
            str(tmp_path / "b.parquet"),
        ],
    )
    rows = [json.loads(line) for line in out.splitlines()]
    keys = {
        "schedule",
        "bi",
        "bj",
        "buffers",
        "fits",
        "tiles_moved",
        "loads",
        "stores",
        "cycles",
        "mxu_util",
        "dma_busy",
    }
    assert rows and all(keys <= set(row) for row in rows)
    assert {row["slots"] for row in rows} == {16, 64}
    for row in rows:
        if row["fits"]:
            assert row["cycles"] > 0 and row["tiles_moved"] == row["loads"] + row["stores"]
            assert 0 < row["mxu_util"] <= 1 and 0 < row["dma_busy"] <= 1
        else:
            assert row["cycles"] is None
    assert any(not row["fits"] for row in rows if row["slots"] == 16)
    written = pd.read_parquet(tmp_path / "b.parquet")
    assert len(written) == len(rows)
    assert list(written["cycles"].astype("Float64").fillna(-1)) == [
        r["cycles"] if r["cycles"] is not None else -1 for r in rows
    ]


def test_tune_default_command_equals_explicit_tune(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    common = ["--shape", "32x32x32", "--space", "chapter", "--trials", "20"]
    out = run(capsys, [*common, "--study", "implicit"])
    assert "done: study 'implicit', 20 trials in storage" in out
    assert "wrote results/implicit/leaderboard.parquet" in out
    run(capsys, ["tune", *common, "--study", "explicit"])
    first, second = leaderboard(tmp_path, "implicit"), leaderboard(tmp_path, "explicit")
    assert list(first["params_json"]) == list(second["params_json"])
    assert list(first["cycles"]) == list(second["cycles"])


def test_leaderboard_and_show(
    capsys: pytest.CaptureFixture[str],
    chapter128: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, _ = chapter128
    monkeypatch.chdir(root)
    frame = leaderboard(root, "c128")
    for where in ("c128", "results/c128", "results/c128/leaderboard.parquet"):
        out = run(capsys, ["leaderboard", where, "--top", "3"])
        assert f"study 'c128', shape 128x128x128, {len(frame)} distinct entries" in out
        assert len(out.strip().splitlines()) == 2 + 3
    rows = [
        json.loads(line)
        for line in run(capsys, ["leaderboard", "c128", "--json", "--top", "4"]).splitlines()
    ]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4]
    assert [r["params_json"] for r in rows] == list(frame["params_json"][:4])
    assert rows[0]["cycles"] == int(frame["cycles"].iloc[0])

    out = run(capsys, ["show", "c128", "--rank", "1"])
    assert "rank 1 of study 'c128', shape 128x128x128" in out
    lines = out.splitlines()
    dma = [line for line in lines if line.strip().startswith("dma ")]
    mxu = [line for line in lines if line.strip().startswith("mxu ")]
    assert dma and mxu
    assert "D" in dma[0] and "M" in mxu[0]
    assert f"{int(frame['cycles'].iloc[0])} cycles" in out
    # Past the end is a usage error, not a traceback.
    run(capsys, ["show", "c128", "--rank", str(len(frame) + 1)], expect=2)


# --- the tuner's guarantees --------------------------------------------------------------------


def test_seeded_baseline_is_in_the_leaderboard(chapter128: tuple[Path, str]) -> None:
    root, _ = chapter128
    frame = leaderboard(root, "c128")
    chapter = frame[
        (frame["family"] == "blocked")
        & (frame["bi"] == 4)
        & (frame["bj"] == 8)
        & (frame["buffers"] == 2)
        & (frame["order"] == "row")
    ]
    assert len(chapter) == 1
    assert int(chapter["cycles"].iloc[0]) == CHAPTER_BEST_64
    assert chapter["ratio_to_chapter_best"].iloc[0] == pytest.approx(1.0)
    assert chapter["chapter_best_schedule"].iloc[0] == "blocked 4x8, 2 buf"
    assert int(frame["cycles"].iloc[0]) <= CHAPTER_BEST_64
    assert int(frame["cycles"].min()) == int(frame["cycles"].iloc[0])


def test_rows_are_ranked_without_duplicates(chapter128: tuple[Path, str]) -> None:
    root, _ = chapter128
    frame = leaderboard(root, "c128")
    assert list(frame["rank"]) == list(range(1, len(frame) + 1))
    keys = [
        (not f, c if f else v, mj, pj, t)
        for f, c, v, mj, pj, t in zip(
            frame["feasible"],
            frame["cycles"].astype("Float64").fillna(-1),
            frame["violation"],
            frame["machine_json"],
            frame["params_json"],
            frame["trial"],
        )
    ]
    assert keys == sorted(keys)
    pairs = list(zip(frame["params_json"], frame["machine_json"]))
    assert len(pairs) == len(set(pairs))
    # Every completed trial's candidate is in the leaderboard, from its earliest trial.
    study = load_study(root, "c128")
    earliest: dict[str, int] = {}
    for trial in study.get_trials(states=(TrialState.COMPLETE,)):
        earliest.setdefault(canonical_json(trial.params), trial.number)
    assert sorted(earliest.values()) == sorted(frame["trial"])


def test_leaderboard_schema_and_verification(chapter128: tuple[Path, str]) -> None:
    root, _ = chapter128
    path = root / "results" / "c128" / "leaderboard.parquet"
    metadata = json.loads(pq.read_schema(path).metadata[b"autotune"])
    assert (
        metadata["schema"] == tables.SCHEMAS["leaderboard"] == 4
        and metadata["kind"] == "leaderboard"
    )
    assert (
        metadata["shape"] == "128x128x128"
        and metadata["base_machine"] == Machine(slots=64).as_dict()
    )
    frame = leaderboard(root, "c128")
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    assert not missing
    assert (
        set(frame["study"]) == {"c128"}
        and set(frame["sampler"]) == {"guided"}
        and set(frame["seed"]) == {0}
    )
    assert (frame[["m", "k", "n"]] == 128).all().all() and set(frame["slots"]) == {64}
    top = frame.head(10)
    assert len(top) == 10 and top["feasible"].all()
    assert list(top["verified"]) == [True] * 10
    feasible = frame[frame["feasible"]]
    assert (feasible["cycles"] >= feasible["lower_bound"]).all()
    ratio = feasible["cycles"].astype(float) / feasible["lower_bound"].astype(float)
    assert list(ratio) == pytest.approx(list(feasible["ratio_to_bound"].astype(float)))


def test_cache_simulates_each_distinct_candidate_once_and_never_an_infeasible_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    problem = Problem(Shape(32, 32, 32), Machine(slots=16), families(["chapter"]), GA1)
    queued = {c.key() for c in problem.seeds()} | {c.key() for c in problem.grid()}
    evaluated: list[str] = []
    original = GA1Oracle.evaluate

    def counting(self, family, point, shape, machine):  # type: ignore[no-untyped-def]
        key = canonical_json({"family": family.name, **point})
        assert problem.assess(Candidate(family.name, point, {})).feasible
        evaluated.append(key)
        return original(self, family, point, shape, machine)

    monkeypatch.setattr(GA1Oracle, "evaluate", counting)
    trials = len(queued) + 25  # the grid is exhausted, then the random sampler repeats points
    run(
        capsys,
        [
            "--shape",
            "32x32x32",
            "--slots",
            "16",
            "--space",
            "chapter",
            "--sampler",
            "grid",
            "--trials",
            str(trials),
            "--study",
            "grid",
        ],
    )
    study = load_study(tmp_path, "grid")
    done = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(done) == trials
    feasible = {canonical_json(t.params) for t in done if t.user_attrs[RESULT_ATTR]["feasible"]}
    assert len(evaluated) == len(set(evaluated)) == len(feasible)
    assert set(evaluated) == feasible
    assert (
        len({canonical_json(t.params) for t in done}) < trials
    )  # repeats happened and came from the cache
    assert any("duplicate_of" in t.user_attrs[RESULT_ATTR] for t in done)

    # Infeasible points: recorded, graded, finite, never simulated.
    infeasible = [t for t in done if not t.user_attrs[RESULT_ATTR]["feasible"]]
    assert infeasible
    for trial in infeasible:
        assert trial.constraints[CONSTRAINT_NAME] > 0
        assert trial.constraints[CONSTRAINT_NAME] == trial.user_attrs[RESULT_ATTR]["violation"]
        assert math.isfinite(trial.value) and trial.value == INFEASIBLE_VALUE
        assert "cycles" not in trial.user_attrs[RESULT_ATTR]
    for trial in done:
        if trial.user_attrs[RESULT_ATTR]["feasible"]:
            assert trial.constraints[CONSTRAINT_NAME] == 0 and trial.value < INFEASIBLE_VALUE

    # The grid enqueued exactly the feasible points, and each ran.
    grid = [t for t in done if t.user_attrs.get("source") == "grid"]
    assert grid and all(t.user_attrs[RESULT_ATTR]["feasible"] for t in grid)
    every_feasible = {c.key() for c in problem.grid()}
    assert all(problem.assess(c).feasible for c in problem.grid())
    assert every_feasible <= feasible
    blocked_points = sum(1 for c in problem.grid() if c.family == "blocked")
    assert blocked_points < 4 * 4 * 3 * 2  # some blocks do not fit 16 slots and were left out

    # The leaderboard: infeasible rows last, and no simulation for them either.
    frame = leaderboard(tmp_path, "grid")
    flags = list(frame["feasible"])
    assert flags == sorted(flags, reverse=True) and not flags[-1]
    assert frame.loc[~frame["feasible"], "cycles"].isna().all()
    assert (frame.loc[~frame["feasible"], "violation"] > 0).all()

    # Resuming re-simulates nothing already in storage.
    evaluated.clear()
    run(
        capsys,
        [
            "--shape",
            "32x32x32",
            "--slots",
            "16",
            "--space",
            "chapter",
            "--sampler",
            "grid",
            "--trials",
            "10",
            "--study",
            "grid",
        ],
    )
    done_after = load_study(tmp_path, "grid").get_trials(states=(TrialState.COMPLETE,))
    new = {
        canonical_json(t.params) for t in done_after if t.user_attrs[RESULT_ATTR]["feasible"]
    } - feasible
    assert sorted(evaluated) == sorted(new)


def test_same_seed_same_leaderboard(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    common = ["--shape", "32x32x32", "--trials", "25", "--seed", "7"]
    run(capsys, [*common, "--study", "first"])
    run(capsys, [*common, "--study", "second"])
    first, second = leaderboard(tmp_path, "first"), leaderboard(tmp_path, "second")
    assert "general_delayed" in set(first["family"])  # the default spaces: the general orders
    assert list(first["params_json"]) == list(second["params_json"])
    assert list(first["cycles"].astype("Float64").fillna(-1)) == list(
        second["cycles"].astype("Float64").fillna(-1)
    )
    assert list(first["trial"]) == list(second["trial"])
    # A different seed explores differently.
    run(capsys, [*common[:-1], "8", "--study", "third"])
    assert set(leaderboard(tmp_path, "third")["params_json"]) != set(first["params_json"])


@pytest.mark.parametrize("sampler", ["tpe", "random", "grid", "nsga2"])
def test_every_sampler_runs(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sampler: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    out = run(
        capsys,
        [
            "--shape",
            "32x32x32",
            "--space",
            "chapter",
            "--sampler",
            sampler,
            "--trials",
            "25",
            "--study",
            sampler,
        ],
    )
    assert f"done: study '{sampler}', 25 trials in storage" in out
    study = load_study(tmp_path, sampler)
    states = [t.state for t in study.trials]
    assert states.count(TrialState.COMPLETE) == 25
    # Grid queues every feasible point up front; what the budget did not reach still waits.
    assert set(states) == (
        {TrialState.COMPLETE, TrialState.WAITING} if sampler == "grid" else {TrialState.COMPLETE}
    )
    frame = leaderboard(tmp_path, sampler)
    assert set(frame["sampler"]) == {sampler}
    assert frame["verified"].head(10).all()
    # The chapter's best on 32x32x32 is seeded, whatever the sampler.
    assert int(frame["cycles"].iloc[0]) <= int(frame["chapter_best_cycles"].iloc[0])


def test_search_machine_respects_the_scratchpad_budget(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    budget = 2048  # 32 slots of 8x8 tiles; the base machine (64 slots) is over it
    run(
        capsys,
        [
            "--shape",
            "32x32x32",
            "--space",
            "chapter",
            "--search-machine",
            "--max-scratchpad-words",
            str(budget),
            "--machine-range",
            "slots=8:64",
            "--sampler",
            "random",
            "--trials",
            "40",
            "--study",
            "machines",
        ],
    )
    frame = leaderboard(tmp_path, "machines")
    words = frame["slots"].astype(int) * frame["T"].astype(int) ** 2
    assert frame["feasible"].any() and (~frame["feasible"]).any()
    assert (words[frame["feasible"]] <= budget).all()
    assert (frame.loc[words > budget, "feasible"] == False).all()  # noqa: E712
    assert len(set(frame["slots"])) > 1
    assert frame.loc[frame["feasible"], "verified"].head(10).all()
    for _, row in frame[frame["feasible"]].iterrows():
        assert json.loads(row["machine_json"])["slots"] == row["slots"]
        assert "slots" not in json.loads(row["params_json"])


def test_the_default_spaces_search_the_store_delay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["--shape", "16x16x24", "--slots", "6", "--machine", "dma_setup=4"]
    run(capsys, [*argv, "--trials", "200", "--study", "delayed"])
    frame = leaderboard(tmp_path, "delayed")
    assert set(frame["family"]) <= {"blocked", "kouter", "general_delayed", "strips_delayed"}
    assert frame["verified"].head(5).all()
    delays = {json.loads(p).get("store_delay") for p in frame["params_json"]}
    assert {0, 1, 2} <= delays
    plain = ["--space", "chapter,general,strips", "--trials", "200", "--study", "plain"]
    run(capsys, [*argv, *plain])
    # The proven optimum (160) defers a store; without the delay the search ends at 168.
    assert int(frame["cycles"].iloc[0]) < int(leaderboard(tmp_path, "plain")["cycles"].iloc[0])
