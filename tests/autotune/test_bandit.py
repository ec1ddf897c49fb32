"""The guided sampler's bandit (autotune.search.bandit): how it allots trials among the kinds of
schedule and exploration. Deterministic, no arm starves, an arm that improves gets more trials;
and the arms a study yields are the same however its trials arrive."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Callable

import optuna
from hypothesis import given, settings
from hypothesis import strategies as st
from optuna.trial import TrialState

from autotune.run.objective import Objective
from autotune.run.options import RunOptions
from autotune.run.plan import RunPlan
from autotune.run.seed import seed_study
from autotune.run.study import provenance, settings_for
from autotune.search.bandit import EXPLORE, FLOOR, Arm, allot, gain
from autotune.search.guided import GuidedSampler
from autotune.search.history import History
from autotune.search.objectives import directions
from autotune.search.problem import Search
from autotune.storage import MEMORY, SharedStudy
from simcore.ga1.machine import Machine
from simcore.shape import Shape
from tests.helpers.examples import examples

Pull = Callable[[int], float]  # an arm's value at its n-th pull


def simulate(arms: dict[str, Pull], trials: int) -> list[str]:
    """Which arm each of `trials` trials goes to, each arm's n-th pull valued as `arms` says and
    scored as History scores a kind's refinement (its gain on its own best)."""
    best = {name: pull(0) for name, pull in arms.items()}
    gains: dict[str, list[float]] = {name: [] for name in arms}
    last = dict.fromkeys(arms, 0)
    chosen = []
    for number in range(1, trials + 1):
        view = [Arm((name,), best[name], tuple(gains[name]), last[name]) for name in arms]
        name = str(allot(view, number)[0].name[0])
        value = arms[name](len(gains[name]) + 1)
        gains[name].append(gain(value, best[name], min(best.values()), False))
        best[name], last[name] = min(best[name], value), number
        chosen.append(name)
    return chosen


def flat(value: float) -> Pull:
    return lambda n: value


def improving(start: float, per_pull: float) -> Pull:
    return lambda n: start * (1 - per_pull) ** n


def longest_wait(chosen: list[str], name: str) -> int:
    turns = [0, *(n + 1 for n, arm in enumerate(chosen) if arm == name), len(chosen) + 1]
    return max(b - a for a, b in zip(turns, turns[1:]))


# --- the allotment -------------------------------------------------------------------------


def test_the_allotment_is_a_function_of_the_arms() -> None:
    arms = {
        "a": improving(100.0, 0.01),
        "b": flat(101.0),
        "c": flat(150.0),
        "d": improving(130.0, 0.002),
    }
    assert simulate(arms, 300) == simulate(arms, 300)


def test_an_arm_that_improves_gets_more_trials() -> None:
    """Two arms level at the start: the one whose pulls keep improving gets most of the trials;
    when neither improves they share alike."""
    counts = Counter(simulate({"improves": improving(100.0, 0.005), "stands": flat(100.0)}, 200))
    assert counts["improves"] > 3 * counts["stands"]
    level = Counter(simulate({"one": flat(100.0), "other": flat(100.0)}, 200))
    assert abs(level["one"] - level["other"]) <= 2


def test_an_arm_far_behind_that_improves_fast_catches_up() -> None:
    """An arm 5% behind whose pulls gain 1% each earns more trials than a level incumbent."""
    counts = Counter(simulate({"ahead": flat(100.0), "behind": improving(105.0, 0.01)}, 100))
    assert counts["behind"] > counts["ahead"]


def test_an_arm_far_behind_that_stands_still_gets_only_the_floor() -> None:
    chosen = simulate({"ahead": improving(100.0, 0.001), "behind": flat(150.0)}, 300)
    assert Counter(chosen)["behind"] <= 300 // (FLOOR * 2) + 1
    assert longest_wait(chosen, "behind") <= FLOOR * 2 + 1


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.floats(1.0, 10.0), min_size=2, max_size=7), st.integers(0, 2**16))
def test_no_arm_starves(levels: list[float], seed: int) -> None:
    """Whatever the arms' values, none waits more than FLOOR x (number of arms) trials (and the
    other due arms served first), however much better the others are or however fast they
    improve."""
    rng = random.Random(seed)
    arms: dict[str, Pull] = {
        f"arm{i}": improving(level, rng.choice([0.0, 0.002, 0.02])) if i else flat(level)
        for i, level in enumerate(levels)
    }
    chosen = simulate(arms, 400)
    for name in arms:
        assert longest_wait(chosen, name) <= FLOOR * len(arms) + len(arms), name


