"""The schedule parameters of a fused group on the systolic array with its memory system, as
data: the block sides and orders the systolic fused engine (simcore.systolic.fused) takes.

* epilogue (a product and its elementwise steps): block sides `bm`, `bk`, `bn` (the array's
  rows or columns times powers of two, and the whole dimension), the loop `order` over the
  blocks and the operands' `buffering` (every block double or single buffered);
* mlp (the up projection, its activation and the down projection over row blocks): `bm`, `bk`,
  `bh` (hidden columns of a block), `bn`; `x_resident`, `y_resident`, `w_resident`;
  `buffering` of the streamed blocks and `h_buffers`, the hidden blocks on chip.

A point whose blocks exceed the buffers is graded by arithmetic (`violation`: the words over
every store) before anything is built or timed.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterator

from search_spaces.domains import Choice, Param, Point, grid
from simcore.fusion.groups import EpilogueGemm, FusedMlp
from simcore.systolic.blocked.schedule import LOOP_ORDERS
from simcore.systolic.fused.evaluate import fused_build
from simcore.systolic.fused.schedule import GemmSchedule, MlpSchedule
from simcore.systolic.fused.slots import Costs
from simcore.systolic.machine import SystolicMachine

SystolicGroup = EpilogueGemm | FusedMlp
BUFFERINGS = {"double": (2, 2, 2), "single": (1, 1, 1)}


def sides(dim: int, base: int) -> tuple[int, ...]:
    """base, 2 base, 4 base, ... below dim, and dim."""
    found, side = [], max(1, base)
    while side < dim:
        found.append(side)
        side *= 2
    return (*found, dim)


def _side(name: str, dim: int, base: int, help: str) -> Param:
    return Param(name, Choice(sides(dim, base)), help)


def _flag(name: str, help: str) -> Param:
    return Param(name, Choice((False, True)), help)


def epilogue_params(group: EpilogueGemm, machine: SystolicMachine) -> tuple[Param, ...]:
    r, c = machine.array.rows, machine.array.cols
    return (
        _side("bm", group.m, r, "rows of A and C in a block"),
        _side("bk", group.k, r, "the reduction's share of a block"),
        _side("bn", group.n, c, "columns of B and C in a block"),
        Param("order", Choice(LOOP_ORDERS), "loop order over the blocks, outermost first"),
        Param("buffering", Choice(tuple(BUFFERINGS)), "every operand's block double or single"),
    )


def mlp_params(group: FusedMlp, machine: SystolicMachine) -> tuple[Param, ...]:
    r, c = machine.array.rows, machine.array.cols
    return (
        _side("bm", group.m, r, "rows of X in a row block"),
        _side("bk", group.d, r, "the up projection's reduction share"),
        _side("bh", group.hidden, c, "hidden columns in a hidden block"),
        _side("bn", group.d_out, c, "columns of Y in a block of the down projection"),
        _flag("x_resident", "X's row block stays on chip across the hidden blocks"),
        _flag("y_resident", "Y's row block stays in the accumulators across the hidden blocks"),
        _flag("w_resident", "W1 and W2 stay on chip across the row blocks"),
        Param("buffering", Choice((1, 2)), "slots of each streamed block"),
        Param("h_buffers", Choice((1, 2)), "hidden blocks on chip (2: pipelined)"),
    )


def systolic_params(group: SystolicGroup, machine: SystolicMachine) -> tuple[Param, ...]:
    if isinstance(group, FusedMlp):
        return mlp_params(group, machine)
    return epilogue_params(group, machine)


def systolic_schedule(group: SystolicGroup, point: Point) -> GemmSchedule | MlpSchedule:
    p = dict(point)
    if isinstance(group, FusedMlp):
        return MlpSchedule(
            int(p["bm"]),  # type: ignore[arg-type]
            int(p["bk"]),  # type: ignore[arg-type]
            int(p["bh"]),  # type: ignore[arg-type]
            int(p["bn"]),  # type: ignore[arg-type]
            bool(p["x_resident"]),
            bool(p["y_resident"]),
            int(p["buffering"]),  # type: ignore[arg-type]
            int(p["h_buffers"]),  # type: ignore[arg-type]
            bool(p["w_resident"]),
        )
    return GemmSchedule(
        int(p["bm"]),  # type: ignore[arg-type]
        int(p["bk"]),  # type: ignore[arg-type]
        int(p["bn"]),  # type: ignore[arg-type]
        str(p["order"]),
        BUFFERINGS[str(p["buffering"])],
    )


def systolic_points(group: SystolicGroup, machine: SystolicMachine) -> Iterator[Point]:
    return grid(systolic_params(group, machine))


def point_count(group: SystolicGroup, machine: SystolicMachine) -> int:
    total = 1
    for param in systolic_params(group, machine):
        total *= len(param.domain.values())
    return total


def violation(costs: Costs, group: SystolicGroup, point: Point) -> Fraction:
    """Words over the buffers (0 when the point fits): arithmetic on the blocks' slots."""
    build = fused_build(costs, group, systolic_schedule(group, point))
    return sum((over.words for over in build.slots.over()), Fraction(0))
