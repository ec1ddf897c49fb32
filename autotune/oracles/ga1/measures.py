"""What the GA-1 oracle measures, besides the shared cycles, energy and area: the traffic and
the units' busy fractions of a run, and the machine's own figures (a co-design's objectives)."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from autotune.oracles.measures import (
    AREA,
    CYCLES,
    EDP,
    ENERGY,
    ENERGY_BREAKDOWN,
    ENERGY_COLUMNS,
    ENERGY_PER_MAC,
    LOWER_BOUND,
    MACHINE,
    MACS,
    MAXIMIZE,
    Measure,
    TableColumn,
)


def _scratchpad_words(machine: Mapping[str, int]) -> float:
    return float(int(machine["slots"]) * int(machine["T"]) ** 2)


SCRATCHPAD_WORDS = Measure(
    "scratchpad_words",
    unit="words",
    total=MACHINE,
    machine_only=True,
    dtype="int",
    help="the scratchpad's size",
    from_machine=_scratchpad_words,
)
DMA_WORDS_PER_CYCLE = Measure(
    "dma_words_per_cycle", total=MACHINE, machine_only=True, dtype="int", help="the DMA's width"
)
# Maximised: a slower matrix unit is the cheaper one, so it trades against cycles.
MXU_CYCLES = Measure(
    "mxu_cycles",
    direction=MAXIMIZE,
    total=MACHINE,
    machine_only=True,
    dtype="int",
    help="the matrix unit's cycles per tile product",
    why="a slower unit is cheaper",
)
TILES_MOVED = Measure("tiles_moved", unit="tiles", dtype="int", help="tiles the DMA moves")
LOADS = Measure("loads", objective=False, dtype="int")
STORES = Measure("stores", objective=False, dtype="int")
MXU_UTIL = Measure("mxu_util", objective=False)
DMA_BUSY = Measure("dma_busy", objective=False)

# GA-1's area is the machine's alone: the same for every schedule on it.
MACHINE_AREA = replace(AREA, machine_only=True)

# The leaderboard's column order (a machine's own figures are its columns already).
MEASURES: tuple[Measure, ...] = (
    CYCLES,
    ENERGY,
    ENERGY_PER_MAC,
    EDP,
    MACHINE_AREA,
    SCRATCHPAD_WORDS,
    DMA_WORDS_PER_CYCLE,
    MXU_CYCLES,
    TILES_MOVED,
    LOADS,
    STORES,
    MXU_UTIL,
    DMA_BUSY,
    LOWER_BOUND,
    MACS,
    *ENERGY_BREAKDOWN,
)

# The compact table's columns: traffic and the unit's busy share, energy, then the machine's
# parameters (those a search varied).
TABLE_COLUMNS: tuple[TableColumn, ...] = (
    TableColumn("tiles_moved", "tiles", 6),
    TableColumn("mxu_util", "mxu", 5, ".0%"),
    *ENERGY_COLUMNS,
    TableColumn("slots", "slots", 5),
    TableColumn("dma_setup", "setup", 5, varied=True),
    TableColumn("dma_words_per_cycle", "w/cyc", 5, varied=True),
    TableColumn("mxu_cycles", "mxu_c", 5, varied=True),
)
