"""Every schedule of a fused group that fits, found by arithmetic before any timing, and the
best of them by exact timing (an exhaustive search over the kind's domains: a few hundred
points at most; a search tool may sample the same domains instead)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from simcore.fusion.groups import FusedGroup
from simcore.ga1.fused.params import FusedParams, param_domains, params_from
from simcore.ga1.fused.program import FusedProgram, slots_needed
from simcore.ga1.machine import Machine
from simcore.ga1.timing import Timing


def all_points(group: FusedGroup) -> list[FusedParams]:
    """Every point of the group's domains."""
    domains = param_domains(group)
    names = [d.name for d in domains]
    return [
        params_from(group, dict(zip(names, values)))
        for values in itertools.product(*(d.values for d in domains))
    ]


def feasible_points(group: FusedGroup, machine: Machine) -> list[FusedParams]:
    """The points whose slots fit the scratchpad (arithmetic on the layout, no timing)."""
    return [p for p in all_points(group) if slots_needed(group, machine, p) <= machine.slots]


@dataclass(frozen=True)
class Best:
    program: FusedProgram
    timing: Timing
    tried: int


def best_schedule(
    group: FusedGroup, machine: Machine, points: list[FusedParams] | None = None
) -> Best:
    """The fastest feasible point (fewest cycles, then fewest tiles moved; the first in domain
    order on a tie). ValueError when none fits."""
    candidates = feasible_points(group, machine) if points is None else points
    best: tuple[tuple[int, int], FusedProgram, Timing] | None = None
    for params in candidates:
        program = FusedProgram(group, machine, params)
        timing = program.timing()
        key = (timing.cycles, timing.tiles_moved)
        if best is None or key < best[0]:
            best = (key, program, timing)
    if best is None:
        raise ValueError(f"no schedule of {group.describe()} fits {machine.slots} slots")
    return Best(best[1], best[2], len(candidates))
