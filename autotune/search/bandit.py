"""How the guided sampler shares its trials: a bandit whose arms are the kinds of schedule
(family and structural choices; an arm's pull refines that kind) and exploration (a pull
mutates one of the best schedules, of any kind).

A pull's gain is the share by which it improved its kind's best. An exploration is credited
only with what brings its kind nearer the incumbent: its gain less how far it lands behind the
incumbent. An arm's promise is what it may still gain on the incumbent within `HORIZON` more
trials: its mean gain over its last `WINDOW` pulls projected that far, plus an optimistic bonus
that shrinks with its pulls (`BONUS / sqrt(pulls + 1)`), less how far its best lies behind the
incumbent (nothing for exploration). Each trial goes to the arm of most promise, so an arm that
improves earns trials, and one that lies far behind and stands still gets only the floor: no
arm waits more than `FLOOR` trials per arm for its turn, so none starves.

Everything here is a function of the study's evaluations (values and origins in trial order),
without randomness: the same study gives the same allotment, and a resumed study the one it
would have had."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

WINDOW = 8  # pulls over which an arm's recent gain is measured
HORIZON = 20  # trials ahead over which that gain is projected
BONUS = 0.02  # the gain presumed of an untried arm, shrinking with 1 / sqrt(pulls + 1)
FLOOR = 6  # no arm waits more than FLOOR x (number of arms) trials for a turn
EXPLORE = "explore"  # the name of the exploration arm (a kind is a tuple)


@dataclass(frozen=True)
class Arm:
    name: tuple | str  # a kind (History.kind), or EXPLORE
    best: float  # the kind's best value (exploration: the incumbent's); inf while none is feasible
    gains: tuple[float, ...]  # each pull's gain, in trial order
    last: int  # the arm's latest pull (a kind never pulled: the trial that found it)

    def rate(self) -> float:
        """The mean gain of the arm's last WINDOW pulls (0 before any)."""
        recent = self.gains[-WINDOW:]
        return sum(recent) / len(recent) if recent else 0.0

    def promise(self, incumbent: float) -> float:
        """What the arm may gain on the incumbent within HORIZON trials, as a share of it
        (negative while the arm lies further behind than its progress and bonus cover)."""
        gap = (self.best - incumbent) / abs(incumbent or 1.0)
        return HORIZON * self.rate() + BONUS / math.sqrt(len(self.gains) + 1) - gap


def gain(value: float, kind_best: float, incumbent: float, explored: bool) -> float:
    """A pull's gain: the share by which `value` improves on its kind's best so far. An
    exploration's is net of the share by which it lies behind the incumbent so far, and one
    that finds a new kind gains what it improves on the incumbent (never below 0)."""
    if not math.isfinite(value):
        return 0.0
    if not math.isfinite(kind_best):
        if not explored or not math.isfinite(incumbent):
            return 0.0
        kind_best = incumbent  # a new kind: what it gains on the incumbent
    found = (kind_best - value) / abs(value or 1.0)
    if explored and math.isfinite(incumbent):
        found -= max(0.0, (value - incumbent) / abs(incumbent or 1.0))
    return max(0.0, found)


def allot(arms: Sequence[Arm], number: int, floor: int = FLOOR) -> list[Arm]:
    """The arms in the order trial `number` should try them (the first with a fresh candidate
    gets the trial): any arm that has waited more than `floor` trials per arm first, the longest
    wait first; then the others by promise, ties to the better arm, then the longer wait. An arm
    with nothing feasible yet is pulled only on the floor's turn. The order does not depend on
    the order of `arms`."""
    feasible = [arm for arm in arms if math.isfinite(arm.best)]
    incumbent = min((arm.best for arm in feasible), default=math.inf)
    due = sorted(
        (arm for arm in arms if number - arm.last > floor * len(arms)),
        key=lambda arm: (arm.last, arm.best, repr(arm.name)),
    )
    waited = {arm.name for arm in due}
    rest = sorted(
        (arm for arm in feasible if arm.name not in waited),
        key=lambda arm: (-arm.promise(incumbent), arm.best, arm.last, repr(arm.name)),
    )
    return [*due, *rest]
