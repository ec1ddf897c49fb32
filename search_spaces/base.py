"""The declaration of what may be searched: a schedule family is a small object behind one
interface, and a space is a named group of families. A new family or space is one module plus
a registry entry.

A family declares its parameters as data, grades how far a point is over the machine's limits
(before anything is simulated), sets the parameters that do not change its schedule to fixed
values, names the points every study starts from, and decodes a point into its oracle's
schedule (`GA1Family.generator`, `SystolicFamily.design`). Its oracle (autotune.oracles) times,
verifies, bounds and draws it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from search_spaces.domains import Param, Point
from simcore.ga1.machine import Machine
from simcore.shape import Shape

if TYPE_CHECKING:  # the compiled engine loads numba: only the families that decode need it
    from simcore.ga1.engine import Generator


# How a verification was done, strongest first. Only EXACT makes an entry `verified`.
EXACT = "exact"  # the design itself was run: functional result equals numpy's, timing checks clean
SCALED = "scaled"  # a smaller design of the same kind was run in its place
MODEL = "model"  # nothing was run: the closed form (or estimate) alone
LEVELS: tuple[str, ...] = (EXACT, SCALED, MODEL)


@dataclass(frozen=True)
class Verdict:
    """What a family's verification found: whether the checks passed, how strong they were
    (EXACT, SCALED or MODEL) and a one-line explanation."""

    ok: bool
    level: str
    detail: str

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(
                f"verification level must be one of {', '.join(LEVELS)}, got {self.level!r}"
            )

    @property
    def verified(self) -> bool:
        """Passed, on the design itself."""
        return self.ok and self.level == EXACT


class Family(ABC):
    """A schedule family: parameters, feasibility, canonical points and seeds."""

    name: str = ""
    description: str = ""
    oracle: str = ""  # the name of the oracle that times it (autotune.oracles)
    # What `violation` grades: a search records it as the constraint `{limit}_over`.
    limit: str = "machine"
    # A family of schedules imported whole into a study (search_spaces.stored): a search ranks and
    # verifies its trials like any other but never draws one, and no space declares it.
    imported: bool = False
    # Co-design's fixed portfolio (search_spaces.portfolio) adds one-parameter moves around this
    # family's seeds as well as the seeds themselves.
    explored_around_seeds: bool = False

    @abstractmethod
    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        """The family's searchable parameters; domains may depend on the shape's tile counts."""

    @abstractmethod
    def violation(self, point: Point, shape: Shape, machine: Any) -> float:
        """0 when the point fits the machine; otherwise how far over the limit (graded)."""

    def estimate(self, point: Point, shape: Shape, machine: Any) -> float | None:
        """A cheap analytic estimate of the cycles (the tile model), to rank points before
        simulating them; None when the family has none."""
        return None

    def canonical(self, point: Point, shape: Shape, T: int) -> Point:
        """The point with parameters that do not affect the schedule set to fixed values, so
        two points that build the same schedule are evaluated once and ranked once."""
        return point

    def seed_points(self, shape: Shape, machine: Any) -> list[Point]:
        """Points every study starts from (the chapter's hand-written sweep, good defaults)."""
        return []


class GA1Family(Family):
    """A family that decodes into a generator of GA-1 programs (simcore.ga1.engine)."""

    oracle = "ga1"
    limit = "slots"  # the scratchpad's tile slots

    @abstractmethod
    def slots_needed(self, point: Point, shape: Shape, machine: Machine) -> int:
        """Slots the schedule needs, from slot arithmetic alone (no compilation)."""

    @abstractmethod
    def generator(self, point: Point, shape: Shape, machine: Machine) -> Generator:
        """The compiled engine's generator of this point's program: the oracle times it as it
        emits it, verifies it streamed, or materialises the program."""

    def violation(self, point: Point, shape: Shape, machine: Machine) -> float:
        return float(max(0, self.slots_needed(point, shape, machine) - machine.slots))


@dataclass(frozen=True)
class Space:
    """A named group of families, e.g. the chapter's families or the general generator."""

    name: str
    description: str
    families: tuple[Family, ...]


def canonical_json(point: Mapping[str, object]) -> str:
    """One canonical text for a point: caches, leaderboards and the reference file key on it."""
    return json.dumps(point, sort_keys=True, separators=(",", ":"))
