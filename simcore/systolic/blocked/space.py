"""The block schedule as a search space, in plain data (the search layer turns it into its own
parameter types): each parameter's name and domain, the schedule a point names, how far a point
is over the buffers (0 when it fits), and starting points that fit.

  bm, bk, bn   block sides, integers 1 .. M, K, N (log scale)
  order        the loop order over the blocks, outermost first (LOOP_ORDERS)
  buffer_a, buffer_b, buffer_c   1 (single) or 2 (double buffered)
  span_a, span_b, span_c         0 .. 3: the loop level from which the operand's on-chip tile
                                 spans the inner block loops (3: one block; 0: all of it)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import LOOP_ORDERS, BlockSchedule, feasibility
from simcore.systolic.machine import SystolicMachine


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: an integer range (low, high, log) or a choice among `choices`."""

    name: str
    help: str
    low: int = 0
    high: int = 0
    log: bool = False
    choices: tuple[object, ...] = ()


def schedule_params(shape: Shape) -> tuple[ParamSpec, ...]:
    return (
        ParamSpec("bm", "rows of A and C in a block", 1, shape.m, shape.m > 1),
        ParamSpec("bk", "the reduction's share of a block", 1, shape.k, shape.k > 1),
        ParamSpec("bn", "columns of B and C in a block", 1, shape.n, shape.n > 1),
        ParamSpec("order", "loop order over the blocks, outermost first", choices=LOOP_ORDERS),
        ParamSpec("buffer_a", "slots of A's block (2: double buffered)", choices=(1, 2)),
        ParamSpec("buffer_b", "slots of B's block", choices=(1, 2)),
        ParamSpec("buffer_c", "slots of C's block", choices=(1, 2)),
        ParamSpec(
            "span_a",
            "A's tile spans the loops from this level in (3: one block)",
            choices=(0, 1, 2, 3),
        ),
        ParamSpec("span_b", "B's tile spans the loops from this level in", choices=(0, 1, 2, 3)),
        ParamSpec("span_c", "C's tile spans the loops from this level in", choices=(0, 1, 2, 3)),
    )


def schedule_of(point: Mapping[str, object]) -> BlockSchedule:
    """The schedule a point names (ValueError naming the parameter when one is missing)."""
    for spec in schedule_params(Shape(1, 1, 1)):
        if spec.name not in point:
            raise ValueError(f"block schedule point lacks {spec.name}")
    buffering = tuple(int(point[f"buffer_{x}"]) for x in "abc")  # type: ignore[call-overload]
    span = tuple(int(point[f"span_{x}"]) for x in "abc")  # type: ignore[call-overload]
    return BlockSchedule(
        int(point["bm"]),  # type: ignore[call-overload]
        int(point["bk"]),  # type: ignore[call-overload]
        int(point["bn"]),  # type: ignore[call-overload]
        str(point["order"]),
        buffering,  # type: ignore[arg-type]
        span,  # type: ignore[arg-type]
    )


def point_of(schedule: BlockSchedule) -> dict[str, object]:
    point: dict[str, object] = {
        "bm": schedule.bm,
        "bk": schedule.bk,
        "bn": schedule.bn,
        "order": schedule.order,
    }
    point.update({f"buffer_{x}": v for x, v in zip("abc", schedule.buffering)})
    point.update({f"span_{x}": v for x, v in zip("abc", schedule.span)})
    return point


def violation(machine: SystolicMachine, schedule: BlockSchedule, shape: Shape) -> float:
    """How far the blocks are over the fullest store, relative to its capacity (0: they fit)."""
    return feasibility(machine, schedule, shape).worst


def seed_schedules(machine: SystolicMachine, shape: Shape) -> list[BlockSchedule]:
    """Schedules that fit, for each loop order and for one block or the whole of the operand of
    the outermost loop on chip: blocks of one array tile, grown by doubling bn, bm and bk in
    turn while they fit."""
    out = []
    for order in LOOP_ORDERS:
        for keep in (None, "a", "b"):
            found = _grown(machine, shape, order, keep)
            if found is not None:
                out.append(found)
    return out


def _grown(
    machine: SystolicMachine, shape: Shape, order: str, keep: str | None
) -> BlockSchedule | None:
    r, c = machine.array.rows, machine.array.cols
    span = (0 if keep == "a" else 3, 0 if keep == "b" else 3, 3)
    buffering = (1 if keep == "a" else 2, 1 if keep == "b" else 2, 2)
    sides = [min(c, shape.n), min(r, shape.m), min(r, shape.k)]  # bn, bm, bk
    limits = [shape.n, shape.m, shape.k]

    def make(s: list[int]) -> BlockSchedule:
        return BlockSchedule(s[1], s[2], s[0], order, buffering, span)

    if not feasibility(machine, make(sides), shape).ok:
        return None
    grown = True
    while grown:
        grown = False
        for i in range(3):
            trial = list(sides)
            trial[i] = min(limits[i], trial[i] * 2)
            if trial[i] != sides[i] and feasibility(machine, make(trial), shape).ok:
                sides, grown = trial, True
    return make(sides)
