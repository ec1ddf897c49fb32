"""How the guided sampler shares its refinement trials among the kinds of schedule (family and
structural choices): a bandit over the kinds, each an arm, allotted by its recent progress.

An arm's promise is the share of the incumbent's value it may still gain within `HORIZON` more
trials: its recent rate of improvement (over its last `WINDOW` evaluations) projected that far,
plus an optimistic bonus that shrinks with its trials (`BONUS / sqrt(trials)`), less how far its
best lies behind the incumbent. The arm of most promise is refined next. An arm that improves
fast earns trials; one far behind that stands still gets only the floor: no arm waits more than
`FLOOR` trials per arm for its turn, so none starves. Everything here is a function of the
evaluations (values in trial order and trial numbers), without randomness, so the same study
gives the same allotment, and a resumed study the one it would have had."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from autotune.search.problem import INFEASIBLE_VALUE

WINDOW = 8  # evaluations over which an arm's recent progress is measured
HORIZON = 20  # trials ahead over which that progress is projected
BONUS = 0.02  # the relative gain presumed of an untried arm, shrinking with 1 / sqrt(its trials)
FLOOR = 6  # no arm waits more than FLOOR x (number of arms) trials for a turn


@dataclass(frozen=True)
class Arm:
    kind: tuple  # the family and structural choices (History.kind)
    values: tuple[
        float, ...
    ]  # every evaluation of the kind, in trial order (infeasible: INFEASIBLE_VALUE)
    last: int  # the trial number of the kind's latest evaluation

    @property
    def best(self) -> float:
        return min(self.values)

    def feasible(self) -> bool:
        return self.best < INFEASIBLE_VALUE

    def rate(self) -> float:
        """The relative improvement of the arm's best per evaluation, over its last WINDOW
        evaluations (0 until it has a feasible value before them)."""
        if len(self.values) < 2:
            return 0.0
        cut = max(1, len(self.values) - WINDOW)
        before = min(self.values[:cut])
        if before >= INFEASIBLE_VALUE:
            return 0.0
        return (before - self.best) / self.best / (len(self.values) - cut)

    def promise(self, incumbent: float) -> float:
        """What the arm may gain on the incumbent's value within HORIZON trials (a share of it;
        negative while the arm lies further behind than its progress and bonus cover)."""
        gap = (self.best - incumbent) / incumbent
        return HORIZON * self.rate() + BONUS / math.sqrt(len(self.values)) - gap


def allot(arms: Sequence[Arm], number: int, floor: int = FLOOR) -> list[Arm]:
    """The arms in the order trial `number` should try them (the next arm with a fresh candidate
    gets the trial): an arm that has waited more than `floor` trials per arm first (the longest
    wait first), then by promise; ties go to the better arm. Arms without a feasible evaluation
    are refined only on the floor's turn."""
    feasible = [arm for arm in arms if arm.feasible()]
    if not feasible:
        return sorted(arms, key=lambda arm: arm.last)
    incumbent = min(arm.best for arm in feasible)
    due = sorted(
        (arm for arm in arms if number - arm.last > floor * len(arms)), key=lambda arm: arm.last
    )
    waited = {arm.kind for arm in due}
    rest = sorted(
        (arm for arm in feasible if arm.kind not in waited),
        key=lambda arm: (-arm.promise(incumbent), arm.best, arm.last),
    )
    return [*due, *rest]
