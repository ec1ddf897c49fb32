"""Fusion over a network graph, declared as search parameters.

A network's fusible groups (workloads.fusion_groups) come in regions of overlapping candidates.
Each region has one structural parameter, `fuse`: which of its edges fuse, named by the set of
candidates that fuse (`apart`: none). Each candidate that fuses has its kind's schedule
parameters: block sizes, ring and intermediate sets, block order (GA-1: the domains of
simcore.ga1.fused.params, converted here). A point whose slots exceed the scratchpad is graded by
arithmetic (`violation`), before anything is built or timed.

The domains are small (at most a few hundred points a group, a few choices a region), so the
fusion search enumerates them (`feasible_points`) and times every point that fits.
"""

from __future__ import annotations

from typing import Iterator, Protocol, Sequence

from search_spaces.domains import Choice, Param, Point, grid
from simcore.fusion.groups import FusedGroup
from simcore.ga1.fused.params import FusedParams, param_domains, params_from
from simcore.ga1.fused.program import slots_needed
from simcore.ga1.machine import Machine

APART = "apart"


class Fusible(Protocol):
    """A candidate group of a network (workloads.fusion_groups.Candidate)."""

    @property
    def kind(self) -> str: ...

    @property
    def operations(self) -> tuple[str, ...]: ...


def choice_label(chosen: Sequence[Fusible]) -> str:
    """A region's choice by name: the fused candidates' first and last operations."""
    if not chosen:
        return APART
    return " | ".join(f"{c.kind} {c.operations[0]}..{c.operations[-1]}" for c in chosen)


def fuse_param(choices: Sequence[Sequence[Fusible]]) -> Param:
    """Which of a region's edges fuse: one option per set of disjoint candidates (a region's
    `choices()`)."""
    labels = tuple(choice_label(chosen) for chosen in choices)
    return Param("fuse", Choice(labels), "which edges fuse (apart: none)", structural=True)


def ga1_params(group: FusedGroup) -> tuple[Param, ...]:
    """The GA-1 schedule parameters of a fused group."""
    return tuple(
        Param(d.name, Choice(tuple(d.values)), d.description)  # type: ignore[arg-type]
        for d in param_domains(group)
    )


def ga1_schedule(group: FusedGroup, point: Point) -> FusedParams:
    return params_from(group, dict(point))


def ga1_violation(group: FusedGroup, point: Point, machine: Machine) -> int:
    """Slots over the scratchpad (0 when the point fits): arithmetic on the layout."""
    return max(0, slots_needed(group, machine, ga1_schedule(group, point)) - machine.slots)


def ga1_points(group: FusedGroup) -> Iterator[Point]:
    return grid(ga1_params(group))


def feasible_points(group: FusedGroup, machine: Machine) -> tuple[list[Point], int]:
    """The points that fit `machine`, and the fewest slots any point needs."""
    fits, fewest = [], None
    for point in ga1_points(group):
        need = slots_needed(group, machine, ga1_schedule(group, point))
        fewest = need if fewest is None else min(fewest, need)
        if need <= machine.slots:
            fits.append(point)
    return fits, fewest or 0
