"""Strip schedules for small scratchpads: blocks sized by the slots, in strips of several widths.

Every block obeys h w + min(h, w) + reserve <= slots, so every point fits the machine it is built
for (only a reserve that leaves no room for a 1 x 1 block does not). The strip widths come from a
knapsack that minimises the tiles loaded per k step; the search chooses how the blocks are
visited, how a k step streams its tiles, and how the compiler prefetches
(simcore/ga1/generator/strips.py defines the order exactly).

Parameters shared with the general family (partition, tail, lookahead, store_first) keep the same
domains, so the two can be searched together."""

from __future__ import annotations

import dataclasses

from search_spaces.base import GA1Family, Space
from search_spaces.domains import Choice, IntRange, Param, Point, Unless
from search_spaces.general import MAX_LOOKAHEAD, MAX_TAIL
from simcore.ga1 import engine
from simcore.ga1.engine import Generator
from simcore.ga1.engine.strip_order import strip_slots
from simcore.ga1.generator.order import PARTITIONS
from simcore.ga1.generator.strips import (
    STRIP_AXES,
    STRIP_ORDERS,
    StripParams,
    strip_blocks,
    strip_loads_estimate,
)
from simcore.ga1.machine import Machine
from simcore.shape import Shape

# A block's streaming reserve and a prefetch's protection both grow with the scratchpad: with 40
# to 56 slots the best reserves are 10 to 13 and the best protections 44 to 52 (past the old
# caps of 6 and 32; bench_search.py --cases). A reserve no block can spare does not fit and is
# never simulated; a protection longer than any block's products protects what is already kept.
MAX_RESERVE = 16
MAX_SPLIT = 8
MAX_PROTECT = 2 * MAX_LOOKAHEAD
PREFETCH_ONLY = Unless("lookahead", (0,), 0)  # protect: without prefetching, nothing to protect
SEEDS: tuple[StripParams, ...] = (
    StripParams(split=2, tail=2, protect=8),
    StripParams(split=0, tail=0, protect=24),
    StripParams(reserve=3, split=0, tail=1, protect=24),
)


class StripsFamily(GA1Family):
    name = "strips"
    description = (
        "blocks sized by the scratchpad in strips of several widths, with streaming k steps"
    )

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        _Mt, Kt, _Nt = shape.tiles(T)
        return (
            Param(
                "strip_axis",
                Choice(STRIP_AXES),
                "column strips (blocks stacked down) or row strips",
                structural=True,
            ),
            Param(
                "reserve",
                IntRange(1, MAX_RESERVE),
                "slots per block for streaming, beyond accumulators and held tiles",
            ),
            Param("strip_order", Choice(STRIP_ORDERS), "narrowest or widest strips first"),
            Param("first_reverse", Choice((True, False)), "the first strip runs backwards"),
            Param(
                "partition",
                Choice(PARTITIONS),
                "block heights in a strip: full and a shorter last (uniform) or near-equal",
            ),
            Param(
                "split",
                IntRange(0, MAX_SPLIT),
                "last streamed lines of a step visited held line by held line",
            ),
            Param("flip", Choice((True, False)), "every other block streams in reverse"),
            Param(
                "tail",
                IntRange(0, min(Kt, MAX_TAIL)),
                "last k steps run accumulator by accumulator",
            ),
            Param("lookahead", IntRange(0, MAX_LOOKAHEAD), "products the DMA may run ahead"),
            Param("store_first", Choice((True, False)), "a ready store goes before a due load"),
            Param(
                "protect",
                IntRange(0, MAX_PROTECT),
                "a prefetch never evicts a tile needed within this many products",
                PREFETCH_ONLY,
            ),
        )

    @staticmethod
    def to_params(point: Point) -> StripParams:
        values = dict(point)
        values["axis"] = values.pop("strip_axis", "col")
        known = {f.name for f in dataclasses.fields(StripParams)}
        return StripParams(**{k: v for k, v in values.items() if k in known})  # type: ignore[arg-type]

    def canonical(self, point: Point, shape: Shape, T: int) -> Point:
        """Fixed values for parameters that cannot change the program (each proven by a test)."""
        _Mt, Kt, _Nt = shape.tiles(T)
        out = dict(point)
        out["tail"] = min(int(point["tail"]), Kt - 1)  # the generator caps the tail below K
        if (
            int(point["split"]) == 1
        ):  # one streamed line visited held line by held line is the same order
            out["split"] = 0
        if int(point["lookahead"]) == 0:  # nothing is ever prefetched, so nothing is protected
            out["protect"] = PREFETCH_ONLY.fixed
        return out

    def estimate(self, point: Point, shape: Shape, machine: Machine) -> float | None:
        params = self.to_params(point)
        blocks = strip_blocks(shape, machine, params)
        if not blocks:
            return None
        Mt, Kt, Nt = shape.tiles(machine.T)
        dma = strip_loads_estimate(shape, machine, params) * machine.dma_cycles
        compute = Mt * Kt * Nt * machine.mxu_cycles
        rows, cols = blocks[0]
        return max(dma, compute) + (len(rows) + len(cols)) * machine.dma_cycles

    def slots_needed(self, point: Point, shape: Shape, machine: Machine) -> int:
        return strip_slots(
            shape, machine, self.to_params(point)
        )  # strips.py's strip_slots_needed, without the list of blocks

    def generator(self, point: Point, shape: Shape, machine: Machine) -> Generator:
        """The compiled engine's strip generator: the reference's program (strips.py), streamed."""
        return engine.Strips(shape, machine, self.to_params(point))

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        """The three points that did best over the benchmark's cases (benchmarks/quality/bench_structures.py):
        held tiles retiring over the last two streamed lines with a short tail (128^3 at 32 slots),
        plain streaming with a long protection (16 slots), and a wider reserve (tall, thin products)."""
        params = self.params(shape, machine.T)
        return [seed_point(seed, params, shape, machine) for seed in SEEDS]


def seed_point(
    params: StripParams, domain: tuple[Param, ...], shape: Shape, machine: Machine
) -> Point:
    """`params` as a point of the parameters in `domain`, its tail cut to the k steps."""
    _Mt, Kt, _Nt = shape.tiles(machine.T)
    names = {p.name for p in domain}
    point: Point = {("strip_axis" if k == "axis" else k): v for k, v in params.as_dict().items()}  # type: ignore[misc]
    point = {k: v for k, v in point.items() if k in names}
    point["tail"] = min(params.tail, Kt, MAX_TAIL)
    return point


SPACE = Space(
    "strips",
    "strip schedules for small scratchpads: slot-sized blocks, streaming steps, protected prefetch",
    (StripsFamily(),),
)
