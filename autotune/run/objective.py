"""The Optuna side of a trial: suggest a candidate, evaluate it once, record the outcome.

One objective for every search (schedules for a GEMM, machines for a workload): each distinct
candidate is evaluated once; a repeat is answered from the cache, which starts with the
study's completed trials, so a resumed study or another worker re-simulates nothing. With
shared storage the objective releases the study lock once the candidate is sampled (see
autotune.storage), and a candidate another worker is evaluating is waited for."""
from __future__ import annotations

from typing import Mapping

import optuna
from optuna.trial import TrialState

from search_spaces.domains import Choice, IntRange, Param, Value

from autotune.storage import SharedStudy
from autotune.search.problem import Candidate, Search, objective_values

RESULT_ATTR = "result"   # a trial's record: what the oracle found (copied for a repeat)
RUN_ATTR = "run"         # a trial's provenance: sampler, seed, autotune version, worker
CONSTRAINT_NAME = "slots_over"


def to_distribution(param: Param) -> optuna.distributions.BaseDistribution:
    domain = param.domain
    if isinstance(domain, IntRange):
        return optuna.distributions.IntDistribution(domain.low, domain.high, step=domain.step, log=domain.log)
    assert isinstance(domain, Choice)
    return optuna.distributions.CategoricalDistribution(list(domain.options))


def suggest(trial: optuna.Trial, param: Param) -> Value:
    domain = param.domain
    if isinstance(domain, IntRange):
        return trial.suggest_int(param.name, domain.low, domain.high, step=domain.step, log=domain.log)
    return trial.suggest_categorical(param.name, list(domain.options))  # type: ignore[return-value]


class Objective:
    def __init__(self, search: Search, study: optuna.Study, provenance: Mapping[str, object],
                 shared: SharedStudy | None = None) -> None:
        self.search = search
        self.study = study
        self.provenance = dict(provenance)
        self.shared = shared if shared is not None and shared.shared else None
        self.cache: dict[str, tuple[dict[str, object], int]] = {}
        self._learned: set[int] = set()
        self._settled = 0   # trials before this position are finished and learned
        for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            self._learned.add(trial.number)
            self._learn(trial)

    def __call__(self, trial: optuna.Trial) -> float | tuple[float, ...]:
        try:
            trial.set_user_attr(RUN_ATTR, self.provenance)  # who ran it, with what
            candidate = self.search.sample(lambda param: suggest(trial, param))
            key = candidate.key()
            twin = self._refresh(key, trial.number) if self.shared is not None and key not in self.cache else None
        finally:
            if self.shared is not None:
                self.shared.release()
        attrs = self._wait_for(twin) if twin is not None and key not in self.cache else None
        return self.record(trial, attrs if attrs is not None else self.result(candidate, trial.number))

    def result(self, candidate: Candidate, number: int) -> dict[str, object]:
        """The cached result of an equal candidate, or a new evaluation (cached)."""
        key = candidate.key()
        if key in self.cache:
            attrs, source = self.cache[key]
            return {**attrs, "duplicate_of": source}
        attrs = self.search.evaluate(candidate)
        self.cache[key] = (attrs, number)
        return attrs

    def record(self, trial: optuna.Trial, attrs: dict[str, object]) -> float | tuple[float, ...]:
        # Few storage writes per trial, not one per field: the storage is the slow part.
        trial.set_user_attr(RESULT_ATTR, attrs)
        for name, value in self.search.constraints(attrs).items():
            trial.set_constraint(name, value)
        return objective_values(attrs, self.search.objectives)

    def _learn(self, trial: optuna.trial.FrozenTrial) -> str | None:
        key = self.search.key_of(trial.params)
        if key is not None and RESULT_ATTR in trial.user_attrs:
            self.cache.setdefault(key, (dict(trial.user_attrs[RESULT_ATTR]), trial.number))
        return key

    def _refresh(self, key: str, mine: int) -> optuna.trial.FrozenTrial | None:
        """Learn other workers' results; return a RUNNING trial evaluating the same candidate.
        Each scan starts at the first trial not yet finished when the last one ran."""
        twin = None
        trials = self.study.get_trials(deepcopy=False)  # trials are only ever appended
        settled = True
        for position in range(self._settled, len(trials)):
            other = trials[position]
            if other.number != mine and other.state == TrialState.COMPLETE and other.number not in self._learned:
                self._learned.add(other.number)
                self._learn(other)
            elif other.number != mine and other.state == TrialState.RUNNING and twin is None and self.search.key_of(other.params) == key:
                twin = other
            settled = settled and other.state.is_finished()
            if settled:
                self._settled = position + 1
        return twin

    def _wait_for(self, twin: optuna.trial.FrozenTrial) -> dict[str, object] | None:
        """The twin's result once it completes (None if it failed: evaluate it ourselves)."""
        assert self.shared is not None
        found = self.shared.wait_until_finished(self.study, twin.number)
        if found.state != TrialState.COMPLETE or RESULT_ATTR not in found.user_attrs:
            return None
        key = self._learn(found)
        attrs, _ = self.cache[key]  # type: ignore[index]
        return {**attrs, "duplicate_of": found.number}
