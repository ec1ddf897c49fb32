"""The chapter's hand-written schedule families for C = A @ B, in its exact instruction order.

blocked(bi, bj, buffers): output-stationary. A block of bi x bj tiles of C stays in the
scratchpad while K streams through it; with more than one buffer the loads of step k + buffers - 1
are issued before the products of step k, into another set of operand slots (buffers=2 is the
chapter's double buffering). kouter(buffers): the (k, i, j) order, each partial sum of C goes to
DRAM and back for every k.
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.ga1.machine import Machine
from simcore.ga1.program import Program, ProgramBuilder
from simcore.shape import Shape, parse_int, quoted

BLOCK_ORDERS: tuple[str, ...] = ("row", "col")


class ScheduleError(ValueError):
    """A schedule's parameters are invalid or it does not fit the scratchpad."""


def blocked_slots(bi: int, bj: int, buffers: int) -> int:
    return bi * bj + buffers * (bi + bj)


def kouter_slots(buffers: int) -> int:
    return 3 * buffers


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ScheduleError(f"{name} must be a positive integer, got {value!r}")


def check_blocked(machine: Machine, bi: int, bj: int, buffers: int, order: str) -> None:
    """Reject blocked parameters that are invalid or do not fit the scratchpad."""
    _check_positive(bi=bi, bj=bj, buffers=buffers)
    if order not in BLOCK_ORDERS:
        raise ScheduleError(f"unknown block order {order!r} (use one of {', '.join(BLOCK_ORDERS)})")
    need = blocked_slots(bi, bj, buffers)
    if need > machine.slots:
        raise ScheduleError(
            f"blocked {bi}x{bj} with {buffers} buffer(s) needs {need} slots, the scratchpad has {machine.slots}"
        )


def check_kouter(machine: Machine, buffers: int) -> None:
    """Reject a k-outermost buffer count that is invalid or does not fit the scratchpad."""
    _check_positive(buffers=buffers)
    need = kouter_slots(buffers)
    if need > machine.slots:
        raise ScheduleError(
            f"k-outermost with {buffers} buffer(s) needs {need} slots, the scratchpad has {machine.slots}"
        )


def blocked(
    shape: Shape, machine: Machine, bi: int, bj: int, buffers: int = 2, order: str = "row"
) -> Program:
    """The chapter's blocked schedule; `order` visits blocks row by row or column by column."""
    check_blocked(machine, bi, bj, buffers, order)
    Mt, Kt, Nt = shape.tiles(machine.T)
    out = ProgramBuilder()
    corners = [(I, J) for I in range(0, Mt, bi) for J in range(0, Nt, bj)]
    if order == "col":
        corners.sort(key=lambda corner: (corner[1], corner[0]))
    for I, J in corners:
        rows = range(I, min(I + bi, Mt))
        cols = range(J, min(J + bj, Nt))
        for x in range(len(rows)):
            for y in range(len(cols)):
                out.zero(x * bj + y)

        def operand_base(k: int) -> int:
            return bi * bj + (k % buffers) * (bi + bj)

        def loads(k: int) -> None:
            base = operand_base(k)
            for x, i in enumerate(rows):
                out.load(base + x, "A", i, k)
            for y, j in enumerate(cols):
                out.load(base + bi + y, "B", k, j)

        for k in range(min(buffers - 1, Kt)):
            loads(k)
        for k in range(Kt):
            if k + buffers - 1 < Kt:
                loads(k + buffers - 1)
            base = operand_base(k)
            for x in range(len(rows)):
                for y in range(len(cols)):
                    out.mxu(x * bj + y, base + x, base + bi + y)
        for x, i in enumerate(rows):
            for y, j in enumerate(cols):
                out.store(x * bj + y, "C", i, j)
    return out.build()


