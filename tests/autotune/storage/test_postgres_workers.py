"""Three workers on one study on a real PostgreSQL server: an exact global budget, every
candidate evaluated once, and a worker killed mid-trial detected by the heartbeat and retried."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import optuna
import pandas as pd
import pytest
from optuna.trial import FrozenTrial, TrialState

from tests.helpers.waiting import PATIENCE, wait_until

pytestmark = pytest.mark.slow  # a PostgreSQL server and three tuning processes per test

ROOT = Path(__file__).resolve().parents[3]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _tune(url: str, study: str, shape: str, trials: int, cwd: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "autotune",
        "--shape",
        shape,
        "--trials",
        str(trials),
        "--storage",
        url,
        "--study",
        study,
        "--verify-top",
        "1",
        *extra,
    ]


def _check_study(url: str, name: str, total: int) -> list[optuna.trial.FrozenTrial]:
    study = optuna.load_study(study_name=name, storage=url)
    trials = study.get_trials(deepcopy=False)
    numbers = [t.number for t in trials]
    assert len(numbers) == len(set(numbers)), "a trial number was recorded twice"
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    assert len(complete) == total, Counter(t.state.name for t in trials)
    fresh = Counter(
        json.dumps(t.params, sort_keys=True)
        for t in complete
        if "duplicate_of" not in t.user_attrs["result"]
    )
    assert max(fresh.values()) == 1, "a candidate was simulated twice"
    for t in complete:  # a repeat points at the trial that evaluated it
        if "duplicate_of" in t.user_attrs["result"]:
            assert json.dumps(
                study.trials[t.user_attrs["result"]["duplicate_of"]].params, sort_keys=True
            ) == json.dumps(t.params, sort_keys=True)
    return trials


def _running(storage: optuna.storages.RDBStorage, name: str) -> list[FrozenTrial]:
    """RUNNING trials whose objective has started (a run record) on a family's schedule that no
    other running trial shares (so that its retry is told apart)."""
    try:
        running = optuna.load_study(study_name=name, storage=storage).get_trials(
            deepcopy=False, states=(TrialState.RUNNING,)
        )
    except KeyError:  # not created yet
        return []
    keys = Counter(json.dumps(t.params, sort_keys=True) for t in running)
    return [
        t
        for t in running
        if keys[json.dumps(t.params, sort_keys=True)] == 1
        and "run" in t.user_attrs
        and "family" in t.params
    ]


def test_three_workers_exact_budget(postgres_url: str, tmp_path: Path) -> None:
    total = 30
    done = subprocess.run(
        # the whole budget: 48x48x48 may reach its proven bound (and stop) before trial 30
        _tune(
            postgres_url, "pg-budget", "48x48x48", total, tmp_path, "--workers", "3", "--all-trials"
        ),
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    trials = _check_study(postgres_url, "pg-budget", total)
    assert all(t.state == TrialState.COMPLETE for t in trials)
    board = pd.read_parquet(tmp_path / "results" / "pg-budget" / "leaderboard.parquet")
    distinct = {json.dumps(t.params, sort_keys=True) for t in trials}
    assert len(board) == len(distinct)
    assert board["verified"].iloc[0]


def test_killed_worker_is_retried(postgres_url: str, tmp_path: Path) -> None:
    total, name = 24, "pg-kill"  # more than the 16 seeds: the retry is run, not left queued
    # At 256^3 a simulation takes about a second: a trial is often seen RUNNING. A heartbeat of
    # 5 s (10 s of grace) keeps a live worker, slowed by a loaded machine, from being taken for dead.
    command = _tune(
        postgres_url, name, "256x256x256", total, tmp_path, "--heartbeat", "5", "--space", "chapter"
    )
    workers = [
        subprocess.Popen(
            command,
            cwd=tmp_path,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    storage = optuna.storages.RDBStorage(postgres_url)
    victim = None

    def caught() -> bool:
        """A worker stopped (SIGSTOP) in the middle of a trial it alone runs, then killed."""
        nonlocal victim
        if all(w.poll() is not None for w in workers):
            raise AssertionError("every worker ended before one was caught in a trial")
        for trial in _running(storage, name):
            pid = int(trial.user_attrs["run"]["worker"].rsplit(":", 1)[1])
            worker = next((w for w in workers if w.pid == pid), None)
            if worker is None:
                continue
            os.kill(pid, signal.SIGSTOP)  # frozen: its trial is still RUNNING, or it just ended
            if storage.get_trial(trial._trial_id).state == TrialState.RUNNING:
                worker.send_signal(signal.SIGKILL)
                victim = worker
                return True
            os.kill(pid, signal.SIGCONT)  # at once: a worker stopped past the grace period fails
        return False

    wait_until(caught, "a worker in the middle of a trial")
    assert victim is not None
    victim.wait(timeout=PATIENCE)
    workers = [w for w in workers if w is not victim]
    for worker in workers:
        try:
            _, err = worker.communicate(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            study = optuna.load_study(study_name=name, storage=storage)
            state = [
                (t.number, t.state.name, t.params, t.system_attrs.get("failed_trial"))
                for t in study.trials
                if t.state.name != "COMPLETE"
            ]
            heartbeats = storage._get_stale_trial_ids(study._study_id)
            for w in workers:
                w.kill()
            pytest.fail(f"workers hung; not complete: {state}; stale: {heartbeats}")
        assert worker.returncode == 0, err
    trials = _check_study(postgres_url, name, total)
    failed = [t for t in trials if t.state == TrialState.FAIL]
    assert len(failed) == 1, "the killed worker's trial was not failed by the heartbeat"
    retries = [t for t in trials if t.system_attrs.get("failed_trial") == failed[0].number]
    assert len(retries) == 1
    retry = retries[0]
    killed = failed[0].system_attrs.get("fixed_params", failed[0].params)
    assert (
        retry.system_attrs.get("fixed_params", retry.params) == killed
    )  # the retry is the killed candidate
    if retry.state != TrialState.COMPLETE:
        # A worker that had sampled the same candidate was waiting for the killed trial; when the
        # heartbeat failed it, that worker simulated the candidate itself, so the retry is left
        # queued (a resumed study answers it from the cache). The candidate must be complete.
        assert retry.state == TrialState.WAITING
        twins = [
            t
            for t in trials
            if t.state == TrialState.COMPLETE and t.number > failed[0].number and t.params == killed
        ]
        assert twins and "duplicate_of" not in twins[0].user_attrs["result"]
    assert not [
        t
        for t in trials
        if t.state == TrialState.RUNNING or (t.state == TrialState.WAITING and t is not retry)
    ]
