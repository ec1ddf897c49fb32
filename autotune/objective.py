"""The Optuna side of a trial: suggest a candidate, evaluate it once, record the outcome."""
from __future__ import annotations

from typing import Sequence

import optuna

from search_spaces.domains import Choice, IntRange, Param, Point

from autotune.problem import INFEASIBLE_VALUE, Candidate, Problem, evaluate

CONSTRAINT_NAME = "slots_over"
RESULT_ATTR = "result"


def to_distribution(param: Param) -> optuna.distributions.BaseDistribution:
    domain = param.domain
    if isinstance(domain, IntRange):
        return optuna.distributions.IntDistribution(domain.low, domain.high, step=domain.step, log=domain.log)
    assert isinstance(domain, Choice)
    return optuna.distributions.CategoricalDistribution(list(domain.options))


def _suggest(trial: optuna.Trial, param: Param) -> object:
    domain = param.domain
    if isinstance(domain, IntRange):
        return trial.suggest_int(param.name, domain.low, domain.high, step=domain.step, log=domain.log)
    return trial.suggest_categorical(param.name, list(domain.options))


def sample_candidate(trial: optuna.Trial, problem: Problem) -> Candidate:
    """Family first, then that family's parameters, then the machine's (define-by-run)."""
    names = [f.name for f in problem.families]
    family = str(trial.suggest_categorical("family", names))
    point: Point = {p.name: _suggest(trial, p) for p in problem.family(family).params(problem.shape, problem.machine.T)}  # type: ignore[misc]
    machine_point: Point = {p.name: _suggest(trial, p) for p in problem.machine_params()}  # type: ignore[misc]
    return Candidate(family, point, machine_point)


def candidate_from_params(problem: Problem, params: dict[str, object]) -> Candidate:
    """Rebuild a candidate from a trial's recorded parameters."""
    family = str(params["family"])
    point = {p.name: params[p.name] for p in problem.family(family).params(problem.shape, problem.machine.T)}
    machine_point = {p.name: params[p.name] for p in problem.machine_params() if p.name in params}
    return Candidate(family, point, machine_point)  # type: ignore[arg-type]


def canonical(problem: Problem, candidate: Candidate) -> Candidate:
    """The candidate with its family's unused parameters fixed (see Family.canonical)."""
    point = problem.family(candidate.family).canonical(candidate.point, problem.shape, problem.machine.T)
    return Candidate(candidate.family, point, candidate.machine_point)


class Objective:
    """Evaluates each distinct candidate once: a repeat is answered from the cache, which starts
    with the study's completed trials (so a resumed study or another worker re-simulates nothing)."""

    def __init__(self, problem: Problem, study: optuna.Study, objectives: Sequence[str] = ("cycles",)) -> None:
        self.problem = problem
        self.objectives = tuple(objectives)
        self.cache: dict[str, tuple[dict[str, object], int]] = {}
        for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
            if "family" in trial.params and RESULT_ATTR in trial.user_attrs:
                key = canonical(problem, candidate_from_params(problem, trial.params)).key()
                self.cache.setdefault(key, (dict(trial.user_attrs[RESULT_ATTR]), trial.number))

    def __call__(self, trial: optuna.Trial) -> float | tuple[float, ...]:
        candidate = self.candidate(trial)
        return self.record(trial, self.result(candidate, trial.number))

    def candidate(self, trial: optuna.Trial) -> Candidate:
        """Sample, then fix the family's unused parameters: equal schedules share one key."""
        return canonical(self.problem, sample_candidate(trial, self.problem))

    def result(self, candidate: Candidate, number: int) -> dict[str, object]:
        """The cached result of an equal candidate, or a new evaluation (cached)."""
        key = candidate.key()
        if key in self.cache:
            attrs, source = self.cache[key]
            return {**attrs, "duplicate_of": source}
        # "point" is the canonical candidate: the leaderboard ranks each schedule once.
        attrs = {**evaluate(self.problem, candidate), "point": candidate.params()}
        self.cache[key] = (attrs, number)
        return attrs

    def record(self, trial: optuna.Trial, attrs: dict[str, object]) -> float | tuple[float, ...]:
        # Two storage writes per trial, not one per field: the storage is the slow part.
        trial.set_user_attr(RESULT_ATTR, attrs)
        # Optuna's constraint API: > 0 is infeasible, graded by how far over the limit.
        trial.set_constraint(CONSTRAINT_NAME, float(attrs["violation"]))  # type: ignore[arg-type]
        return objective_values(attrs, self.objectives)


def objective_values(attrs: dict[str, object], objectives: Sequence[str]) -> float | tuple[float, ...]:
    """Minimised values; an infeasible candidate gets a finite value worse than any real one."""
    values = []
    for name in objectives:
        if not attrs.get("feasible"):
            values.append(INFEASIBLE_VALUE)
        elif name in attrs:  # any metric the family's oracle reports (cycles, words_per_mac, ...)
            values.append(float(attrs[name]))  # type: ignore[arg-type]
        elif name == "scratchpad_words":
            machine = attrs["machine"]
            values.append(float(machine["slots"] * machine["T"] ** 2))  # type: ignore[index]
        elif name in ("dma_words_per_cycle", "mxu_cycles"):
            values.append(float(attrs["machine"][name]))  # type: ignore[index]
        else:
            raise ValueError(f"unknown objective {name!r}")
    return values[0] if len(values) == 1 else tuple(values)

