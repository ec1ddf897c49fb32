"""A study whose best equals its proven lower bound stops (it cannot improve) and says so, with
one process or several workers; a resumed one runs no further trial; a study with another
objective runs its budget."""

from __future__ import annotations

import threading
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from autotune.cli.main import main
from autotune.oracles.ga1 import ORACLE
from autotune.run.optimise import at_bound
from autotune.storage import SharedStudy, finished_count, local_storage, read_study
from simcore import Machine, Shape
from tests.helpers.waiting import PATIENCE, no_hang

SHAPE = "32x32x32"  # the chapter's schedules reach its bound among the first trials
BUDGET = 200
BOUND = 1000  # of the two-worker study below


def _study(results: Path, name: str):  # type: ignore[no-untyped-def]
    address = local_storage(results, name)
    assert address is not None
    study = read_study(address, name)
    assert study is not None
    return study


@pytest.mark.stops_at_bound
def test_a_study_at_its_bound_stops_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    argv = ["--shape", SHAPE, "--results", str(results), "--study", "b"]
    assert main([*argv, "--trials", str(BUDGET)]) == 0
    err = capsys.readouterr().err
    assert "equals the proven lower bound" in err
    study = _study(results, "b")
    bound = ORACLE.bound(Shape(32, 32, 32), Machine(slots=64))
    assert study.best_value == bound
    done = finished_count(study)
    assert done < BUDGET
    assert main([*argv, "--trials", str(2 * BUDGET)]) == 0  # resumed
    assert finished_count(_study(results, "b")) == done


@pytest.mark.stops_at_bound
def test_another_objective_runs_its_budget(tmp_path: Path) -> None:
    results = tmp_path / "results"
    argv = ["--shape", SHAPE, "--trials", "30", "--results", str(results), "--study", "e"]
    assert main([*argv, "--objectives", "cycles,energy"]) == 0
    assert finished_count(_study(results, "e")) == 30


@pytest.mark.stops_at_bound
def test_all_trials_runs_the_whole_budget(tmp_path: Path) -> None:
    results = tmp_path / "results"
    argv = ["--shape", SHAPE, "--trials", "40", "--results", str(results), "--study", "a"]
    assert main([*argv, "--all-trials"]) == 0
    assert finished_count(_study(results, "a")) == 40


def test_a_worker_stops_once_another_reaches_the_bound_and_its_trial_in_flight_is_kept(
    tmp_path: Path,
) -> None:
    """Two workers (threads, each with its own handle) on one study: the first's trial reaches
    the bound while the second's is in flight. The first stops without another trial; the
    second's trial finishes, is stored, and it asks for no other. Each step waits on an event."""
    url = str(tmp_path / "study.journal")
    SharedStudy(url, "w").open(optuna.samplers.RandomSampler(seed=0), ["minimize"])
    second_in_flight, first_left = threading.Event(), threading.Event()
    asked: dict[str, int] = {"first": 0, "second": 0}

    def work(name: str, value: float, before: threading.Event, after: threading.Event) -> None:
        handle = SharedStudy(url, "w")
        study = handle.open(optuna.samplers.RandomSampler(seed=len(name)), ["minimize"])

        def objective(trial: optuna.Trial) -> float:
            trial.suggest_int("x", 0, 10**6)
            handle.release()  # sampled: the other worker may ask
            asked[name] += 1
            if name == "second":
                second_in_flight.set()
            assert before.wait(PATIENCE), f"{name}: the other worker never got there"
            return value

        handle.optimize(study, objective, BUDGET, None, False, at_bound(BOUND))
        handle.close()
        after.set()

    threads = [
        threading.Thread(target=work, args=("second", BOUND + 5, first_left, threading.Event())),
        threading.Thread(target=work, args=("first", BOUND, second_in_flight, first_left)),
    ]
    with no_hang("two workers on one study"):
        threads[0].start()
        assert second_in_flight.wait(PATIENCE)
        threads[1].start()
        for thread in threads:
            thread.join()
    study = read_study(url, "w")
    assert study is not None
    assert asked == {"first": 1, "second": 1}
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 2
    assert sorted(t.value for t in study.trials) == [BOUND, BOUND + 5]


@pytest.mark.slow  # two spawned worker processes
@pytest.mark.stops_at_bound
def test_workers_stop_at_the_bound_and_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    argv = ["--shape", SHAPE, "--results", str(results), "--study", "w", "--workers", "2"]
    assert main([*argv, "--trials", str(BUDGET)]) == 0
    assert "equals the proven lower bound" in capsys.readouterr().err
    study = _study(results, "w")
    assert study.best_value == ORACLE.bound(Shape(32, 32, 32), Machine(slots=64))
    done = finished_count(study)
    assert done < BUDGET
    # none cut short (FAIL) or left running; seeds not reached stay enqueued (WAITING)
    assert {t.state for t in study.trials} <= {TrialState.COMPLETE, TrialState.WAITING}
    assert main([*argv, "--trials", str(2 * BUDGET)]) == 0  # resumed: nothing to run
    assert finished_count(_study(results, "w")) == done
