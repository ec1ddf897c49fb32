"""Results that can always be read back: a killed study's leaderboard rebuilt from its storage,
the list of studies, every parquet kind through `leaderboard`, --json on every command that
prints a table, exported schedules (JSON back into `tune --enqueue`, asm run by the chapter's
listing), provenance per trial, and the verification column."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pandas as pd
import pytest

from autotune.cli.main import main
from autotune.errors import AutotuneError
from autotune.oracles.ga1 import ORACLE as GA1
from autotune.storage import read_study
from search_spaces.registry import find_family
from simcore import Machine, Shape, simulate
from simcore.ga1.asm import from_text, tuples
from tests.helpers.waiting import PATIENCE, wait_until

ROOT = Path(__file__).resolve().parents[3]
SMALL = ["--shape", "64x64x64", "--space", "chapter"]


def run(capsys: pytest.CaptureFixture[str], argv: list[str], expect: int = 0) -> tuple[str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == expect, (argv, code, captured.err)
    assert "Traceback" not in captured.err
    return captured.out, captured.err


@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow  # a tuning process, killed
def test_a_killed_study_is_read_back_from_its_storage(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, stored
) -> None:  # type: ignore[no-untyped-def]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "autotune", *SMALL, "--trials", "100000", "--study", "killed"],
        cwd=in_tmp,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    storage = str(in_tmp / "results" / "killed" / "study.journal")

    def finished_now() -> int:
        try:
            found = read_study(storage, "killed")
        except AutotuneError:  # not created yet
            return 0
        return (
            0
            if found is None
            else len(found.get_trials(states=(optuna.trial.TrialState.COMPLETE,)))
        )

    wait_until(lambda: finished_now() >= 20, "20 finished trials")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=PATIENCE)
    assert not (in_tmp / "results" / "killed" / "leaderboard.parquet").exists()
    complete = len(stored(in_tmp, "killed").get_trials(states=(optuna.trial.TrialState.COMPLETE,)))

    out, err = run(capsys, ["leaderboard", "killed", "--top", "3"])
    assert (
        f"rebuilt results/killed/leaderboard.parquet from study 'killed' ({complete} finished trials)"
        in err
    )
    assert "study 'killed', shape 64x64x64" in out and "yes" in out.splitlines()[2]
    frame = pd.read_parquet(in_tmp / "results" / "killed" / "leaderboard.parquet")
    assert (
        frame["verified"].head(3).all() and int(frame["cycles"].iloc[0]) <= 5264
    )  # the chapter's 4x8 is seeded
    _, err = run(capsys, ["leaderboard", "killed"])
    assert "rebuilt" not in err  # up to date: read, not rebuilt

    out, _ = run(capsys, ["studies"])
    line = next(line for line in out.splitlines() if line.startswith("killed"))
    assert "ga1" in line and "64x64x64" in line and "slots=64" in line and f" {complete} " in line
    rows = [json.loads(line) for line in run(capsys, ["studies", "--json"])[0].splitlines()]
    assert rows == [
        dict(rows[0], study="killed", trials=complete, best_cycles=float(frame["cycles"].iloc[0]))
    ]

    # A resume adds trials: the leaderboard is rebuilt again with them. The chapter space of
    # 64x64x64 has 73 schedules that fit, which a fast run may have tried all of before the kill:
    # a new trial is then a repeat, ranked as the row of the trial it repeats.
    run(capsys, [*SMALL, "--more-trials", "3", "--study", "killed", "--heartbeat", "1"])
    frame_after = pd.read_parquet(in_tmp / "results" / "killed" / "leaderboard.parquet")
    finished = stored(in_tmp, "killed").get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert len(finished) >= complete + 3
    ranked = set(frame_after["trial"])
    for trial in finished[-3:]:
        assert trial.number in ranked or trial.user_attrs["result"].get("duplicate_of") in ranked


def test_every_parquet_kind_reads_back(capsys: pytest.CaptureFixture[str], in_tmp: Path) -> None:
    (in_tmp / "w.csv").write_text("name,shape,weight\na,16x16x16,2\nb,8x8x24,1\n")
    run(capsys, ["--workload", "w.csv", "--slots", "16", "--trials", "6", "--study", "wl"])
    run(capsys, ["baseline", "--shape", "32x32x32", "--schedules", "1x1:2,2x2:2"])
    run(
        capsys,
        [
            "sweep",
            "--shape",
            "32x32x32",
            "--machine-grid",
            "dma_setup=16,4",
            "--schedules",
            "1x1:2",
        ],
    )
    run(
        capsys,
        [
            "--shape",
            "32x32x32",
            "--space",
            "chapter",
            "--trials",
            "10",
            "--study",
            "mo",
            "--search-machine",
            "--objectives",
            "cycles,scratchpad_words",
        ],
    )
    # Tables are named by everything they depend on (shape, scratchpad sizes, a digest of the rest).
    (baseline,), (sweep,) = (
        sorted((in_tmp / "results" / kind).glob("32x32x32-s64-*.parquet"))
        for kind in ("baseline", "sweep")
    )
    for path, expected in (
        ("results/wl/workload.parquet", "workload 'w': 2 GEMMs"),
        ("wl", "weighted total"),
        (str(baseline), "baseline of 32x32x32"),
        (str(sweep), "sweep of 32x32x32"),
        ("results/mo/pareto.parquet", "on the Pareto front"),
        ("wl-a", "study 'wl-a'"),
    ):
        out, _ = run(capsys, ["leaderboard", path])
        assert expected in out, (path, out)
    # Every multi-objective run writes its front; the front is the leaderboard's Pareto rows.
    board, front = (
        pd.read_parquet(in_tmp / "results" / "mo" / "leaderboard.parquet"),
        pd.read_parquet(in_tmp / "results" / "mo" / "pareto.parquet"),
    )
    assert list(front["params_json"] + front["machine_json"]) == list(
        (board["params_json"] + board["machine_json"])[board["pareto"]]
    )
    assert list(front["rank"]) == list(range(1, len(front) + 1))


@pytest.mark.parametrize(
    "argv",
    [
        ["baseline", "--shape", "32x32x32", "--schedules", "1x1:2"],
        ["--shape", "32x32x32", "--space", "chapter", "--trials", "4", "--study", "j"],
        ["--workload", "w.csv", "--trials", "3", "--study", "jw"],
        [
            "--workload",
            "w.csv",
            "--trials",
            "4",
            "--study",
            "jc",
            "--search-machine",
            "--objectives",
            "cycles,scratchpad_words",
        ],
        ["leaderboard", "j0"],
        ["show", "j0"],
        ["studies"],
        ["sweep", "--shape", "32x32x32", "--machine-grid", "dma_setup=4", "--schedules", "1x1:2"],
        ["systolic", "--shape", "8x8x8", "--array", "4x4"],
        [
            "tile-model",
            "--shape",
            "64x64x64",
            "--tile",
            "8x8x8",
            "--operand-bytes",
            "1",
            "--accumulator-bytes",
            "4",
        ],
    ],
)
def test_json_on_every_command_that_prints_a_table(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, argv: list[str]
) -> None:
    (in_tmp / "w.csv").write_text("name,shape,weight\na,16x16x16,2\n")
    run(capsys, ["--shape", "16x16x16", "--space", "chapter", "--trials", "3", "--study", "j0"])
    out, _ = run(capsys, [*argv, "--json"])
    lines = out.strip().splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)


def test_check_prints_json(capsys: pytest.CaptureFixture[str], in_tmp: Path) -> None:
    out, _ = run(
        capsys,
        ["check", "--trials", "20", "--reference", str(in_tmp / "ref.json"), "--update", "--json"],
    )
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["slots"] for r in rows] == [64, 16] and all(
        r["verified"] and r["cycles"] <= r["chapter_cycles"] for r in rows
    )


def test_export_json_is_a_starting_point_and_asm_runs_on_the_listing(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, reference_ga1: Any, stored
) -> None:  # type: ignore[no-untyped-def]
    run(capsys, [*SMALL, "--trials", "20", "--study", "src"])
    frame = pd.read_parquet(in_tmp / "results" / "src" / "leaderboard.parquet")
    run(capsys, ["export", "src", "--rank", "3", "--out", "third.json"])
    exported = json.loads((in_tmp / "third.json").read_text())
    assert exported["params"] == {
        k: v for k, v in json.loads(frame["params_json"].iloc[2]).items() if k != "family"
    }
    assert exported["machine"] == Machine(slots=64).as_dict() and exported["cycles"] == int(
        frame["cycles"].iloc[2]
    )

    run(capsys, [*SMALL, "--trials", "2", "--study", "dst", "--enqueue", "third.json"])
    first = stored(in_tmp, "dst").trials[0]
    assert first.user_attrs["source"] == "enqueued"
    assert json.dumps(
        {"family": exported["family"], **exported["params"]}, sort_keys=True
    ) == json.dumps(first.params, sort_keys=True)
    _, err = run(
        capsys,
        [*SMALL, "--trials", "2", "--study", "dst16", "--slots", "16", "--enqueue", "third.json"],
        expect=2,
    )
    assert "exported for another machine: slots=64 (this run: 16)" in err
    (in_tmp / "junk.json").write_text("{}")
    _, err = run(
        capsys, [*SMALL, "--trials", "2", "--study", "dst", "--enqueue", "junk.json"], expect=2
    )
    assert "not an exported schedule" in err

    text, _ = run(capsys, ["export", "src", "--format", "asm"])
    row = frame.iloc[0]
    point = {k: v for k, v in json.loads(row["params_json"]).items() if k != "family"}
    shape, machine = Shape(64, 64, 64), Machine(slots=64)
    program = GA1.program(find_family(row["family"]), point, shape, machine)
    assert program is not None and np.array_equal(from_text(text).code, program.code)
    assert simulate(machine, from_text(text)).cycles == int(row["cycles"])
    ga = reference_ga1.ga
    dram = {
        "A": np.ones((64, 64)).tolist(),
        "B": np.ones((64, 64)).tolist(),
        "C": np.zeros((64, 64)).tolist(),
    }
    assert ga.Sim(ga.Machine(**machine.as_dict()), dram).run(tuples(text)).cycles == int(
        row["cycles"]
    )


def test_a_resume_with_another_sampler_is_refused_or_recorded(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, stored
) -> None:  # type: ignore[no-untyped-def]
    run(capsys, [*SMALL, "--trials", "20", "--study", "prov"])
    _, err = run(
        capsys,
        [*SMALL, "--more-trials", "5", "--study", "prov", "--sampler", "random", "--seed", "4"],
        expect=2,
    )
    assert "was run with sampler guided and seed 0" in err and "--allow-sampler-change" in err
    run(
        capsys,
        [
            *SMALL,
            "--more-trials",
            "5",
            "--study",
            "prov",
            "--sampler",
            "random",
            "--seed",
            "4",
            "--allow-sampler-change",
        ],
    )
    study = stored(in_tmp, "prov")
    runs = [(t.user_attrs["run"]["sampler"], t.user_attrs["run"]["seed"]) for t in study.trials]
    assert runs == [("guided", 0)] * 20 + [("random", 4)] * 5
    assert all(t.user_attrs["run"]["autotune_version"] for t in study.trials)
    frame = pd.read_parquet(in_tmp / "results" / "prov" / "leaderboard.parquet")
    by_trial = dict(zip(frame["trial"], zip(frame["sampler"], frame["seed"])))
    assert all(by_trial[t] == runs[t] for t in by_trial)
    run(
        capsys,
        [*SMALL, "--more-trials", "1", "--study", "prov", "--sampler", "random", "--seed", "4"],
    )  # the new pair is now the study's


def test_verification_says_how_each_entry_was_checked(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(
        capsys,
        [
            "--shape",
            "32x32x32",
            "--space",
            "chapter",
            "--trials",
            "12",
            "--study",
            "v",
            "--verify-top",
            "2",
        ],
    )
    frame = pd.read_parquet(in_tmp / "results" / "v" / "leaderboard.parquet")
    assert list(frame["verification"][:2]) == ["exact"] * 2 and list(frame["verified"][:2]) == [
        True,
        True,
    ]
    assert set(frame["verification"][2:]) == {"none"} and frame["verified"][2:].isna().all()
    assert "hazard replay clean" in frame["verification_detail"].iloc[0]
    # A systolic design too large to run in full is checked on a scaled-down one: not verified.
    # (512^3 runs in full within the real budget; a tiny budget stands in for a bigger design.)
    import autotune.oracles.systolic_check as systolic_family

    monkeypatch.setattr(systolic_family, "VERIFY_SECONDS", 1e-9)
    run(
        capsys,
        [
            "--shape",
            "512x512x512",
            "--target",
            "systolic",
            "--pe-budget",
            "4096",
            "--trials",
            "6",
            "--study",
            "big",
            "--verify-top",
            "1",
        ],
    )
    big = pd.read_parquet(in_tmp / "results" / "big" / "leaderboard.parquet").iloc[0]
    assert big["verification"] == "scaled" and pd.isna(big["verified"])
    out, _ = run(capsys, ["leaderboard", "big", "--top", "1"])
    header, row = out.splitlines()[1].split(), out.splitlines()[2].split()
    assert row[header.index("verified")] == "scaled"
    shown = json.loads(run(capsys, ["show", "big", "--json"])[0])
    assert (
        shown["verification"] == "scaled"
        and shown["verified"] is None
        and "array" in shown["description"]
    )
