"""HistoryCachedTPE samples exactly what Optuna's TPESampler samples, draw for draw: on a
conditional space (groups that come and go), categorical and integer parameters, infeasible
trials (constraints), pruned and failed trials, one or two objectives, with and without
constant_liar, in memory and on the journal. A mismatch names the Optuna internals to re-check
(autotune/optuna_adapter/tpe.py)."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from optuna.samplers import TPESampler

from autotune.search.tpe import HistoryCachedTPE, history_cached
from autotune.storage.journal import JournalFile
from tests.helpers.examples import PROFILE

TRIALS = 160 if PROFILE == "ci" else 60  # CI's profile runs the longer histories


# Prune some trials (TPE's general split) or none (the ranking kept as trials finish); make
# nearly every trial infeasible (the good side of the split then holds infeasible trials).
MODE = {"prune": True, "strict": False}


def objective(trial: optuna.Trial) -> float | tuple[float, float]:
    family = trial.suggest_categorical("family", ["blocked", "general", "kouter"])
    if family == "blocked":
        size = trial.suggest_int("bi", 1, 16) * trial.suggest_int("bj", 1, 16)
        buffers = trial.suggest_int("buffers", 1, 3)
        trial.set_constraint(
            "slots_over", max(0.0, size * buffers - (0.5 if MODE["strict"] else 40.0))
        )
        value = 1000.0 / size + 7 * buffers
    elif family == "general":
        order = trial.suggest_categorical("order", ["row", "col", "zigzag", "lshape"])
        look = trial.suggest_int("lookahead", 0, 64, step=2)
        if MODE["prune"] and look % 6 == 0:
            raise optuna.TrialPruned()
        tail = trial.suggest_int("tail", 0, 8)
        trial.set_constraint("slots_over", float(abs(look - 36) + tail) if MODE["strict"] else 0.0)
        value = abs(look - 37) + {"row": 1, "col": 3, "zigzag": 2, "lshape": 0}[order] + tail
    else:
        if trial.suggest_categorical("serpentine", [True, False]):
            raise ValueError("a failing trial")  # FAIL: excluded from the history
        trial.set_constraint("slots_over", 3.0 if MODE["strict"] else 0.0)
        value = 500.0
    return (value, float(len(trial.params))) if len(trial.study.directions) == 2 else value


def history(
    sampler: optuna.samplers.BaseSampler, directions: list[str], storage: object = None
) -> list[object]:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(sampler=sampler, directions=directions, storage=storage)  # type: ignore[arg-type]
    study.optimize(objective, n_trials=TRIALS, catch=(ValueError,))
    return [(t.number, t.state.name, t.params) for t in study.trials]


def tpe(constant_liar: bool, seed: int) -> TPESampler:
    return TPESampler(
        seed=seed, multivariate=True, group=True, n_startup_trials=10, constant_liar=constant_liar
    )


@pytest.mark.parametrize("mode", ["prune", "plain", "strict"])
@pytest.mark.parametrize("constant_liar", [True, False])
@pytest.mark.parametrize("directions", [["minimize"], ["maximize"], ["minimize", "maximize"]])
def test_the_cached_sampler_draws_what_tpe_draws(
    constant_liar: bool, directions: list[str], mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(MODE, "prune", mode == "prune")
    monkeypatch.setitem(MODE, "strict", mode == "strict")
    prune = mode == "prune"
    stock = history(tpe(constant_liar, 3), directions)
    cached_sampler = history_cached(tpe(constant_liar, 3))
    assert isinstance(cached_sampler, HistoryCachedTPE)
    assert history(cached_sampler, directions) == stock
    assert {state for _, state, _ in stock} >= (
        {"COMPLETE", "PRUNED", "FAIL"} if prune else {"COMPLETE", "FAIL"}
    )


def test_the_same_on_the_journal(tmp_path: Path) -> None:
    stock = history(tpe(True, 5), ["minimize"])
    journal = optuna.storages.JournalStorage(JournalFile(tmp_path / "study.journal"))
    assert history(history_cached(tpe(True, 5)), ["minimize"], journal) == stock


def test_other_samplers_are_left_as_they_are() -> None:
    random = optuna.samplers.RandomSampler(seed=0)
    assert history_cached(random) is random
    grouped = history_cached(tpe(True, 0))
    assert grouped._n_startup_trials == 10 and grouped._constant_liar  # the settings travel with it
