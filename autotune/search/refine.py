"""Local refinement for the guided sampler: which untried candidate near the best schedules to
evaluate next (see autotune.search.guided for the order of the moves)."""

from __future__ import annotations

from dataclasses import replace

from autotune.search.history import History
from autotune.search.problem import Candidate, Search
from search_spaces.domains import Domain

SPREAD = 3  # next-best schedules whose neighbourhoods are refined last
SHARE = 2  # one refinement in this many goes to the other kinds of schedule first
Keyed = tuple[
    str | None, Candidate
]  # (the search's key, the candidate): keys computed once per cached move


class Refiner:
    def __init__(
        self, search: Search, history: History, momentum: bool = True, pairs: bool = True
    ) -> None:
        self._search = search
        self._history = history
        self._momentum = momentum
        self._pairs = pairs
        self._singles: dict[str, list[Keyed]] = {}  # centre -> its moves that fit, nearest first
        self._doubles: dict[str, list[Keyed]] = {}
        self._domains: dict[
            str, Domain
        ] = {}  # a parameter's domain (families share theirs; the first is kept)
        for param in search.all_params():
            self._domains.setdefault(param.name, param.domain)

    def next(self, number: int) -> Candidate | None:
        """The candidate to refine with at trial `number`, or None when every neighbourhood is spent.

        The incumbent's kind first (its last improving move again, then the incumbent's
        neighbours); then the other kinds of schedule in turn, one per trial (the trial number
        picks where the turn starts), each the same way; then pairs of the incumbent's moves;
        then the neighbours of the next-best schedules."""
        kinds = self._history.kinds()
        if not kinds:
            return None
        others = kinds[1:]
        turns = [others[(number // SHARE + i) % len(others)] for i in range(len(others))]
        order = [kinds[0], *turns] if number % SHARE else [*turns, kinds[0]]
        for steps in order:
            found = self._refine(steps)
            if found is not None:
                return found
        if self._pairs:  # the rings below are built only when needed
            found = self._fresh(self.doubles(kinds[0][-1]))
            if found is not None:
                return found
        for centre in self._history.elite(1 + SPREAD)[1:]:
            found = self._fresh(self.singles(centre))
            if found is not None:
                return found
        return None

    def around(self, kind: tuple) -> Candidate | None:
        """The candidate to refine one kind with, or None when its neighbourhoods are spent: the
        last improving move again, the best's neighbours, two of the best's nearest moves at once,
        then the neighbours of the kind's next-best schedules."""
        steps = self._history.steps(kind)
        if not steps:
            return None
        found = self._refine(steps)
        if found is None and self._pairs:
            found = self._fresh(self.doubles(steps[-1]))
        for centre in self._history.elite_of(kind, 1 + SPREAD)[1:] if found is None else ():
            found = self._fresh(self.singles(centre))
            if found is not None:
                break
        return found

    def _refine(self, steps: list[Candidate]) -> Candidate | None:
        """Around the best of one kind (the last of its improving steps): the last move again,
        then its neighbours."""
        if self._momentum and len(steps) >= 2:
            streak = len(steps) >= 3 and self._same_way(steps[-3], steps[-2], steps[-1])
            found = self._fresh(self._extrapolate(steps[-2], steps[-1], 2 if streak else 1))
            if found is not None:
                return found
        return self._fresh(self.singles(steps[-1]))

    def singles(self, centre: Candidate) -> list[Keyed]:
        """The centre's neighbours that fit, nearest moves first (cached)."""
        key = centre.key()
        if key not in self._singles:
            moves = self._search.neighbours(centre)
            order = sorted(range(len(moves)), key=lambda i: (moves[i][0], i))
            self._singles[key] = [
                self._keyed(moves[i][1]) for i in order if self._search.fits(moves[i][1])
            ]
        return self._singles[key]

    def doubles(self, centre: Candidate) -> list[Keyed]:
        """Two of the centre's nearest moves at once, on different parameters (cached): a pair
        such as a taller and a narrower block may fit where each alone does not."""
        key = centre.key()
        if key not in self._doubles:
            near = [c for scale, c in self._search.neighbours(centre) if scale == 1]
            changes = [_changed(centre, c) for c in near]
            found, seen = [], {key}
            for i, first in enumerate(changes):
                for second in changes[i + 1 :]:
                    if set(first[0]) & set(second[0]) or set(first[1]) & set(second[1]):
                        continue
                    moved = self._search.canonical(
                        replace(
                            centre,
                            point={**centre.point, **first[0], **second[0]},
                            machine_point={**centre.machine_point, **first[1], **second[1]},
                        )
                    )
                    if moved.key() not in seen and self._search.fits(moved):
                        seen.add(moved.key())
                        found.append(self._keyed(moved))
            self._doubles[key] = found
        return self._doubles[key]

    def _same_way(self, first: Candidate, second: Candidate, third: Candidate) -> bool:
        """Whether two improving moves in a row moved the same integer parameter the same way."""
        one, two = _move(first, second), _move(second, third)
        return (
            one is not None
            and two is not None
            and one[0] == two[0]
            and (one[2] - one[1]) * (two[2] - two[1]) > 0
        )

    def _extrapolate(self, before: Candidate, after: Candidate, factor: int = 1) -> list[Keyed]:
        """The last improving move once more: one integer parameter moved as far again (twice as
        far when `factor` is 2: a streak of moves the same way)."""
        move = _move(before, after)
        if move is None:
            return []
        name, old, value = move
        part = "point" if name in after.point else "machine_point"
        target = {**getattr(after, part), name: value + factor * (value - old)}
        if not self._domains[name].contains(target[name]):
            return []
        found = self._search.canonical(after.moved(part, target))
        return [self._keyed(found)] if self._search.fits(found) else []

    def _keyed(self, candidate: Candidate) -> Keyed:
        return self._history.key(candidate), candidate

    def _fresh(self, ring: list[Keyed]) -> Candidate | None:
        """The first candidate of the ring nobody has tried or is trying."""
        for key, candidate in ring:
            if not self._history.taken_key(key):
                return candidate
        return None


def _move(before: Candidate, after: Candidate) -> tuple[str, int, int] | None:
    """(parameter, from, to) when `after` moves exactly one integer parameter of `before`."""
    changed = _changed(before, after)
    moved = {**changed[0], **changed[1]}
    if before.family != after.family or len(moved) != 1:
        return None
    ((name, value),) = moved.items()
    old = {**before.point, **before.machine_point}[name]
    if isinstance(value, (bool, str)) or isinstance(old, (bool, str)):
        return None
    return name, int(old), int(value)


def _changed(before: Candidate, after: Candidate) -> tuple[dict, dict]:
    """What `after` changes of `before`: (schedule parameters, machine parameters)."""
    return (
        {k: v for k, v in after.point.items() if before.point.get(k) != v},
        {k: v for k, v in after.machine_point.items() if before.machine_point.get(k) != v},
    )