ARMS = st.lists(
    st.tuples(
        st.floats(1.0, 100.0) | st.just(math.inf),
        st.lists(st.floats(0.0, 0.1), max_size=12),
        st.integers(-1, 200),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=examples(50), deadline=None)
@given(ARMS, st.integers(0, 300))
def test_the_order_puts_due_arms_first_and_leaves_none_out(
    specs: list[tuple[float, list[float], int]], number: int
) -> None:
    arms = [Arm((f"kind{i}",), best, tuple(g), last) for i, (best, g, last) in enumerate(specs)]
    order = allot(arms, number)
    due = [arm for arm in arms if number - arm.last > FLOOR * len(arms)]
    assert [arm.last for arm in order[: len(due)]] == sorted(arm.last for arm in due)
    assert {arm.name for arm in order[: len(due)]} == {arm.name for arm in due}
    assert {arm.name for arm in order} == {
        arm.name for arm in arms if arm in due or math.isfinite(arm.best)
    }
    assert len(order) == len({arm.name for arm in order})
    assert allot(list(reversed(arms)), number) == order


def test_a_pull_gains_what_it_improves_and_an_exploration_what_brings_it_near() -> None:
    assert gain(95.0, 100.0, 90.0, explored=False) == 5.0 / 95.0
    assert math.isclose(gain(93.0, 100.0, 90.0, explored=True), 7.0 / 93.0 - 3.0 / 90.0)
    assert gain(95.0, 100.0, 90.0, explored=True) == 0.0  # lands further behind than it gains
    assert gain(95.0, 100.0, 96.0, explored=True) == 5.0 / 95.0  # a new incumbent: all of it
    assert gain(80.0, math.inf, 90.0, explored=True) == 10.0 / 80.0  # a new kind, ahead
    assert gain(95.0, math.inf, 90.0, explored=True) == 0.0  # a new kind, behind
    assert gain(100.0, 100.0, 90.0, explored=False) == 0.0
    assert gain(5.0, math.inf, 90.0, explored=False) == 0.0
    assert gain(math.inf, 100.0, 90.0, explored=True) == 0.0  # infeasible


# --- the arms of a study -------------------------------------------------------------------

SHAPE = Shape(64, 96, 80)


def guided_study(trials: int, seed: int = 0) -> tuple[optuna.Study, Search]:
    spec = RunPlan.of_shape(SHAPE, Machine(slots=24))
    options = RunOptions(trials=trials, seed=seed, storage=MEMORY, write=False)
    ((_, search),) = spec.searches()
    shared = SharedStudy(MEMORY, "bandit")
    study = shared.open(GuidedSampler(search, seed), directions(spec.objective_measures()))
    seed_study(shared, study, search)
    objective = Objective(search, study, provenance(settings_for(spec, options, "bandit")), shared)
    shared.optimize(study, objective, trials, None, False)
    return study, search


def test_a_study_yields_the_same_arms_however_its_trials_arrive() -> None:
    """Read in order, in reverse (as from another worker) or at once (a resumed study), the
    trials give the same arms: the allotment carries on where it stopped."""
    study, search = guided_study(80)
    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    in_order, reverse, anew = History(search), History(search), History(search)
    for trial in trials:
        in_order.update([trial], -1)
    reverse.update(list(reversed(trials)), -1)
    anew.update(trials, -1)
    assert in_order.arms() == reverse.arms() == anew.arms()
    arms = anew.arms()
    assert arms[-1].name == EXPLORE and len(arms) >= 3
    origins = Counter(t.user_attrs["source"] for t in trials)
    pulls = origins["refine"] + origins["explore"] + origins["random"]
    assert sum(len(arm.gains) for arm in arms) == pulls
    assert arms[0].best == min(t.values[0] for t in trials)


def test_the_same_seed_gives_the_same_allotment() -> None:
    first, _ = guided_study(60, seed=4)
    second, _ = guided_study(60, seed=4)
    assert [t.params for t in first.trials] == [t.params for t in second.trials]
    assert [t.user_attrs["source"] for t in first.trials] == [
        t.user_attrs["source"] for t in second.trials
    ]


def test_every_kind_of_a_study_is_refined_and_exploration_has_its_turns() -> None:
    """Over 150 trials exploration gets at least its floor, and every feasible kind is pulled,
    unless it has nothing fresh left to refine."""
    study, search = guided_study(150)
    history = History(search)
    history.update(study.get_trials(deepcopy=False), -1)
    arms = {arm.name: arm for arm in history.arms()}
    assert len(arms[EXPLORE].gains) >= 150 // (FLOOR * len(arms)) - 1
    sampler = study.sampler
    assert isinstance(sampler, GuidedSampler)
    for name, arm in arms.items():
        if name != EXPLORE and math.isfinite(arm.best) and not arm.gains:
            assert isinstance(name, tuple)
            assert sampler._refiner.around(name) is None
