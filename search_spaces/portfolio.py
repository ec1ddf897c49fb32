"""A fixed, deterministic portfolio of schedules for one shape on one machine: the chapter's
hand-written sweep, every family's seed points, and a small neighbourhood of the general
generator's seed. Co-design evaluates it per machine instead of a full inner search: it is
cheap, reproducible, and contains the chapter's best by construction."""

from __future__ import annotations

from dataclasses import dataclass

from search_spaces.base import Family, canonical_json
from search_spaces.domains import IntRange, Point
from simcore.ga1.generator.order import INNER_ORDERS
from simcore.ga1.machine import Machine
from simcore.shape import Shape

CHAPTER_FAMILIES = frozenset({"blocked", "kouter"})


@dataclass(frozen=True)
class PortfolioPoint:
    family: str
    point: Point

    def key(self) -> str:
        return canonical_json({"family": self.family, **self.point})


def _neighbours(seed: Point, family: Family, shape: Shape, machine: Machine) -> list[Point]:
    """One-parameter moves from the seed, each clipped into the family's domains."""
    domains = {p.name: p.domain for p in family.params(shape, machine.T)}
    moves: list[Point] = []

    def move(**changes: object) -> None:
        point = dict(seed)
        for name, value in changes.items():
            domain = domains.get(name)
            if domain is None:
                return
            if isinstance(domain, IntRange):
                value = domain.clip(int(value))  # type: ignore[call-overload]
            if not domain.contains(value):  # type: ignore[arg-type]
                return
            point[name] = value  # type: ignore[assignment]
        moves.append(point)

    for name in ("bi", "bj"):
        if name in seed:
            move(**{name: int(seed[name]) - 1})
            move(**{name: int(seed[name]) + 1})
    if "lookahead" in seed:
        move(lookahead=int(seed["lookahead"]) * 2)
        move(lookahead=int(seed["lookahead"]) // 2)
    if "tail" in seed:
        move(tail=2 if int(seed["tail"]) == 0 else 0)
    for inner in INNER_ORDERS:
        move(inner=inner)
    for name, options in (
        ("store_first", (True, False)),
        ("structure", ("blocks", "rotate")),
        ("k_direction", ("up", "alternate")),
        ("partition", ("uniform", "balanced")),
    ):
        if name in seed:
            move(**{name: next(o for o in options if o != seed[name])})
    return moves


def portfolio(families: tuple[Family, ...], shape: Shape, machine: Machine) -> list[PortfolioPoint]:
    """Every family's seed points, then the neighbourhood of those explored around; no repeats."""
    entries: dict[str, PortfolioPoint] = {}
    for family in families:
        seeds = family.seed_points(shape, machine)
        points = list(seeds)
        if family.explored_around_seeds:
            for seed in seeds:
                points += _neighbours(seed, family, shape, machine)
        for point in points:
            entry = PortfolioPoint(family.name, point)
            entries.setdefault(entry.key(), entry)
    return list(entries.values())
