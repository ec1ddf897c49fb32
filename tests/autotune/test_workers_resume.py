"""Several workers on one study, resuming a study, and runs that are interrupted or killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from autotune.cli.main import main
from autotune.errors import AutotuneError
from autotune.storage import read_study
from tests.helpers.waiting import PATIENCE, no_hang, wait_until

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--shape", "64x64x64", "--space", "chapter"]


# Where a study lives: its default journal, or an SQLite file given with --storage (the RDB path,
# whose dead workers are found by Optuna's heartbeat instead of the journal's leases).
STORAGES = ("journal", "sqlite")


def address_of(root: Path, study: str, kind: str = "journal") -> str:
    return (
        str(root / "results" / study / "study.journal")
        if kind == "journal"
        else f"sqlite:///{root / (study + '.db')}"
    )


def storage_args(root: Path, study: str, kind: str) -> list[str]:
    return [] if kind == "journal" else ["--storage", address_of(root, study, kind)]


def trials_of(root: Path, study: str, kind: str = "journal") -> list[optuna.trial.FrozenTrial]:
    found = read_study(address_of(root, study, kind), study)
    assert found is not None
    return found.get_trials()


def complete(trials: list[optuna.trial.FrozenTrial]) -> list[optuna.trial.FrozenTrial]:
    return [t for t in trials if t.state == TrialState.COMPLETE]


def snapshot(trial: optuna.trial.FrozenTrial) -> str:
    """What a trial recorded, as one comparable text."""
    return json.dumps(
        [
            trial.number,
            trial.state.name,
            trial.params,
            trial.values,
            trial.user_attrs,
            trial.constraints,
            str(trial.datetime_complete),
        ],
        sort_keys=True,
    )


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def start(root: Path, study: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "autotune", *SMALL, "--trials", "100000", "--study", study, *extra],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def count_complete(root: Path, study: str, kind: str) -> int:
    """COMPLETE trials, read without ever creating the storage (a poll must not race the tuner's
    own creation of it)."""
    try:
        found = read_study(address_of(root, study, kind), study)
    except AutotuneError:  # not created yet
        return 0
    return (
        0 if found is None else len(found.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
    )


def wait_for_complete(
    root: Path, study: str, process: subprocess.Popen[str], count: int, kind: str = "journal"
) -> None:
    wait_until(
        lambda: count_complete(root, study, kind) >= count, f"{count} complete trials", process
    )


@pytest.mark.slow  # two worker processes
def test_two_workers_share_one_global_budget(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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


def test_resume_adds_the_requested_trials_and_keeps_the_old_ones(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run(capsys, [*SMALL, "--trials", "20", "--study", "again"])
    first = trials_of(tmp_path, "again")
    assert len(complete(first)) == 20
    out = run(capsys, [*SMALL, "--trials", "10", "--study", "again"])
    assert "30 trials in storage" in out
    second = trials_of(tmp_path, "again")
    assert len(complete(second)) == 30
    assert [snapshot(t) for t in second[:20]] == [
        snapshot(t) for t in first if t.state == TrialState.COMPLETE
    ]


@pytest.mark.parametrize("sampler", ["random", "nsga2"])
def test_a_resumed_study_draws_new_points_not_its_first_runs_again(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sampler: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["--oracle", "systolic", "--shape", "37x300x5", "--sampler", sampler]
    argv += ["--objectives", "cycles,energy", "--study", "drawn", "--trials", "12"]
    run(capsys, argv)
    run(capsys, argv)
    trials = complete(trials_of(tmp_path, "drawn"))
    first = {json.dumps(t.params, sort_keys=True) for t in trials[:12]}
    again = [json.dumps(t.params, sort_keys=True) for t in trials[12:]]
    assert len(trials) == 24 and not first & set(again)


@pytest.mark.slow  # a tuning process, interrupted
def test_interrupted_run_keeps_its_trials_and_resumes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    process = start(tmp_path, "ctrl-c")
    wait_for_complete(tmp_path, "ctrl-c", process, 10)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    assert "interrupted; kept study 'ctrl-c'" in out
    assert (tmp_path / "results" / "ctrl-c" / "leaderboard.parquet").is_file()

    kept = complete(trials_of(tmp_path, "ctrl-c"))
    assert len(kept) >= 10
    # Usually Optuna marks the interrupted trial FAIL; a signal landing outside the objective (in
    # the ask or the tell) can leave it RUNNING, which the resume fails once its heartbeat is stale.
    # A short heartbeat on the resume keeps that rare case quick.
    with no_hang("the resume"):
        run(capsys, [*SMALL, "--trials", "5", "--study", "ctrl-c", "--heartbeat", "1"])
    after = complete(trials_of(tmp_path, "ctrl-c"))
    assert not [t for t in trials_of(tmp_path, "ctrl-c") if t.state == TrialState.RUNNING]
    assert len(after) == len(kept) + 5
    assert {snapshot(t) for t in kept} <= {snapshot(t) for t in after}


@pytest.mark.slow  # a tuning process, killed
@pytest.mark.parametrize("kind", STORAGES)
def test_killed_run_does_not_block_the_resume(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """kill -9 at a random moment: the resume keeps every finished trial, and a trial the kill left
    RUNNING does not block it (the journal sees its owner's lease free at once; the RDB fails it
    once its heartbeat is stale, which --heartbeat 1 makes 2 s)."""
    monkeypatch.chdir(tmp_path)
    process = start(tmp_path, "kill-9", "--heartbeat", "1", *storage_args(tmp_path, "kill-9", kind))
    wait_for_complete(tmp_path, "kill-9", process, 10, kind=kind)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=PATIENCE)
    assert process.returncode == -signal.SIGKILL

    kept = complete(trials_of(tmp_path, "kill-9", kind))
    resume = [*SMALL, "--trials", "5", "--study", "kill-9", "--heartbeat", "1"]
    with no_hang("the resume"):
        run(capsys, [*resume, *storage_args(tmp_path, "kill-9", kind)])
    trials = trials_of(tmp_path, "kill-9", kind)
    assert len(complete(trials)) == len(kept) + 5
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    assert {snapshot(t) for t in kept} <= {snapshot(t) for t in complete(trials)}
    assert not leftovers(tmp_path)  # the killed worker's lease is gone with the resume's clean exit


@pytest.mark.slow  # waits out the heartbeat's grace period
@pytest.mark.parametrize("kind", STORAGES)
def test_a_trial_killed_right_after_the_ask_does_not_block(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    stored,
) -> None:  # type: ignore[no-untyped-def]
    """The narrow window of a kill: the trial is RUNNING but its worker died before writing
    anything (no owner in the journal; no heartbeat in the RDB, which Optuna's stale check skips).
    The resume must not wait for it forever."""
    monkeypatch.chdir(tmp_path)
    where = storage_args(tmp_path, "silent", kind)
    run(capsys, [*SMALL, "--trials", "20", "--study", "silent", "--heartbeat", "1", *where])
    if kind == "journal":
        study = stored(tmp_path, "silent")  # Optuna's own journal writer
    else:
        study = optuna.load_study(study_name="silent", storage=address_of(tmp_path, "silent", kind))
    orphan = study.ask()
    with no_hang("the resume"):
        run(capsys, [*SMALL, "--trials", "5", "--study", "silent", "--heartbeat", "1", *where])
    trials = trials_of(tmp_path, "silent", kind)
    assert len(complete(trials)) == 25
    assert trials[orphan.number].state == TrialState.FAIL
    assert not [t for t in trials if t.state == TrialState.RUNNING]


def leftovers(root: Path) -> list[Path]:
    """Lock and lease files under results/."""
    return [
        p for p in (root / "results").rglob("*") if p.name.endswith(".lock") or ".worker-" in p.name
    ]
