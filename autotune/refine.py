"""Local refinement for the guided sampler: which untried candidate near the best schedules to
evaluate next (see autotune.guided for the order of the moves)."""
from __future__ import annotations

from dataclasses import replace

from autotune.history import History
from autotune.problem import Candidate, Search

SPREAD = 3       # next-best schedules whose neighbourhoods are refined after the groups' bests
Keyed = tuple[str | None, Candidate]  # (the search's key, the candidate): keys computed once per cached move


class Refiner:
    def __init__(self, search: Search, history: History, momentum: bool = True, pairs: bool = True) -> None:
        self._search = search
        self._history = history
        self._momentum = momentum
        self._pairs = pairs
        self._singles: dict[str, list[Keyed]] = {}   # centre -> its moves that fit, nearest first
        self._doubles: dict[str, list[Keyed]] = {}
        self._deciding = sorted({p.unless.param for p in search.all_params() if p.unless is not None})

    def next(self) -> Candidate | None:
        """The next candidate to refine with, or None when every neighbourhood is spent."""
        trajectory = self._history.trajectory()
        if not trajectory:
            return None
        incumbent = trajectory[-1]
        if self._momentum and len(trajectory) == 2:
            found = self._fresh(self._extrapolate(*trajectory))
            if found is not None:
                return found
        centres = [incumbent, *self._group_bests()]
        rings = [self.singles(c) for c in centres]
        if self._pairs:
            rings.append(self.doubles(incumbent))
        rings += [self.singles(c) for c in self._history.elite(1 + SPREAD)[1:]]
        for ring in rings:
            found = self._fresh(ring)
            if found is not None:
                return found
        return None

    def singles(self, centre: Candidate) -> list[Keyed]:
        """The centre's neighbours that fit, nearest moves first (cached)."""
        key = centre.key()
        if key not in self._singles:
            moves = self._search.neighbours(centre)
            order = sorted(range(len(moves)), key=lambda i: (moves[i][0], i))
            self._singles[key] = [self._keyed(moves[i][1]) for i in order if self._search.fits(moves[i][1])]
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
                for second in changes[i + 1:]:
                    if set(first[0]) & set(second[0]) or set(first[1]) & set(second[1]):
                        continue
                    moved = self._search.canonical(replace(centre, point={**centre.point, **first[0], **second[0]},
                                                           machine_point={**centre.machine_point, **first[1], **second[1]}))
                    if moved.key() not in seen and self._search.fits(moved):
                        seen.add(moved.key())
                        found.append(self._keyed(moved))
            self._doubles[key] = found
        return self._doubles[key]

    def _extrapolate(self, before: Candidate, after: Candidate) -> list[Keyed]:
        """The last improving move once more: one integer parameter moved as far again."""
        changed = _changed(before, after)
        moved = {**changed[0], **changed[1]}
        if before.family != after.family or len(moved) != 1:
            return []
        (name, value), = moved.items()
        old = {**before.point, **before.machine_point}[name]
        if isinstance(value, (bool, str)) or isinstance(old, (bool, str)):
            return []
        part = "point" if name in after.point else "machine_point"
        target = {**getattr(after, part), name: 2 * value - old}
        domain = next(p.domain for p in self._search.all_params() if p.name == name)
        found = self._search.canonical(replace(after, **{part: target}))
        return [self._keyed(found)] if domain.contains(target[name]) and self._search.fits(found) else []

    def _group_bests(self) -> list[Candidate]:
        """The best candidate of each group (a family and the choices its conditions depend on),
        best group first."""
        best: dict[tuple, Candidate] = {}
        for candidate in self._history.ranked():
            group = (candidate.family, *(candidate.point.get(n) for n in self._deciding if isinstance(candidate.point.get(n), str)))
            best.setdefault(group, candidate)
        return list(best.values())

    def _keyed(self, candidate: Candidate) -> Keyed:
        return self._history.key(candidate), candidate

    def _fresh(self, ring: list[Keyed]) -> Candidate | None:
        """The first candidate of the ring nobody has tried or is trying."""
        for key, candidate in ring:
            if not self._history.taken_key(key):
                return candidate
        return None


def _changed(before: Candidate, after: Candidate) -> tuple[dict, dict]:
    """What `after` changes of `before`: (schedule parameters, machine parameters)."""
    return ({k: v for k, v in after.point.items() if before.point.get(k) != v},
            {k: v for k, v in after.machine_point.items() if before.machine_point.get(k) != v})
