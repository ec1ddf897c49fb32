"""The guided sampler (`--sampler guided`, the default): local refinement around the best
schedules, with exploration, every evaluation a trial of the one study.

Each trial the sampler proposes is a whole candidate, chosen before the trial runs, by a bandit
(`autotune.search.bandit`) whose arms are the kinds of schedule (family and structural choices,
e.g. general blocks, strips in rows) and exploration. The arm of most promise (recent progress,
a bonus for few pulls, less how far behind the incumbent it lies) gets the trial, and no arm
waits longer than a floor; an arm with nothing fresh passes the trial to the next.

* refining a kind (`autotune.search.refine.Refiner.around`): the kind's last improving move once
  more (an integer parameter moved as far again), else the first untried neighbour of the kind's
  best (one parameter moved, nearest moves first: `Search.neighbours`), else two of its nearest
  moves at once, else the neighbours of the kind's next-best schedules;
* exploring: one of the ten best schedules with a few parameters redrawn at random ("mutate"),
  or failing that a random candidate.

A proposal is never a schedule already evaluated, nor one pending in another worker (RUNNING and
WAITING trials count as taken: the constant liar of refinement; workers propose under the study
lock), nor one that does not fit the machine. It is a function of the study's trials, the trial
number and the seed, so the same seed gives the same study and a resumed study carries on where
it stopped. Each proposed trial records where its candidate came from in the user attribute
`source` (refine, explore, random); enqueued trials (baseline, --enqueue, --transfer) run as
given. With several objectives there is no single incumbent: the sampler is then the
multivariate TPE of `--sampler tpe`, over the conditional encoding. `allotment="turns"` keeps the
earlier schedule for comparison: the incumbent's kind on every other refinement, the other kinds
in turn, one exploration in `explore_every` once the incumbent has stood for `stall` trials."""

from __future__ import annotations

import math
import random
from typing import Any, Sequence

from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, TPESampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from autotune import record
from autotune.search import bandit
from autotune.search.distributions import to_distribution
from autotune.search.history import History
from autotune.search.problem import Candidate, Search, Suggest
from autotune.search.refine import Refiner
from autotune.storage import set_trial_user_attr
from search_spaces.domains import Choice, IntRange, Param, Value

EXPLORE_EVERY = 4  # one proposal in this many explores, even while refinement has moves left
TRIES = 100  # draws before giving up on a fresh candidate that fits
STALL = 8  # trials the incumbent must stand before exploration starts
MUTATED = 2  # parameters an exploration redraws (at least; sometimes more)


