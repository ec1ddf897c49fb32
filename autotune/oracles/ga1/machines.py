"""GA-1's machine search: the machine parameters a search varies (slots, DMA setup and width, the
matrix unit's cycles), the limits a co-design puts on a machine besides its scratchpad, the
columns of a co-design's rows, and the schedules a co-design times on each machine (a fixed
portfolio, search_spaces.portfolio)."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from autotune.errors import Infeasible
from autotune.oracles.capabilities import MachineSettings, Metrics
from autotune.oracles.measures import TableColumn
from search_spaces.base import Family
from search_spaces.domains import IntRange, Point
from search_spaces.machine import MachineSpace, parse_ranges
from simcore.ga1.machine import Machine
from simcore.shape import Shape

# What a co-design's front shows of each machine (leaderboard columns).
FRONT_COLUMNS: tuple[TableColumn, ...] = (
    TableColumn("slots", "slots", 5),
    TableColumn("scratchpad_words", "spad words", 11),
    TableColumn("dma_setup", "setup", 6),
    TableColumn("dma_words_per_cycle", "words/cyc", 10),
    TableColumn("mxu_cycles", "mxu_cyc", 8),
)


def machine_space(base: Machine, settings: MachineSettings) -> MachineSpace:
    """The ranges around `base` (or `settings.ranges`) under a scratchpad budget: the one given,
    else the base machine's; under an area budget the area limits the scratchpad, so only the
    slots range bounds it."""
    space = MachineSpace.create(base, parse_ranges(settings.ranges), settings.max_scratchpad_words)
    if settings.area_budget is None or settings.max_scratchpad_words is not None:
        return space
    slots = dict(space.ranges).get("slots")
    if isinstance(slots, IntRange):
        top = slots.high
    else:
        top = max(int(v) for v in slots.options) if slots else base.slots  # type: ignore[union-attr]
    return dataclasses.replace(space, max_scratchpad_words=int(top) * base.tile_words)


def macs_per_cycle(machine: Machine) -> float:
    """The matrix unit's peak rate, T^3 / mxu_cycles: the PEs it needs at least (one MAC per PE
    per cycle). For an R x C systolic tie (simcore.systolic.tie) with R and C dividing T this is
    exactly R x C."""
    return machine.T**3 / machine.mxu_cycles


def machine_limits(machine: Machine, settings: MachineSettings) -> dict[str, float]:
    """A co-design's limits on a machine: its DMA width and its matrix unit's peak rate."""
    found: dict[str, float] = {}
    if settings.max_dma_words_per_cycle is not None:
        found["dma_over"] = max(
            0.0, machine.dma_words_per_cycle / settings.max_dma_words_per_cycle - 1
        )
    if settings.pe_budget is not None:
        found["pe_over"] = max(0.0, macs_per_cycle(machine) / settings.pe_budget - 1)
    return found


def machine_columns(machine: Machine) -> dict[str, object]:
    return {"scratchpad_words": machine.scratchpad_words, "macs_per_cycle": macs_per_cycle(machine)}


def best_schedules(
    oracle: Any, families: Sequence[Family], shape: Shape, machine: Machine
) -> tuple[tuple[str, Point, Metrics] | None, tuple[str, Point, Metrics] | None]:
    """The best of the fixed portfolio (search_spaces.portfolio) and its best chapter schedule;
    ties by the canonical key, so equal runs choose the same schedule."""
    from search_spaces.portfolio import CHAPTER_FAMILIES, portfolio

    by_name = {f.name: f for f in families}
    found: list[tuple[tuple[float, str], tuple[str, Point, Metrics]]] = []
    for entry in portfolio(tuple(families), shape, machine):
        family = by_name[entry.family]
        if family.violation(entry.point, shape, machine) > 0:
            continue  # infeasible: never simulated
        try:
            metrics = oracle.evaluate(family, entry.point, shape, machine)
        except Infeasible:  # the slot count was optimistic, or too costly to time
            continue
        cycles = float(metrics["cycles"])  # type: ignore[arg-type]
        found.append(((cycles, entry.key()), (entry.family, entry.point, metrics)))
    top = min(found, key=lambda f: f[0], default=None)
    chapter = min(
        (f for f in found if f[1][0] in CHAPTER_FAMILIES), key=lambda f: f[0], default=None
    )
    return (top[1] if top else None), (chapter[1] if chapter else None)
