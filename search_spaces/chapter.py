"""The chapter's families: output-stationary `blocked` (any bi x bj, 1 to 3 buffers, blocks
visited row- or column-major) and the k-outermost order."""

from __future__ import annotations

from search_spaces.base import GA1Family, Space
from search_spaces.domains import Choice, IntRange, Param, Point
from simcore.ga1 import engine
from simcore.ga1.analytic import output_stationary_estimate
from simcore.ga1.engine import Generator
from simcore.ga1.machine import Machine
from simcore.ga1.schedules import blocked_slots, chapter_sweep, kouter_slots
from simcore.shape import Shape

BUFFERS = (1, 2, 3)


class BlockedFamily(GA1Family):
    name = "blocked"
    description = "a bi x bj block of C stays on chip while K streams through it"

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        Mt, _Kt, Nt = shape.tiles(T)
        return (
            Param("bi", IntRange(1, Mt), "block height in tiles"),
            Param("bj", IntRange(1, Nt), "block width in tiles"),
            Param(
                "buffers", Choice(BUFFERS), "sets of operand slots: loads run buffers-1 steps ahead"
            ),
            Param("order", Choice(("row", "col")), "blocks visited row-major or column-major"),
        )

    def estimate(self, point: Point, shape: Shape, machine: Machine) -> float | None:
        return output_stationary_estimate(
            shape, machine, int(point["bi"]), int(point["bj"]), overlapped=int(point["buffers"]) > 1
        )

    def slots_needed(self, point: Point, shape: Shape, machine: Machine) -> int:
        return blocked_slots(int(point["bi"]), int(point["bj"]), int(point["buffers"]))

    def generator(self, point: Point, shape: Shape, machine: Machine) -> Generator:
        return engine.Blocked(
            shape,
            machine,
            int(point["bi"]),
            int(point["bj"]),
            int(point["buffers"]),
            str(point["order"]),
        )

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        Mt, _Kt, Nt = shape.tiles(machine.T)
        points: list[Point] = []
        for schedule in chapter_sweep():
            block = schedule.block(shape, machine)
            if block is None:
                continue
            bi, bj = min(block[0], Mt), min(block[1], Nt)
            points.append({"bi": bi, "bj": bj, "buffers": schedule.buffers, "order": "row"})
        return points


class KOuterFamily(GA1Family):
    name = "kouter"
    description = "the (k, i, j) order: every partial sum goes to DRAM and back for every k"

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        return (Param("buffers", Choice(BUFFERS), "groups of (C, A, B) slots used in turn"),)

    def slots_needed(self, point: Point, shape: Shape, machine: Machine) -> int:
        return kouter_slots(int(point["buffers"]))

    def generator(self, point: Point, shape: Shape, machine: Machine) -> Generator:
        return engine.KOuter(shape, machine, int(point["buffers"]))

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        return [{"buffers": 1}, {"buffers": 2}]


SPACE = Space(
    "chapter",
    "the chapter's hand-written families, with any block shape and 1-3 buffers",
    (BlockedFamily(), KOuterFamily()),
)