class GuidedSampler(BaseSampler):
    # explorer: "mutate" (the default: an elite schedule with a few parameters redrawn) or "random";
    # the keyword arguments other than search and seed exist for the ablations of bench_search.py.
    def __init__(
        self,
        search: Search,
        seed: int,
        explore_every: int = EXPLORE_EVERY,
        explorer: str = "mutate",
        momentum: bool = True,
        pairs: bool = True,
        stall: int = STALL,
        allotment: str = "bandit",
        floor: int = bandit.FLOOR,
    ) -> None:
        self._search = search
        self._allotment = allotment
        self._floor = floor
        self._stall = stall
        self._rng = random.Random(seed)
        self._tpe = TPESampler(
            seed=seed, multivariate=True, group=True, n_startup_trials=20, constant_liar=True
        )
        self._explore_every = explore_every
        self._explorer = explorer
        self._history = History(search)
        self._refiner = Refiner(search, self._history, momentum, pairs)
        self._plans: dict[int, dict[str, Any]] = {}
        self._space: dict[str, BaseDistribution] = {}  # every parameter a candidate may suggest
        for param in search.all_params():
            self._space.setdefault(param.name, to_distribution(param))

    def reseed_rng(self) -> None:
        self._rng = random.Random()
        self._tpe.reseed_rng()

    # --- Optuna's sampler interface --------------------------------------------------------

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._tpe.before_trial(study, trial)
        if "fixed_params" in trial.system_attrs or len(study.directions) > 1:
            return
        self._history.update(study.get_trials(deepcopy=False), trial.number)
        candidate, source = self.propose(trial.number)
        self._plans[trial.number] = candidate.params()
        set_trial_user_attr(study, trial, record.ORIGIN, source)

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        if trial.number in self._plans:
            return self._space
        return self._tpe.infer_relative_search_space(study, trial)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if trial.number in self._plans:
            return {k: v for k, v in self._plans[trial.number].items() if k in search_space}
        return self._tpe.sample_relative(study, trial, search_space)

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        return self._tpe.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(
        self, study: Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None
    ) -> None:
        self._plans.pop(trial.number, None)
        self._tpe.after_trial(study, trial, state, values)

    # --- proposals -------------------------------------------------------------------------

    def propose(self, number: int) -> tuple[Candidate, str]:
        """The candidate for trial `number` and where it came from (refine, explore or random):
        from the arm the bandit allots the trial to, or the next arm in its order when that one
        has nothing fresh; "turns": see the module's docstring."""
        if self._allotment == "turns":
            return self._in_turn(number)
        for arm in bandit.allot(self._history.arms(), number, self._floor):
            if arm.name == bandit.EXPLORE:
                return self._explored()
            assert isinstance(arm.name, tuple)
            found = self._refiner.around(arm.name)
            if found is not None:
                return found, "refine"
        return self._explored()

    def _stalled(self, number: int) -> bool:
        """Whether trial `number` explores on the stall rule: one trial in `explore_every` once
        the incumbent has stood for `stall` trials."""
        since = number - self._history.incumbent_trial()
        return since > self._stall and number % self._explore_every == 0

    def _in_turn(self, number: int) -> tuple[Candidate, str]:
        if not self._stalled(number):
            found = self._refiner.next(number)
            if found is not None:
                return found, "refine"
        return self._explored()

    def _explored(self) -> tuple[Candidate, str]:
        """An exploration: a mutant of the elite, or a random candidate when none is fresh."""
        found = self._mutant() if self._explorer == "mutate" else None
        return (found, "explore") if found is not None else (self._random(), "random")

    def _fresh(self, candidate: Candidate) -> bool:
        return self._search.fits(candidate) and not self._history.taken(candidate)

    def _mutant(self) -> Candidate | None:
        """One of the ten best schedules (the better, the likelier) with a few parameters drawn
        at random from a random candidate of the same family."""
        drawn_from = {family.name for family in self._search.families}
        # A schedule imported whole (its family never drawn) has nothing to redraw.
        elite = [c for c in self._history.elite(10) if c.family in drawn_from]
        if not elite:
            return None
        for _ in range(TRIES):
            base = elite[min(len(elite) - 1, int(self._rng.expovariate(0.5)))]
            drawn = self._search.sample(suggest_from({"family": base.family}, self._rng))
            names = list(base.point)
            chosen = set(
                self._rng.sample(names, min(len(names), MUTATED + int(self._rng.expovariate(1.0))))
            )
            point = {k: drawn.point[k] if k in chosen else v for k, v in base.point.items()}
            candidate = self._search.canonical(Candidate(base.family, point, base.machine_point))
            if self._fresh(candidate):
                return candidate
        return None

    def _random(self) -> Candidate:
        candidate = self._search.sample(suggest_from({}, self._rng))
        for _ in range(TRIES):
            if self._fresh(candidate):
                break
            candidate = self._search.sample(suggest_from({}, self._rng))
        return candidate


def suggest_from(proposal: dict[str, Any], rng: random.Random) -> Suggest:
    """A suggest function that answers from `proposal`, and draws at random (uniformly; on a log
    range, uniformly in the exponent) what the proposal lacks or holds outside the domain."""

    def suggest(param: Param) -> Value:
        domain = param.domain
        if param.name in proposal and domain.contains(proposal[param.name]):
            return proposal[param.name]  # type: ignore[no-any-return]
        if isinstance(domain, Choice):
            return domain.options[rng.randrange(len(domain.options))]
        assert isinstance(domain, IntRange)
        if domain.log:
            return domain.clip(
                int(round(math.exp(rng.uniform(math.log(domain.low), math.log(domain.high)))))
            )
        return domain.low + domain.step * rng.randrange(
            (domain.high - domain.low) // domain.step + 1
        )

    return suggest
