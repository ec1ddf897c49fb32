"""What a study has tried, as the guided sampler sees it: every distinct candidate evaluated
(its best value and the first trial that found it), and the candidates still pending in other
workers. Read incrementally from the study's trials; keys are the search's canonical keys, so
equal schedules are one entry whatever encoding recorded them."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Sequence

from optuna.trial import FrozenTrial, TrialState

from autotune.record import TrialRecord, candidate_params
from autotune.search.bandit import EXPLORE, Arm, gain
from autotune.search.objectives import INFEASIBLE_VALUE
from autotune.search.problem import Candidate, Search

EXPLORED = ("explore", "random")  # origins of the exploration arm's pulls
PULLED = ("refine", *EXPLORED)  # origins of the sampler's own proposals (others are enqueued)


@dataclass(frozen=True)
class Seen:
    value: float  # the first objective (minimised); an infeasible candidate's is worse than any
    first: int  # the first trial that evaluated it
    candidate: Candidate
    kind: tuple  # History.kind of the candidate
    origin: str | None = None  # where it came from (autotune.record.ORIGINS)


class History:
    def __init__(self, search: Search) -> None:
        self._search = search
        self._structural = sorted({p.name for p in search.all_params() if p.structural})
        self._seen: dict[str, Seen] = {}
        self._ranked: list[tuple[float, int, str]] = []  # (value, first, key), best first
        self._read: set[int] = set()
        self._pending: set[str] = set()
        self._kinds: (
            list[list[Candidate]] | None
        ) = []  # cached trajectories per kind (None: to recompute)
        # Per kind: its best and its improving steps, kept up to date while trials arrive in order
        # (one process); a trial that arrives after a later one (another worker's) forces a rebuild.
        self._best: dict[tuple, Seen] = {}
        self._steps: dict[tuple, list[Candidate]] = {}
        # The bandit's arms (a kind, or EXPLORE): each pull's gain, and the latest pull (for a
        # kind never pulled, the trial that found it); the incumbent's value so far.
        self._gains: dict[tuple | str, list[float]] = {EXPLORE: []}
        self._last: dict[tuple | str, int] = {EXPLORE: -1}
        self._incumbent = math.inf
        self._last_first = -1
        self._rebuild = False

    def __len__(self) -> int:
        return len(self._seen)

    def key(self, candidate: Candidate) -> str | None:
        return self._search.key_of(candidate.params())

    def update(self, trials: Sequence[FrozenTrial], current: int) -> None:
        """Read the trials not read yet, and which are pending now (`current` is the trial being
        sampled: neither)."""
        self._pending = set()
        for trial in trials:
            if trial.number == current or trial.number in self._read:
                continue
            if trial.state == TrialState.COMPLETE:
                self._read.add(trial.number)
                self._add(trial)
            elif trial.state in (TrialState.RUNNING, TrialState.WAITING):
                key = self._search.key_of(trial.system_attrs.get("fixed_params", trial.params))
                if key is not None:
                    self._pending.add(key)

    def _add(self, trial: FrozenTrial) -> None:
        params = candidate_params(trial)
        key = self._search.key_of(params)
        if key is None or key in self._seen or not trial.values:
            return  # a repeat keeps the first trial's value (each candidate is evaluated once)
        found = TrialRecord.of_trial(trial)
        candidate = self._search.canonical(self._search.from_params(params))
        seen = Seen(
            float(trial.values[0]),
            trial.number,
            candidate,
            self.kind(candidate),
            found.origin if found is not None else None,
        )
        self._seen[key] = seen
        bisect.insort(self._ranked, (seen.value, seen.first, key))
        if seen.first < self._last_first:
            self._rebuild, self._kinds = True, None
        elif not self._rebuild:
            self._step(seen)
        self._last_first = max(self._last_first, seen.first)

    def _step(self, seen: Seen) -> None:
        """Add a candidate, later than every one added, to its kind's improving steps, and to its
        arm's pulls when the sampler proposed it."""
        kind = seen.kind
        best = self._best.get(kind)
        value = _finite(seen.value)
        if seen.origin in PULLED:
            arm = EXPLORE if seen.origin in EXPLORED else kind
            kind_best = math.inf if best is None else _finite(best.value)
            pulled = gain(value, kind_best, self._incumbent, arm == EXPLORE)
            self._gains.setdefault(arm, []).append(pulled)
            self._last[arm] = seen.first
        self._last.setdefault(kind, seen.first)
        self._gains.setdefault(kind, [])
        self._incumbent = min(self._incumbent, value)
        if best is None or seen.value < best.value:
            self._best[kind] = seen
            self._steps.setdefault(kind, []).append(seen.candidate)
            self._kinds = None

    def taken(self, candidate: Candidate) -> bool:
        return self.taken_key(self.key(candidate))

    def taken_key(self, key: str | None) -> bool:
        return key in self._seen or key in self._pending

    def elite(self, count: int) -> list[Candidate]:
        """The `count` best candidates, ties broken by the first trial that found them."""
        return [self._seen[key].candidate for _, _, key in self._ranked[:count]]

    def incumbent_trial(self) -> int:
        """The first trial of the best candidate (-1 before any)."""
        return self._seen[self._ranked[0][2]].first if self._ranked else -1

    def kind(self, candidate: Candidate) -> tuple:
        """The kind of schedule: its family and its structural choices (Param.structural)."""
        return (candidate.family, *(candidate.point.get(name) for name in self._structural))

    def kinds(self) -> list[list[Candidate]]:
        """For each kind of schedule evaluated, the candidates that improved on every earlier one of
        that kind, in trial order (its best last); the kinds ordered by their best, the
        incumbent's first (ties by the trial that found it)."""
        self._catch_up()
        if self._kinds is None:
            self._kinds = [list(self._steps[kind]) for kind in self._ordered_kinds()]
        return self._kinds

    def _ordered_kinds(self) -> list[tuple]:
        """The kinds evaluated, by their best (ties by the trial that found it)."""
        return sorted(self._best, key=lambda kind: (self._best[kind].value, self._best[kind].first))

    def _catch_up(self) -> None:
        """Rebuild the kinds' records in trial order when a trial arrived after a later one."""
        if self._rebuild:
            self._best, self._steps, self._rebuild = {}, {}, False
            self._gains, self._last, self._incumbent = {EXPLORE: []}, {EXPLORE: -1}, math.inf
            for seen in sorted(self._seen.values(), key=lambda s: s.first):
                self._step(seen)

    def arms(self) -> list[Arm]:
        """The bandit's arms (autotune.search.bandit): each kind evaluated, best first, then
        exploration."""
        self._catch_up()
        kinds = [
            Arm(kind, _finite(self._best[kind].value), tuple(self._gains[kind]), self._last[kind])
            for kind in self._ordered_kinds()
        ]
        explore = Arm(EXPLORE, self._incumbent, tuple(self._gains[EXPLORE]), self._last[EXPLORE])
        return [*kinds, explore]

    def steps(self, kind: tuple) -> list[Candidate]:
        """The kind's improving steps, in trial order (its best last)."""
        self._catch_up()
        return self._steps.get(kind, [])

    def elite_of(self, kind: tuple, count: int) -> list[Candidate]:
        """The kind's `count` best candidates, ties broken by the first trial that found them."""
        found = []
        for _, _, key in self._ranked:
            if self._seen[key].kind == kind:
                found.append(self._seen[key].candidate)
                if len(found) == count:
                    break
        return found


def _finite(value: float) -> float:
    """A value as the bandit sees it: an infeasible candidate's is infinite."""
    return value if value < INFEASIBLE_VALUE else math.inf
