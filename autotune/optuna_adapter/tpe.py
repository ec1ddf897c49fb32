"""Optuna's TPE sampler, remembering what it derives from finished trials.

Per trial, TPE with group=True re-derives everything from the whole history, once per group
of parameters: the groups themselves (every finished trial's parameter names, re-added each
trial), the split of the history into the good and the rest (each trial's constraint read back
from its system attributes, then a sort, once per group) and each trial's parameters in
internal form. A finished trial never changes, so `HistoryCachedTPE` keeps all three: groups
grow by the trials not yet added, the split is computed once per trial (it depends only on the
finished trials and the number kept), internal values once per trial and parameter. What it
samples is exactly what `TPESampler` samples, draw for draw (tests/autotune/test_tpe_cache.py
compares the two over long studies); only the time differs.

It overrides private methods of TPESampler (`_sample`, `_get_internal_repr`) and replaces its
group search space: pyproject pins Optuna's major version, and the equality test names what
to adapt when a release changes them."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.samplers import TPESampler
from optuna.samplers._tpe import sampler as tpe_internals
from optuna.search_space.group_decomposed import _GroupDecomposedSearchSpace, _SearchSpaceGroup
from optuna.trial import FrozenTrial, TrialState


def history_cached(sampler: optuna.samplers.BaseSampler) -> optuna.samplers.BaseSampler:
    """The same sampler, faster: a plain TPESampler becomes a `HistoryCachedTPE` with the same
    settings and random state; any other sampler is returned as it is."""
    return HistoryCachedTPE.of(sampler) if type(sampler) is TPESampler else sampler


class _IncrementalGroups(_GroupDecomposedSearchSpace):
    """The group decomposition, adding each finished trial once: adding a trial again never
    changes the groups (its parameter names are already a union of groups)."""

    def __init__(self, include_pruned: bool) -> None:
        super().__init__(include_pruned)
        self._added: set[int] = set()

    def calculate(self, study: optuna.Study, use_cache: bool = False) -> _SearchSpaceGroup:
        if self._study_id is None:
            self._study_id = study._study_id
        elif self._study_id != study._study_id:
            raise ValueError("`_GroupDecomposedSearchSpace` cannot handle multiple studies.")
        states = (TrialState.COMPLETE, TrialState.PRUNED) if self._include_pruned else (TrialState.COMPLETE,)
        for trial in study._get_trials(deepcopy=False, states=states, use_cache=use_cache):
            if trial._trial_id not in self._added:
                self._added.add(trial._trial_id)
                self._search_space.add_distributions(trial.distributions)
        return copy.deepcopy(self._search_space)


class _Column:
    """One parameter's internal values over a study's finished trials, by trial number."""

    def __init__(self, distribution: BaseDistribution) -> None:
        self.distribution = distribution
        self.values = np.zeros(0)
        self.has = np.zeros(0, bool)     # the trial has the parameter
        self.seen = np.zeros(0, bool)    # the trial has been read

    def fill(self, name: str, trials: Sequence[FrozenTrial], numbers: np.ndarray) -> None:
        if numbers.size and numbers.max() >= self.seen.size:
            old, size = self.seen.size, max(int(numbers.max()) + 1, 2 * self.seen.size)
            self.values, self.has, self.seen = (np.resize(a, size) for a in (self.values, self.has, self.seen))
            self.seen[old:] = False  # np.resize repeats the old contents
        for position in np.flatnonzero(~self.seen[numbers]):
            trial = trials[position]
            if name in trial.params:
                self.values[trial.number] = self.distribution.to_internal_repr(trial.params[name])
                self.has[trial.number] = True
            else:
                self.has[trial.number] = False
            self.seen[trial.number] = True


@dataclass
class _History:
    """The split history one trial samples all its groups against."""

    trial: int
    below: list[FrozenTrial]
    above: list[FrozenTrial]
    numbers: dict[int, np.ndarray | None]   # id(list) -> its trial numbers (None: not all finished)


class HistoryCachedTPE(TPESampler):
    _history: _History | None
    _columns: dict[str, _Column]
    _scores: dict[int, float]

    @classmethod
    def of(cls, sampler: TPESampler) -> HistoryCachedTPE:
        fast = cls.__new__(cls)
        fast.__dict__.update(vars(sampler))
        if sampler._group_decomposed_search_space is not None:
            fast._group_decomposed_search_space = _IncrementalGroups(sampler._group_decomposed_search_space._include_pruned)
        fast._history, fast._columns, fast._scores = None, {}, {}
        return fast

    def _sample(self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        # TPESampler._sample, but for the history, read and split once per trial (`_history_of`).
        history = self._history_of(study, trial)
        mpe_below = self._build_parzen_estimator(study, search_space, history.below, handle_below=True)
        mpe_above = self._build_parzen_estimator(study, search_space, history.above, handle_below=False)
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
        if self._constant_liar:
            trials = [t for t in trials if trial.number != t.number]
        if self._gamma is None:
            self._gamma = tpe_internals.default_gamma if len(study.directions) <= 1 else tpe_internals.default_gamma_multiobjective
        n = sum(t.state != TrialState.RUNNING for t in trials)  # Ignore running trials.
        below, above = self._split_trials(study, trials, self._gamma(n))
        numbers = {id(part): _numbers(part) for part in (below, above)}
        self._history = _History(trial.number, below, above, numbers)
        return self._history

    def _split_trials(self, study: optuna.Study, trials: list[FrozenTrial], n_below: int) -> tuple[list[FrozenTrial], list[FrozenTrial]]:
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
        below_complete, above_complete = tpe_internals._split_complete_trials(complete, study, n_below)
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

    def _get_internal_repr(self, trials: Sequence[FrozenTrial], search_space: dict[str, BaseDistribution],
                           study: optuna.Study) -> dict[str, np.ndarray]:
        known = self._history.numbers if self._history is not None else {}
        numbers = known[id(trials)] if id(trials) in known else _numbers(trials)
        if numbers is None:  # constant liar with other workers' RUNNING trials: TPESampler's own way
            return super()._get_internal_repr(list(trials), search_space, study)
        columns = {name: self._column(name, distribution) for name, distribution in search_space.items()}
        chosen = numbers
        for name, column in columns.items():
            column.fill(name, trials, numbers)
            chosen = chosen[column.has[chosen]]
        # What np.asarray makes of TPESampler's lists: a categorical's indices are integers.
        return {name: (column.values[chosen].astype(np.int64) if chosen.size and isinstance(column.distribution, CategoricalDistribution)
                       else column.values[chosen]) for name, column in columns.items()}

    def _column(self, name: str, distribution: BaseDistribution) -> _Column:
        known = self._columns.get(name)
        if known is None or known.distribution != distribution:
            known = self._columns[name] = _Column(distribution)
        return known


def _numbers(trials: Sequence[FrozenTrial]) -> np.ndarray | None:
    """The trials' numbers, when all are finished (their parameters can be cached)."""
    if not all(t.state.is_finished() for t in trials):
        return None
    return np.fromiter((t.number for t in trials), dtype=np.int64, count=len(trials))
