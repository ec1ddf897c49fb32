"""Golden numbers transcribed from the chapter (/work/shared/spec/ga1-chapter.md): the 64-slot
128x128x128 table, the 32x32x32 timeline pictures, and the 16-slot facts stated in the text."""

from __future__ import annotations

import pytest

from simcore import (
    Machine,
    ScheduleError,
    Shape,
    blocked,
    chapter_sweep,
    predicted_double_buffered_cycles,
    simple_bounds,
    simulate,
    timeline,
)

SHAPE = Shape(128, 128, 128)

# schedule, tiles moved, cycles, MXU util, DMA busy, vs best, model (2-buffer rows), as printed.
TABLE_64 = """\
blocked 1x1 (i,j,k), 1 buf                8448   203776      16%       83%    5.44x
blocked 1x1 (i,j,k), 2 buf                8448   173056      19%       98%    4.62x   179200 (1.04)
blocked 1x16 (row: i,k,j), 1 buf          4608    94080      35%       98%    2.51x
blocked 1x16 (row: i,k,j), 2 buf          4608    92160      36%      100%    2.46x    97600 (1.06)
blocked 2x2, 1 buf                        4352    94720      35%       92%    2.53x
blocked 2x2, 2 buf                        4352    87040      38%      100%    2.32x    92160 (1.06)
blocked 2x4, 1 buf                        3328    76160      43%       87%    2.03x
blocked 2x4, 2 buf                        3328    66560      49%      100%    1.78x    70400 (1.06)
blocked 2x8, 1 buf                        2816    68800      48%       82%    1.84x
blocked 2x8, 2 buf                        2816    56320      58%      100%    1.50x    59520 (1.06)
blocked 4x4, 1 buf                        2304    56640      58%       81%    1.51x
blocked 4x4, 2 buf                        2304    46080      71%      100%    1.23x    48640 (1.06)
blocked 4x8, 1 buf                        1792    52640      62%       68%    1.41x
blocked 4x8, 2 buf                        1792    37440      88%       96%    1.00x    39808 (1.06)
k outermost (k,i,j), 1 buf               16128   388096       8%       83%   10.37x
k outermost (k,i,j), 2 buf               16128   388096       8%       83%   10.37x
"""

# The chapter's pictures (one character = 4 cycles), engine rows exactly as printed.
PICTURE_SINGLE = (
    "  dma DDDDDDDDDDDDDDDDDDDD..DDDDDDDDDDDDDDDDDDDD..DDDDDDDDDDDDDDDDDDDD..DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD ...",
    "  mxu ...............MM...MMMMMM...........MM...MMMMMM...........MM...MMMMMM...........MM...MMMMMM............................ ...",
)
PICTURE_DOUBLE = (
    "  dma DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD ...",
    "  mxu ...............MM...MMMMMM.........MM...MMMMMM.........MM...MMMMMM.........MM...MMMMMM.............................MM... ...",
)


def _split(line: str) -> tuple[str, list[str]]:
    # The label ends at "N buf"; the printed numbers follow.
    head, _, tail = line.partition(" buf")
    return head + " buf", tail.split()


def _expected_rows() -> list[tuple[str, list[str]]]:
    return [_split(line) for line in TABLE_64.splitlines()]


def _row_64(
    tiles: int, cycles: int, util: float, dma: float, vs_best: float, model: str
) -> list[str]:
    fields = [str(tiles), str(cycles), f"{util:.0%}", f"{dma:.0%}", f"{vs_best:.2f}x"]
    return fields + model.split() if model else fields


@pytest.fixture(scope="module")
def sweep_64() -> list[tuple[str, list[str]]]:
    machine = Machine(slots=64)
    runs = []
    for schedule in chapter_sweep():
        result = simulate(machine, schedule.build(SHAPE, machine))
        runs.append((schedule, result))
    best = min(result.cycles for _, result in runs)
    rows = []
    for schedule, result in runs:
        model = ""
        block = schedule.block(SHAPE, machine)
        if block is not None and schedule.buffers == 2:
            predicted = predicted_double_buffered_cycles(SHAPE, machine, *block)
            model = f"{predicted} ({predicted / result.cycles:.2f})"
        rows.append(
            (
                schedule.label(SHAPE, machine),
                _row_64(
                    result.tiles_moved,
                    result.cycles,
                    result.mxu_util,
                    result.dma_busy,
                    result.cycles / best,
                    model,
                ),
            )
        )
    return rows


def test_table_has_sixteen_rows(sweep_64: list[tuple[str, list[str]]]) -> None:
    assert len(sweep_64) == len(_expected_rows()) == 16


@pytest.mark.parametrize("row", range(16))
def test_table_row(sweep_64: list[tuple[str, list[str]]], row: int) -> None:
    assert sweep_64[row] == _expected_rows()[row]


def test_table_header_bounds() -> None:
    # "matrix unit alone needs 32768 cycles, DMA alone (each tile moved once) 15360 cycles"
    b = simple_bounds(SHAPE, Machine(slots=64))
    assert (b.compute, b.dma) == (32768, 15360)


@pytest.mark.parametrize(
    "buffers, cycles, util, picture",
    [
        (1, 1696, "30%", PICTURE_SINGLE),
        (2, 1600, "32%", PICTURE_DOUBLE),
    ],
)
def test_timeline_picture(buffers: int, cycles: int, util: str, picture: tuple[str, str]) -> None:
    machine = Machine(slots=64)
    result = simulate(machine, blocked(Shape(32, 32, 32), machine, 2, 2, buffers), trace=True)
    assert (result.cycles, result.tiles_moved, f"{result.mxu_util:.0%}") == (cycles, 80, util)
    lines = timeline(result, per_char=4).splitlines()
    assert len(lines) == 2
    for ours, chapter in zip(lines, picture):
        assert ours[:100] == chapter[:100]  # the brief's prefix ...
        assert ours == chapter  # ... and in fact the whole printed row


def test_sixteen_slot_sweep() -> None:
    machine = Machine(slots=16)
    fits: dict[str, int] = {}
    for schedule in chapter_sweep():
        try:
            program = schedule.build(SHAPE, machine)
        except ScheduleError:
            assert schedule.slots_needed(SHAPE, machine) > 16
            continue
        assert schedule.slots_needed(SHAPE, machine) <= 16
        fits[schedule.label(SHAPE, machine)] = simulate(machine, program).cycles
    best = min(fits, key=fits.__getitem__)
    assert (best, fits[best]) == ("blocked 2x4, 1 buf", 76160)
    assert fits["blocked 2x2, 2 buf"] == 87040
    # The large blocks and the double-buffered medium ones do not fit.
    for label in (
        "blocked 2x4, 2 buf",
        "blocked 4x4, 1 buf",
        "blocked 4x8, 2 buf",
        "blocked 1x16 (row: i,k,j), 1 buf",
    ):
        assert label not in fits
