"""The extension point: a schedule family is a small object behind one interface, and a space is
a named group of families. A new family or space is one module plus a registry entry."""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass

from simcore.machine import Machine
from simcore.program import Program
from simcore.shape import Shape

from search_spaces.domains import Param, Point


class Family(ABC):
    """A schedule family: its parameters, its slot need, and the program it builds."""

    name: str = ""
    description: str = ""

    @abstractmethod
    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        """The family's searchable parameters; domains may depend on the shape's tile counts."""

    @abstractmethod
    def slots_needed(self, point: Point, shape: Shape, machine: Machine) -> int:
        """Slots the schedule needs, from slot arithmetic alone (no compilation)."""

    @abstractmethod
    def build(self, point: Point, shape: Shape, machine: Machine) -> Program:
        """The GA-1 program for this point; may raise ScheduleError if it does not fit."""

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        """Points every study starts from (the chapter's hand-written sweep, good defaults)."""
        return []


@dataclass(frozen=True)
class Space:
    """A named group of families, e.g. the chapter's families or the general generator."""

    name: str
    description: str
    families: tuple[Family, ...]


def canonical_json(point: Point) -> str:
    """One canonical text for a point: caches, leaderboards and the reference file key on it."""
    return json.dumps(point, sort_keys=True, separators=(",", ":"))
