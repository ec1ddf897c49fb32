"""The general and strip families with a store delay: a finished accumulator's store may wait
behind the next products' loads (simcore/ga1/generator/compile.py's `store_delay`).

On small scratchpads with a slow DMA set-up the proven optima defer a block's stores this way,
which neither family reaches without the delay (docs/benchmarks/optimum.md). Each family here is
its plain family plus one parameter, the delay from 0 (the plain family's schedules) to
MAX_STORE_DELAY, under its own name. The default spaces are `chapter,delayed`; `--space
chapter,general,strips` searches the plain families alone."""

from __future__ import annotations

from search_spaces.base import Space
from search_spaces.domains import IntRange, Param, Point
from search_spaces.general import GeneralFamily
from search_spaces.strips import StripsFamily, seed_point
from simcore.ga1.generator.strips import StripParams
from simcore.ga1.machine import Machine
from simcore.shape import Shape

# One or two products of delay reach the optima the families miss; a longer delay holds a
# finished accumulator's slot while the next products wait for theirs.
MAX_STORE_DELAY = 2
STORE_DELAY = Param(
    "store_delay",
    IntRange(0, MAX_STORE_DELAY),
    "products a finished accumulator's store waits behind the next loads",
)
# A tight strip point: one streaming slot, the DMA one product ahead, the next product's tiles
# spared, a ready store first and delayed by one. On small scratchpads with a slow DMA set-up it
# is the proven optimum (16x16x24 and 24x16x16 on 6 slots with dma_setup=4: 160 cycles; 16x24x16
# on 4 slots: 484), which the trials alone do not reach.
TIGHT = StripParams(
    reserve=1, split=0, tail=0, lookahead=1, protect=1, store_first=True, store_delay=1
)


class _WithStoreDelay:
    """A family's parameters plus the store delay; its seeds keep their stores undelayed."""

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        return (*super().params(shape, T), STORE_DELAY)  # type: ignore[misc]

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        seeds = super().seed_points(shape, machine)  # type: ignore[misc]
        return [{**point, "store_delay": 0} for point in seeds]


class DelayedGeneralFamily(_WithStoreDelay, GeneralFamily):
    name = "general_delayed"
    description = "the general family's orders, each finished accumulator's store delayed"


class DelayedStripsFamily(_WithStoreDelay, StripsFamily):
    name = "strips_delayed"
    description = "the strip family's orders, each finished accumulator's store delayed"

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        tight = seed_point(TIGHT, self.params(shape, machine.T), shape, machine)
        return [*super().seed_points(shape, machine), tight]


SPACE = Space(
    "delayed",
    "the general and strip orders with a finished accumulator's store delayed behind the next loads",
    (DelayedGeneralFamily(), DelayedStripsFamily()),
)
