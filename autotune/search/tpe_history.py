"""What HistoryCachedTPE (autotune.search.tpe) keeps about finished trials, which never
change: the group decomposition, each parameter's internal values, and the single-objective
ranking behind TPE's split of the history into the good trials and the rest."""

from __future__ import annotations

import bisect
import copy
from typing import Mapping

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.search_space.group_decomposed import _GroupDecomposedSearchSpace, _SearchSpaceGroup
from optuna.trial import FrozenTrial, TrialState


class IncrementalGroups(_GroupDecomposedSearchSpace):
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
        states = (
            (TrialState.COMPLETE, TrialState.PRUNED)
            if self._include_pruned
            else (TrialState.COMPLETE,)
        )
        for trial in study._get_trials(deepcopy=False, states=states, use_cache=use_cache):
            if trial._trial_id not in self._added:
                self._added.add(trial._trial_id)
                self._search_space.add_distributions(trial.distributions)
        return copy.deepcopy(self._search_space)


class Column:
    """One parameter's internal values over a study's finished trials, by trial number."""

    def __init__(self, distribution: BaseDistribution) -> None:
        self.distribution = distribution
        self.values = np.zeros(0)
        self.has = np.zeros(0, bool)  # the trial has the parameter
        self.seen = np.zeros(0, bool)  # the trial has been read

    def fill(self, name: str, numbers: np.ndarray, finished: Mapping[int, FrozenTrial]) -> None:
        if numbers.size and numbers.max() >= self.seen.size:
            old, size = self.seen.size, max(int(numbers.max()) + 1, 2 * self.seen.size)
            self.values, self.has, self.seen = (
                np.resize(a, size) for a in (self.values, self.has, self.seen)
            )
            self.seen[old:] = False  # np.resize repeats the old contents
        for number in numbers[~self.seen[numbers]]:
            params = finished[number].params
            self.has[number] = name in params
            if self.has[number]:
                self.values[number] = self.distribution.to_internal_repr(params[name])
            self.seen[number] = True


class Ranking:
    """TPE's split of a single-objective history of COMPLETE trials, kept sorted as trials
    finish: feasible trials by value, infeasible ones by how far over their constraints they
    are, ties by number (what Optuna's stable sorts of the history, in number order, give)."""

    def __init__(self, maximize: bool) -> None:
        self._sign = -1.0 if maximize else 1.0
        self._feasible: list[tuple[float, int]] = []
        self._infeasible: list[tuple[float, int]] = []
        self._numbers: list[int] = []

    def add(self, number: int, value: float, score: float) -> None:
        bisect.insort(self._numbers, number)
        if score > 0:
            bisect.insort(self._infeasible, (score, number))
        else:
            bisect.insort(self._feasible, (self._sign * value, number))

    def split(self, n_below: int) -> tuple[np.ndarray, np.ndarray]:
        """The numbers of the `n_below` best trials and of the rest, each in number order
        (optuna.samplers._tpe.sampler._split_trials without pruned or running trials)."""
        good = [n for _, n in self._feasible[:n_below]]
        good += [n for _, n in self._infeasible[: max(0, n_below - len(good))]]
        below = np.array(sorted(good), dtype=np.int64)
        everything = np.array(self._numbers, dtype=np.int64)
        return below, everything[~np.isin(everything, below)]
