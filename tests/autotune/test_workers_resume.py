"""Several workers on one study, resuming a study, and runs that are interrupted or killed."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from autotune.cli import main

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--shape", "64x64x64", "--space", "chapter"]


def storage_of(root: Path, study: str) -> str:
    return f"sqlite:///{root / 'results' / study / 'study.db'}"


def trials_of(root: Path, study: str) -> list[optuna.trial.FrozenTrial]:
    return optuna.load_study(study_name=study, storage=storage_of(root, study)).get_trials()


def complete(trials: list[optuna.trial.FrozenTrial]) -> list[optuna.trial.FrozenTrial]:
    return [t for t in trials if t.state == TrialState.COMPLETE]


def snapshot(trial: optuna.trial.FrozenTrial) -> str:
    """What a trial recorded, as one comparable text."""
    return json.dumps([trial.number, trial.state.name, trial.params, trial.values, trial.user_attrs,
                       trial.constraints, str(trial.datetime_complete)], sort_keys=True)


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def start(root: Path, study: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "autotune", *SMALL, "--trials", "100000", "--study", study, *extra],
                            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def count_complete(root: Path, study: str) -> int:
    """COMPLETE trials, read straight from the SQLite file (read-only: a poll must never race the
    tuner's own table creation the way opening an Optuna storage would)."""
    path = root / "results" / study / "study.db"
    if not path.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as db:
            row = db.execute("SELECT COUNT(*) FROM trials JOIN studies USING (study_id) "
                             "WHERE studies.study_name = ? AND trials.state = 'COMPLETE'", (study,)).fetchone()
    except sqlite3.OperationalError:  # tables not created yet, or the file is being set up
        return 0
    return int(row[0])


def wait_for_complete(root: Path, study: str, process: subprocess.Popen[str], count: int, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        if count_complete(root, study) >= count:
            return
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"fewer than {count} complete trials after {limit} s")


def test_two_workers_share_one_global_budget(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = run(capsys, [*SMALL, "--workers", "2", "--trials", "30", "--study", "pair"])
    assert "30 trials in storage" in out
    trials = trials_of(tmp_path, "pair")
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 30
    assert sorted(t.number for t in trials) == list(range(30))
    # Every enqueued baseline point ran exactly once, however the workers interleaved.
    baseline = [t.params for t in trials if t.user_attrs.get("source") == "baseline"]
    assert baseline and len({tuple(sorted(p.items())) for p in baseline}) == len(baseline)
    assert (tmp_path / "results" / "pair" / "leaderboard.parquet").is_file()


def test_resume_adds_the_requested_trials_and_keeps_the_old_ones(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run(capsys, [*SMALL, "--trials", "20", "--study", "again"])
    first = trials_of(tmp_path, "again")
    assert len(complete(first)) == 20
    out = run(capsys, [*SMALL, "--trials", "10", "--study", "again"])
    assert "30 trials in storage" in out
    second = trials_of(tmp_path, "again")
    assert len(complete(second)) == 30
    assert [snapshot(t) for t in second[:20]] == [snapshot(t) for t in first if t.state == TrialState.COMPLETE]


def test_interrupted_run_keeps_its_trials_and_resumes(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    process = start(tmp_path, "ctrl-c")
    wait_for_complete(tmp_path, "ctrl-c", process, 10)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    assert "interrupted; kept study 'ctrl-c'" in out
    assert (tmp_path / "results" / "ctrl-c" / "leaderboard.parquet").is_file()

    kept = complete(trials_of(tmp_path, "ctrl-c"))
    assert len(kept) >= 10
    # Usually Optuna marks the interrupted trial FAIL; a signal landing outside the objective (in
    # the ask or the tell) can leave it RUNNING, which the resume fails once its heartbeat is stale.
    # A short heartbeat on the resume keeps that rare case quick.
    started = time.monotonic()
    run(capsys, [*SMALL, "--trials", "5", "--study", "ctrl-c", "--heartbeat", "1"])
    assert time.monotonic() - started < 30
    after = complete(trials_of(tmp_path, "ctrl-c"))
    assert not [t for t in trials_of(tmp_path, "ctrl-c") if t.state == TrialState.RUNNING]
    assert len(after) == len(kept) + 5
    assert {snapshot(t) for t in kept} <= {snapshot(t) for t in after}


def test_killed_run_does_not_block_the_resume(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # A short heartbeat, so a trial the kill leaves RUNNING goes stale within seconds.
    process = start(tmp_path, "kill-9", "--heartbeat", "1")
    wait_for_complete(tmp_path, "kill-9", process, 10)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL

    kept = complete(trials_of(tmp_path, "kill-9"))
    started = time.monotonic()
    run(capsys, [*SMALL, "--trials", "5", "--study", "kill-9", "--heartbeat", "1"])
    assert time.monotonic() - started < 30
    trials = trials_of(tmp_path, "kill-9")
    assert len(complete(trials)) == len(kept) + 5
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    assert {snapshot(t) for t in kept} <= {snapshot(t) for t in complete(trials)}


def test_a_trial_killed_before_its_first_heartbeat_does_not_block(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The narrow window of a kill: the trial is RUNNING but never sent a heartbeat (Optuna's own
    stale check skips it). The resume must not wait for it forever."""
    monkeypatch.chdir(tmp_path)
    run(capsys, [*SMALL, "--trials", "20", "--study", "silent", "--heartbeat", "1"])
    study = optuna.load_study(study_name="silent", storage=storage_of(tmp_path, "silent"))
    orphan = study.ask()  # RUNNING, no heartbeat: what a kill right after the ask leaves
    started = time.monotonic()
    run(capsys, [*SMALL, "--trials", "5", "--study", "silent", "--heartbeat", "1"])
    assert time.monotonic() - started < 30
    trials = trials_of(tmp_path, "silent")
    assert len(complete(trials)) == 25
    assert trials[orphan.number].state == TrialState.FAIL
    assert not [t for t in trials if t.state == TrialState.RUNNING]