def kouter(shape: Shape, machine: Machine, buffers: int = 2) -> Program:
    """The (k, i, j) order: load the partial C tile (or zero it), load A and B, multiply, store."""
    check_kouter(machine, buffers)
    Mt, Kt, Nt = shape.tiles(machine.T)
    out = ProgramBuilder()
    group = 0
    for k in range(Kt):
        for i in range(Mt):
            for j in range(Nt):
                c, a, b = 3 * group, 3 * group + 1, 3 * group + 2
                group = (group + 1) % buffers
                if k == 0:
                    out.zero(c)
                else:
                    out.load(c, "C", i, j)
                out.load(a, "A", i, k)
                out.load(b, "B", k, j)
                out.mxu(c, a, b)
                out.store(c, "C", i, j)
    return out.build()


@dataclass(frozen=True)
class ChapterSchedule:
    """One row of the chapter's sweep: a family and its parameters (bj=None means a whole row)."""

    family: str  # "blocked" or "kouter"
    bi: int | None
    bj: int | None
    buffers: int

    def block(self, shape: Shape, machine: Machine) -> tuple[int, int] | None:
        if self.family != "blocked":
            return None
        assert self.bi is not None
        bj = self.bj if self.bj is not None else shape.tiles(machine.T)[2]
        return self.bi, bj

    def slots_needed(self, shape: Shape, machine: Machine) -> int:
        block = self.block(shape, machine)
        return kouter_slots(self.buffers) if block is None else blocked_slots(*block, self.buffers)

    def build(self, shape: Shape, machine: Machine) -> Program:
        block = self.block(shape, machine)
        if block is None:
            return kouter(shape, machine, self.buffers)
        return blocked(shape, machine, block[0], block[1], self.buffers)

    def label(self, shape: Shape, machine: Machine) -> str:
        buf = f"{self.buffers} buf"
        block = self.block(shape, machine)
        if block is None:
            return f"k outermost (k,i,j), {buf}"
        bi, bj = block
        note = " (i,j,k)" if (bi, bj) == (1, 1) else " (row: i,k,j)" if self.bj is None else ""
        return f"blocked {bi}x{bj}{note}, {buf}"


def chapter_sweep() -> list[ChapterSchedule]:
    """The 16 rows of the chapter's 128x128x128 table, in its order."""
    rows = []
    for bi, bj in [(1, 1), (1, None), (2, 2), (2, 4), (2, 8), (4, 4), (4, 8)]:
        for buffers in (1, 2):
            rows.append(ChapterSchedule("blocked", bi, bj, buffers))
    rows += [ChapterSchedule("kouter", None, None, 1), ChapterSchedule("kouter", None, None, 2)]
    return rows


def parse_schedule(text: str) -> ChapterSchedule:
    """'4x8:2' -> blocked 4x8 with 2 buffers; '1xrow:1' a whole row; 'kouter:2' k-outermost."""
    head, sep, tail = text.strip().partition(":")
    try:
        buffers = parse_int(tail, "buffers") if sep else 2
    except ValueError as exc:
        raise ScheduleError(f"malformed schedule {quoted(text)}: {exc}") from None
    if buffers < 1:
        raise ScheduleError(f"malformed schedule {text!r}: buffers must be at least 1")
    if head.lower() in ("kouter", "k"):
        return ChapterSchedule("kouter", None, None, buffers)
    bi_text, x, bj_text = head.lower().partition("x")
    try:
        bi = parse_int(bi_text, "the block height")
        bj = None if bj_text == "row" else parse_int(bj_text, "the block width")
    except ValueError:
        raise ScheduleError(
            f"malformed schedule {quoted(text)}: expected BIxBJ:BUFFERS, BIxrow:BUFFERS or kouter:BUFFERS"
        ) from None
    if not x or bi < 1 or (bj is not None and bj < 1):
        raise ScheduleError(
            f"malformed schedule {quoted(text)}: expected BIxBJ:BUFFERS with positive sizes"
        )
    return ChapterSchedule("blocked", bi, bj, buffers)
