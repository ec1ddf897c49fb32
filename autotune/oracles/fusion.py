"""The capability an oracle declares to time fused groups (simcore.fusion.groups) of a network:
`fusion_kinds` says which kinds (epilogue, mlp, attention), `time_fused(group, machine)` finds
a group's best schedule over its kind's parameters (search_spaces.fusion), times it exactly,
bounds and verifies it. autotune.results.fusion searches a network's fusion with it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simcore.fusion.groups import FusedGroup


@dataclass(frozen=True)
class FusedTime:
    """One run of a fused group at its best schedule: cycles, energy, DRAM words, the schedule,
    the lower bounds on cycles and DRAM words, how it was verified (`verification`: a label of
    docs/trust.md and its one-line detail), the points of the kind's domain and how many fit."""

    cycles: int
    energy_pj: float | None
    dram_words: int
    schedule: str
    bound_cycles: int
    bound_words: int
    verified: bool
    verification: str
    points: int
    feasible: int

    @property
    def ratio_to_bound(self) -> float:
        return self.cycles / self.bound_cycles if self.bound_cycles else float("nan")


OBJECTIVES: tuple[str, ...] = ("cycles", "energy", "dram_words")


def rank(objective: str, cycles: float, energy_pj: float, dram_words: float) -> tuple[float, ...]:
    """The key a fusion search minimises: the objective first, the other two to break ties."""
    if objective == "energy":
        return (energy_pj, cycles, dram_words)
    if objective == "dram_words":
        return (dram_words, cycles, energy_pj)
    return (cycles, dram_words, energy_pj)


class FusionRefused(Exception):
    """No schedule of the group fits the machine (the message says what it needs)."""


class Fusion(ABC):
    """Fused groups timed as one program or one event schedule (a mix-in, asked with
    `oracle.capability(Fusion)`)."""

    fusion_kinds: tuple[str, ...] = ()

    @abstractmethod
    def time_fused(self, group: FusedGroup, machine: Any, objective: str = "cycles") -> FusedTime:
        """The group's best schedule by `objective` (one of OBJECTIVES), exactly timed, bounded
        and verified; FusionRefused when no schedule fits the machine."""
