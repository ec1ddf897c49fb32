"""The general generator's space: any product order the compiler can schedule well.

Block shapes that need not divide the matrix (uniform or balanced bands), row/column and
serpentine block order, the direction of k per block, the order inside a k step, a reordered
tail of k steps, how far ahead the DMA runs, and whether a ready store goes first."""

from __future__ import annotations

import dataclasses

from search_spaces.base import GA1Family, Space
from search_spaces.domains import Choice, IntRange, Param, Point, Unless
from simcore.ga1 import engine
from simcore.ga1.analytic import output_stationary_estimate
from simcore.ga1.engine import Generator
from simcore.ga1.generator import (
    GeneralParams,
    default_params,
    overlap_params,
    panel_params,
    slots_needed,
)
from simcore.ga1.generator.order import (
    BLOCK_ORDERS,
    INNER_ORDERS,
    K_DIRECTIONS,
    PARTITIONS,
    STRUCTURES,
    largest_band,
)
from simcore.ga1.machine import Machine
from simcore.shape import Shape

MAX_LOOKAHEAD = 64
MAX_TAIL = 8
MAX_RAMP = 16
# Parameters that only shape blocks: a rotating window leaves them at these values (see canonical).
BLOCKS_ONLY = {
    name: Unless("structure", ("rotate",), fixed)
    for name, fixed in (("k_direction", "up"), ("inner", "row"), ("tail", 0))
}
ROTATE_ONLY = Unless("structure", ("blocks",), 0)  # ramp


class GeneralFamily(GA1Family):
    name = "general"
    description = (
        "product orders compiled with slot reuse, next-use eviction, prefetch and early stores"
    )
    explored_around_seeds = True

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        Mt, Kt, Nt = shape.tiles(T)
        return (
            Param("bi", IntRange(1, Mt), "block height in tiles"),
            Param("bj", IntRange(1, Nt), "block width in tiles"),
            Param(
                "partition",
                Choice(PARTITIONS),
                "uniform bands of bi (last shorter) or near-equal bands",
            ),
            Param(
                "block_order", Choice(BLOCK_ORDERS), "blocks visited along rows or along columns"
            ),
            Param("serpentine", Choice((True, False)), "reverse every other row of blocks"),
            Param(
                "k_direction",
                Choice(K_DIRECTIONS),
                "k ascending everywhere, or alternating per block",
                BLOCKS_ONLY["k_direction"],
            ),
            Param(
                "inner",
                Choice(INNER_ORDERS),
                "order of products inside a k step",
                BLOCKS_ONLY["inner"],
            ),
            Param(
                "tail",
                IntRange(0, min(Kt, MAX_TAIL)),
                "last k steps run accumulator by accumulator",
                BLOCKS_ONLY["tail"],
            ),
            Param("lookahead", IntRange(0, MAX_LOOKAHEAD), "products the DMA may run ahead"),
            Param("store_first", Choice((True, False)), "a ready store goes before a due load"),
            Param(
                "structure",
                Choice(STRUCTURES),
                "k-synchronous blocks or a rotating window of units",
                structural=True,
            ),
            Param("ramp", IntRange(0, MAX_RAMP), "rotate: units that start together", ROTATE_ONLY),
        )

    def canonical(self, point: Point, shape: Shape, T: int) -> Point:
        Mt, _Kt, Nt = shape.tiles(T)
        out = dict(point)
        rows_banded = point.get("structure") == "blocks" or point.get("block_order") == "row"
        cols_banded = point.get("structure") == "blocks" or point.get("block_order") == "col"
        # A band size only matters through the bands it cuts; a rotating window through min(size, tiles).
        out["bi"] = (
            largest_band(Mt, int(point["bi"]), str(point["partition"]))
            if rows_banded
            else min(int(point["bi"]), Mt)
        )
        out["bj"] = (
            largest_band(Nt, int(point["bj"]), str(point["partition"]))
            if cols_banded
            else min(int(point["bj"]), Nt)
        )
        if point.get("structure") == "blocks":  # ramp only shapes the rotating window
            out["ramp"] = ROTATE_ONLY.fixed
        else:  # k direction, inner order and tail only shape blocks
            out.update({name: unless.fixed for name, unless in BLOCKS_ONLY.items()})
            window = out["bj"] if point.get("block_order") == "row" else out["bi"]
            out["ramp"] = min(int(point["ramp"]), int(window))
        return out

    @staticmethod
    def to_params(point: Point) -> GeneralParams:
        known = {f.name for f in dataclasses.fields(GeneralParams)}
        return GeneralParams(**{k: v for k, v in point.items() if k in known})  # type: ignore[arg-type]

    def estimate(self, point: Point, shape: Shape, machine: Machine) -> float | None:
        return output_stationary_estimate(shape, machine, int(point["bi"]), int(point["bj"]))

    def slots_needed(self, point: Point, shape: Shape, machine: Machine) -> int:
        return slots_needed(shape, machine, self.to_params(point))

    def generator(self, point: Point, shape: Shape, machine: Machine) -> Generator:
        return engine.General(shape, machine, self.to_params(point))

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        """The generator's default block; a block that keeps a panel of A or B resident when that
        moves fewer tiles (panel_params); and the smallest block that keeps the matrix unit busy,
        when one does (overlap_params)."""
        domains = {p.name: p.domain for p in self.params(shape, machine.T)}
        default = default_params(shape, machine)
        chosen = [
            default,
            panel_params(shape, machine, default),
            overlap_params(shape, machine, default),
        ]
        # A generator's choice may lie outside the searched ranges (a lookahead of 4 x the spare
        # slots passes MAX_LOOKAHEAD on small shapes): clip it in, so the seed is a point of the space.
        return [
            {
                k: domains[k].clip(v) if isinstance(domains[k], IntRange) else v  # type: ignore[union-attr]
                for k, v in dataclasses.asdict(params).items()
                if k in domains
            }
            for params in chosen
            if params is not None
        ]


SPACE = Space(
    "general",
    "the general generator: blocks, orders, tails, prefetch and store overlap",
    (GeneralFamily(),),
)
