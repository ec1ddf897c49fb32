"""The Optuna side of a trial: suggest a candidate, evaluate it once, record the outcome.

One objective for every search (schedules for a GEMM, machines for a workload): each distinct
candidate is evaluated once; a repeat is answered from the cache, which starts with the
study's completed trials, so a resumed study or another worker re-simulates nothing. With
shared storage the objective releases the study lock once the candidate is sampled (see
autotune.storage), and a candidate another worker is evaluating is waited for."""

from __future__ import annotations

import functools
from dataclasses import replace

import optuna
from optuna.trial import TrialState

from autotune.record import (
    Evaluation,
    Provenance,
    TrialRecord,
    candidate_params,
    record_provenance,
    record_result,
)
from autotune.search.distributions import suggest
from autotune.search.objectives import objective_values
from autotune.search.problem import Candidate, Search
from autotune.storage import SharedStudy


class Objective:
    def __init__(
        self,
        search: Search,
        study: optuna.Study,
        provenance: Provenance,
        shared: SharedStudy | None = None,
    ) -> None:
        self.search = search
        self.study = study
        self.provenance = provenance
        self.shared = shared if shared is not None and shared.shared else None
        self.cache: dict[str, tuple[Evaluation, int]] = {}
        self._learned: set[int] = set()
        self._settled = 0  # trials before this position are finished and learned
        for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            self._learned.add(trial.number)
            self._learn(trial)

    def __call__(self, trial: optuna.Trial) -> float | tuple[float, ...]:
        try:
            record_provenance(trial, self.provenance)  # who ran it, with what
            candidate = self.search.sample(functools.partial(suggest, trial))
            key = candidate.key()
            twin = (
                self._refresh(key, trial.number)
                if self.shared is not None and key not in self.cache
                else None
            )
        finally:
            if self.shared is not None:
                self.shared.release()
        attrs = self._wait_for(twin) if twin is not None and key not in self.cache else None
        return self.record(
            trial, attrs if attrs is not None else self.result(candidate, trial.number)
        )

    def result(self, candidate: Candidate, number: int) -> Evaluation:
        """The cached result of an equal candidate, or a new evaluation (cached)."""
        key = candidate.key()
        if key in self.cache:
            evaluation, source = self.cache[key]
            return evaluation.repeat_of(source)
        evaluation = self.search.evaluate(candidate)
        self.cache[key] = (evaluation, number)
        return evaluation

    def record(self, trial: optuna.Trial, evaluation: Evaluation) -> float | tuple[float, ...]:
        # Few storage writes per trial, not one per field: the storage is the slow part.
        record_result(trial, evaluation)
        for name, value in self.search.constraints(evaluation).items():
            trial.set_constraint(name, value)
        return objective_values(evaluation, self.search.measures)

    def _learn(self, trial: optuna.trial.FrozenTrial) -> str | None:
        key = self.search.key_of(candidate_params(trial))
        found = TrialRecord.of_trial(trial) if key is not None else None
        if found is not None:
            self.cache.setdefault(key, (replace(found.evaluation, duplicate_of=None), trial.number))  # type: ignore[arg-type]
        return key

    def _refresh(self, key: str, mine: int) -> optuna.trial.FrozenTrial | None:
        """Learn other workers' results; return a RUNNING trial evaluating the same candidate.
        Each scan starts at the first trial not yet finished when the last one ran."""
        twin = None
        trials = self.study.get_trials(deepcopy=False)  # trials are only ever appended
        settled = True
        for position in range(self._settled, len(trials)):
            other = trials[position]
            if (
                other.number != mine
                and other.state == TrialState.COMPLETE
                and other.number not in self._learned
            ):
                self._learned.add(other.number)
                self._learn(other)
            elif (
                other.number != mine
                and other.state == TrialState.RUNNING
                and twin is None
                and self.search.key_of(other.params) == key
            ):
                twin = other
            settled = settled and other.state.is_finished()
            if settled:
                self._settled = position + 1
        return twin

    def _wait_for(self, twin: optuna.trial.FrozenTrial) -> Evaluation | None:
        """The twin's result once it completes (None if it failed: evaluate it ourselves)."""
        assert self.shared is not None
        found = self.shared.wait_until_finished(self.study, twin.number)
        if found.state != TrialState.COMPLETE or TrialRecord.of_trial(found) is None:
            return None
        key = self._learn(found)
        evaluation, _ = self.cache[key]  # type: ignore[index]
        return evaluation.repeat_of(found.number)
