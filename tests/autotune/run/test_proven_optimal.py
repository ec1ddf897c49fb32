"""A study whose best equals its proven lower bound stops (it cannot improve) and says so; a
resumed one runs no further trial; a study with another objective runs its budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from autotune.cli.main import main
from autotune.oracles.ga1 import ORACLE
from autotune.storage import finished_count, local_storage, read_study
from simcore import Machine, Shape

SHAPE = "32x32x32"  # the chapter's schedules reach its bound among the first trials
BUDGET = 200


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
