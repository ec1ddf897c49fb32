"""Optuna's TPE sampler, remembering what it derives from finished trials.

Per trial, TPE with group=True re-derives everything from the whole history, once per group
of parameters: the groups themselves (every finished trial's parameter names, re-added each
trial), the split of the history into the good trials and the rest (each trial's constraint
read back from its system attributes, then sorts, once per group) and each trial's parameters
in internal form. A finished trial never changes, so `HistoryCachedTPE` keeps what it derived
(autotune.search.tpe_history): the groups grow by the trials not yet added; the
history is read and split once per trial, single-objective splits from a ranking kept sorted as
trials finish; internal values are computed once per trial and parameter. What it samples is
exactly what `TPESampler` samples, draw for draw (tests/autotune/test_tpe_cache.py compares the
two over long studies); only the time differs.

It overrides private methods of TPESampler (`_sample`, `_get_internal_repr`) and replaces its
group search space: pyproject pins Optuna's major version, and the equality test names what
to adapt when a release changes them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.samplers import TPESampler
from optuna.samplers._tpe import sampler as tpe_internals
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from autotune.search.tpe_history import Column, IncrementalGroups, Ranking


def history_cached(sampler: optuna.samplers.BaseSampler) -> optuna.samplers.BaseSampler:
    """The same sampler, faster: a plain TPESampler becomes a `HistoryCachedTPE` with the same
    settings and random state; any other sampler is returned as it is."""
    return HistoryCachedTPE.of(sampler) if type(sampler) is TPESampler else sampler


@dataclass
class _History:
    """The split history one trial samples all its groups against: two sequences passed to
    TPESampler._build_parzen_estimator, and their trial numbers by id (None: not all finished)."""

    trial: int
    below: list[FrozenTrial]
    above: list[FrozenTrial]
    numbers: dict[int, np.ndarray | None]


class HistoryCachedTPE(TPESampler):
    _history: _History | None
    _columns: dict[str, Column]
    _scores: dict[int, float]
    _finished: dict[int, FrozenTrial]
    _ranking: Ranking | None
    _direction: StudyDirection | None  # the study's first, once seen
    _prefix: int  # trials[:_prefix] were finished and ranked at the last call ...
    _prefix_last: FrozenTrial | None  # ... ending with this trial
    _started: bool  # n_startup_trials finished: relative sampling from now on

    @classmethod
    def of(cls, sampler: TPESampler) -> HistoryCachedTPE:
        fast = cls.__new__(cls)
        fast.__dict__.update(vars(sampler))
        if sampler._group_decomposed_search_space is not None:
            fast._group_decomposed_search_space = IncrementalGroups(
                sampler._group_decomposed_search_space._include_pruned
            )
        fast._history, fast._columns, fast._scores, fast._finished = None, {}, {}, {}
        fast._ranking, fast._direction = None, None  # the ranking is made on the first trial
        fast._prefix, fast._prefix_last = 0, None
        fast._started = False
        return fast

    def _sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        # TPESampler._sample_relative filters the whole history once per group only to count the
        # finished trials against n_startup_trials; finished trials stay finished, so once the
        # count is reached it is not read again.
        if search_space and not self._started:
            finished = study._get_trials(
                deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED), use_cache=True
            )
            self._started = len(finished) >= self._n_startup_trials
            if not self._started:
                return {}
        return self._sample(study, trial, search_space) if search_space else {}

    def _sample(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        # TPESampler._sample, but for the history, read and split once per trial (`_history_of`).
        history = self._history_of(study, trial)
        mpe_below = self._build_parzen_estimator(
            study, search_space, history.below, handle_below=True
        )
        mpe_above = self._build_parzen_estimator(
            study, search_space, history.above, handle_below=False
        )
        samples_below = mpe_below.sample(self._rng.rng, self._n_ei_candidates)
        acq_func_vals = self._compute_acquisition_func(samples_below, mpe_below, mpe_above)
        ret = TPESampler._compare(samples_below, acq_func_vals)
        for param_name, dist in search_space.items():
            ret[param_name] = dist.to_external_repr(ret[param_name])
        return ret

    def _history_of(self, study: optuna.Study, trial: FrozenTrial) -> _History:
        """The trials TPESampler._sample reads, split as it splits them, once per trial: as Optuna
        itself reads the history without constant_liar. (With constant_liar Optuna re-reads it
        for each group; under the study lock no other worker can start a trial meanwhile, so
        all that could differ is a trial finishing in between, seen by the next trial here.)"""
        if self._history is not None and self._history.trial == trial.number:
            return self._history
        if self._constant_liar:
            states = [TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING]
        else:
            states = [TrialState.COMPLETE, TrialState.PRUNED]
        trials = study._get_trials(deepcopy=False, states=states, use_cache=not self._constant_liar)
        if self._gamma is None:
            self._gamma = (
                tpe_internals.default_gamma
                if len(study.directions) <= 1
                else tpe_internals.default_gamma_multiobjective
            )
        ranked, n = self._learn(study, trials, trial.number)
        if ranked:
            below_numbers, above_numbers = self._ranking.split(self._gamma(n))  # type: ignore[union-attr]
            below: list[FrozenTrial] = _Rows()
            above: list[FrozenTrial] = _Rows()
            self._history = _History(
                trial.number, below, above, {id(below): below_numbers, id(above): above_numbers}
            )
            return self._history
        if self._constant_liar:
            trials = [t for t in trials if trial.number != t.number]
        below, above = self._split_trials(study, trials, self._gamma(n))
        self._history = _History(
            trial.number, below, above, {id(part): _numbers(part) for part in (below, above)}
        )
        return self._history

    def _learn(
        self, study: optuna.Study, trials: list[FrozenTrial], current: int
    ) -> tuple[bool, int]:
        """Remember the newly finished trials. Returns whether the ranking can split this history
        (one objective; every trial but the current one COMPLETE, with a value, in number order)
        and the number of finished trials. A prefix of the list found finished and in order last
        time is skipped: finished trials never change, and nothing can enter the list before a
        finished trial without moving it (checked by identity)."""
        if self._direction is None:
            self._direction = study.directions[0]
            self._ranking = (
                Ranking(self._direction == StudyDirection.MAXIMIZE)
                if len(study.directions) == 1
                else None
            )
        start = (
            self._prefix
            if self._prefix
            and len(trials) >= self._prefix
            and trials[self._prefix - 1] is self._prefix_last
            else 0
        )
        usable, previous, finished, settled = (
            self._ranking is not None,
            trials[start - 1].number if start else -1,
            start,
            True,
        )
        for position in range(start, len(trials)):
            t = trials[position]
            if t.number == current:  # with constant_liar: this trial, RUNNING
                settled = False
                continue
            done = t.state.is_finished()
            finished += done
            usable = usable and t.state == TrialState.COMPLETE and t.number > previous
            previous = t.number
            if done and t.number not in self._finished:
                self._finished[t.number] = t
                self._rank(t)
            settled = settled and usable
            if settled:
                self._prefix, self._prefix_last = position + 1, t
        return usable and self._ranking is not None, finished

    def _rank(self, trial: FrozenTrial) -> None:
        if self._ranking is None or trial.state != TrialState.COMPLETE:
            self._ranking = (
                None if trial.state == TrialState.PRUNED else self._ranking
            )  # pruned trials: Optuna's split
            return
        if trial.value is None or math.isnan(trial.value):
            self._ranking = None  # NaN sorts as Python's sort does: leave it to Optuna
            return
        self._ranking.add(trial.number, trial.value, self._score(trial))

    def _split_trials(
        self, study: optuna.Study, trials: list[FrozenTrial], n_below: int
    ) -> tuple[list[FrozenTrial], list[FrozenTrial]]:
        """optuna.samplers._tpe.sampler._split_trials, with each finished trial's infeasibility
        score (read from its system attributes) computed once."""
        complete, pruned, running, infeasible = [], [], [], []
        for trial in trials:
            if trial.state == TrialState.RUNNING:
                running.append(trial)
            elif self._score(trial) > 0:
                infeasible.append(trial)
            elif trial.state == TrialState.COMPLETE:
                complete.append(trial)
            elif trial.state == TrialState.PRUNED:
                pruned.append(trial)
            else:
                raise AssertionError(f"trial {trial.number} is {trial.state.name}")
        below_complete, above_complete = tpe_internals._split_complete_trials(
            complete, study, n_below
        )
        n_below = max(0, n_below - len(below_complete))
        below_pruned, above_pruned = tpe_internals._split_pruned_trials(pruned, study, n_below)
        n_below = max(0, n_below - len(below_pruned))
        n_below = min(n_below, len(infeasible))
        ranked = sorted(infeasible, key=self._score)
        below = below_complete + below_pruned + ranked[:n_below]
        above = above_complete + above_pruned + ranked[n_below:] + running
        below.sort(key=lambda t: t.number)
        above.sort(key=lambda t: t.number)
        return below, above

    def _score(self, trial: FrozenTrial) -> float:
        score = self._scores.get(trial.number)
        if score is None:
            score = self._scores[trial.number] = tpe_internals._get_infeasible_trial_score(trial)
        return score

    def _get_internal_repr(
        self,
        trials: Sequence[FrozenTrial],
        search_space: dict[str, BaseDistribution],
        study: optuna.Study,
    ) -> dict[str, np.ndarray]:
        known = self._history.numbers if self._history is not None else {}
        numbers = known[id(trials)] if id(trials) in known else _numbers(trials)
        if (
            numbers is None
        ):  # constant liar with other workers' RUNNING trials: TPESampler's own way
            return super()._get_internal_repr(list(trials), search_space, study)
        columns = {
            name: self._column(name, distribution) for name, distribution in search_space.items()
        }
        chosen = numbers
        for name, column in columns.items():
            column.fill(name, numbers, self._finished)
            chosen = chosen[column.has[chosen]]
        # What np.asarray makes of TPESampler's lists: a categorical's indices are integers.
        return {
            name: (
                column.values[chosen].astype(np.int64)
                if chosen.size and isinstance(column.distribution, CategoricalDistribution)
                else column.values[chosen]
            )
            for name, column in columns.items()
        }

    def _column(self, name: str, distribution: BaseDistribution) -> Column:
        known = self._columns.get(name)
        if known is None or known.distribution != distribution:
            known = self._columns[name] = Column(distribution)
        return known


class _Rows(list):  # type: ignore[type-arg]
    """A split side known by its trial numbers only (HistoryCachedTPE._get_internal_repr looks
    them up by the object's id); an empty list to anything else."""


def _numbers(trials: Sequence[FrozenTrial]) -> np.ndarray | None:
    """The trials' numbers, when all are finished (their parameters can be cached)."""
    if not all(t.state.is_finished() for t in trials):
        return None
    return np.fromiter((t.number for t in trials), dtype=np.int64, count=len(trials))
