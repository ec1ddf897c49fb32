"""The block schedule of a systolic machine with its memory (an architecture): block sides of M,
K and N that fit the machine's buffers, the loop order over the blocks, how much of each operand
stays on chip (its span) and single or double buffering of it, and the order of the array's
tiles inside a block. The machine fixes the array and its dataflow.

The parameters are simcore.systolic.blocked.space's, turned into this layer's domains; a point
over the buffers is graded by the words it needs beyond their capacities (arithmetic only, no
timing), and every study starts from that module's seed schedules, which fit.

The systolic oracle (autotune.oracles.systolic) times, verifies and costs the schedule a point
names on its machine.
"""

from __future__ import annotations

from typing import Any, Protocol

from search_spaces.base import Family, Space
from search_spaces.domains import Choice, Param, Point
from simcore.shape import Shape
from simcore.systolic.blocked.schedule import BlockSchedule, feasibility
from simcore.systolic.blocked.space import ParamSpec, schedule_of, schedule_params
from simcore.systolic.blocked.space import point_of as _point_of
from simcore.systolic.blocked.space import seed_schedules as _seed_schedules
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import DEFAULT_ASSUMPTIONS, ORDERS, Mapping, SystolicDesign

NAME = "systolic-blocked"
# The block loop order's parameter: GA-1's families have an `order` of their own.
RENAMED = {"order": "loop_order"}
TILE_ORDER = Param(
    "tile_order",
    Choice(ORDERS),
    "the order of the array's tiles inside a block (col-outer: column folds outermost)",
)


class WithSystem(Protocol):
    """The oracle's machine: it holds the systolic machine with its memory."""

    @property
    def system(self) -> SystolicMachine: ...


def sides(dim: int, units: tuple[int, ...] = ()) -> tuple[int, ...]:
    """Block sides along a dimension: the dimension, its half, third and quarter (rounded up),
    the powers of two from 8 below it, and each of `units` (the array's sides) times powers of
    two below it (the seed schedules' sides)."""
    found = {dim} | {-(-dim // q) for q in (2, 3, 4)}
    for start in (8, *units):
        side = start
        while side < dim:
            found.add(side)
            side *= 2
    return tuple(sorted(found))


def _param(spec: ParamSpec, units: tuple[int, ...]) -> Param:
    name = RENAMED.get(spec.name, spec.name)
    if spec.choices:
        return Param(name, Choice(spec.choices), spec.help)  # type: ignore[arg-type]
    return Param(name, Choice(sides(spec.high, units)), spec.help)


def schedule(point: Point) -> BlockSchedule:
    """The block schedule a point names (ValueError naming a missing parameter)."""
    for theirs, ours in RENAMED.items():
        if ours not in point:
            raise ValueError(f"block schedule point lacks {ours}")
    plain = {k: v for k, v in point.items() if k not in RENAMED.values()}
    return schedule_of({**plain, **{k: point[v] for k, v in RENAMED.items()}})


def point_of(s: BlockSchedule) -> Point:
    """The point of a block schedule, in the first tile order."""
    found = _point_of(s)
    plain: Point = {RENAMED.get(k, k): v for k, v in found.items()}  # type: ignore[misc]
    return {**plain, TILE_ORDER.name: ORDERS[0]}


def design(machine: SystolicMachine, point: Point) -> SystolicDesign:
    """The array design a point runs on: the machine's array and dataflow, mapped on the whole
    array in the point's tile order, without an HBM link (a block's operands are on chip)."""
    order = str(point.get("tile_order", ORDERS[0]))
    if order not in ORDERS:
        raise ValueError(f"tile_order must be one of {', '.join(ORDERS)}, got {order!r}")
    array = machine.array
    return SystolicDesign(
        array, machine.dataflow, Mapping(array.rows, array.cols, order), DEFAULT_ASSUMPTIONS
    )


def words_over(machine: SystolicMachine, point: Point, shape: Shape) -> float:
    """Words the point's tiles need beyond the capacities of the stores, summed (0: they fit)."""
    fit = feasibility(machine, schedule(point), shape)
    return float(sum(words for _store, words, _capacity in fit.over))


class BlockedFamily(Family):
    """Blocks, loop order, spans and buffering on a systolic machine with its memory. Block
    sides are chosen among the few that tile a dimension well (`sides`), with the array's of
    `machine` (None: without them, to rebuild a recorded point by its family's name)."""

    name = NAME
    description = (
        "blocks of M, K and N that fit a systolic machine's buffers, their loop order, spans and "
        "buffering, timed with every DRAM transfer"
    )
    oracle = "systolic"
    limit = "buffer"  # the words over the buffers' capacities

    def __init__(self, machine: SystolicMachine | None = None) -> None:
        self.units = () if machine is None else (machine.array.rows, machine.array.cols)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BlockedFamily) and other.units == self.units

    def __hash__(self) -> int:
        return hash((NAME, self.units))

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        units = tuple(sorted(set(self.units)))
        return (*(_param(spec, units) for spec in schedule_params(shape)), TILE_ORDER)

    def violation(self, point: Point, shape: Shape, machine: Any) -> float:
        return words_over(_system(machine), point, shape)

    def seed_points(self, shape: Shape, machine: Any) -> list[Point]:
        """The seed schedules that fit (simcore.systolic.blocked.space.seed_schedules), in the
        first tile order; none on a machine without a memory system (no block fits nothing)."""
        if not isinstance(getattr(machine, "system", None), SystolicMachine):
            return []
        found = _seed_schedules(_system(machine), shape)
        return [point_of(s) for s in found]


def _system(machine: Any) -> SystolicMachine:
    system = getattr(machine, "system", None)
    if not isinstance(system, SystolicMachine):
        raise TypeError(f"the {NAME} family needs a machine with its memory, not {machine!r}")
    return system


FAMILY = BlockedFamily()
SPACE = Space(
    NAME,
    "blocks, loop order, spans and buffering on a systolic machine with its memory (the "
    "systolic oracle with an architecture)",
    (FAMILY,),
)
