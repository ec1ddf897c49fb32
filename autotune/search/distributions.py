"""A search parameter as Optuna sees it: its distribution, and a trial's suggestion of it."""

from __future__ import annotations

import optuna

from search_spaces.domains import Choice, IntRange, Param, Value


def to_distribution(param: Param) -> optuna.distributions.BaseDistribution:
    domain = param.domain
    if isinstance(domain, IntRange):
        return optuna.distributions.IntDistribution(
            domain.low, domain.high, step=domain.step, log=domain.log
        )
    assert isinstance(domain, Choice)
    return optuna.distributions.CategoricalDistribution(list(domain.options))


def suggest(trial: optuna.Trial, param: Param) -> Value:
    domain = param.domain
    if isinstance(domain, IntRange):
        return trial.suggest_int(
            param.name, domain.low, domain.high, step=domain.step, log=domain.log
        )
    return trial.suggest_categorical(param.name, list(domain.options))  # type: ignore[return-value]
