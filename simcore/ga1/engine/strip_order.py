"""The strip schedules' product order (simcore/ga1/generator/strips.py is the reference), streamed
by the block walker (blocks.py), with next uses from the strips' structure.

In the frame (record.py: "row" strips are the transposed product's "col" strips) C's columns are
cut into strips, visited in turn; strip i's blocks are its bands of rows, visited top to bottom or
(REVERSED) bottom to top. Keys are product numbers: block b's products follow every earlier
block's, and within a block record.py's `place` orders them. A frame row's operand is next used
by the next strip (the block of it that holds the row); a frame column's by the strip's next
block (the strip's blocks share its columns) and, after its last block, never.

The plan keeps a record per strip (STRIP_FIELDS each, at STRIPS_AT): memory that grows with the
strips, never with the products.
"""

from __future__ import annotations

import functools

import numpy as np

from simcore.ga1.engine.jit import inline
from simcore.ga1.engine.plan import (
    BANDS_AT,
    END,
    FLIP,
    KT,
    N_BLOCKS,
    NEVER,
    ORDER_FIELDS,
    PINNED,
    PLAN_END,
    PROTECT,
    STRIPS,
    STRUCTURE,
    TAIL,
    band_lengths,
    cell_tables,
    common_fields,
)
from simcore.ga1.engine.record import first_key
from simcore.ga1.engine.rows import Section
from simcore.ga1.generator.order import largest_band
from simcore.ga1.generator.strips import (
    MAX_STRIPS,
    StripParams,
    TooManyStrips,
    block_height,
    step_cells,
    strip_width_runs,
)
from simcore.ga1.machine import Machine
from simcore.shape import Shape

# The strips' own plan fields (after the cell tables' fields): the frame's rows, the strips, and
# whether odd blocks stream in reverse. The strip records are the BANDS_AT section.
LONG, N_STRIPS, REVERSE_ODD = range(ORDER_FIELDS + 24, ORDER_FIELDS + 27)
STRIPS_AT = BANDS_AT
assert REVERSE_ODD < PLAN_END
# A strip's record: its first column and width, its bands (COUNT of them: the first N_BIG of
# height BIG, the others SMALL), whether they run bottom to top, its first block and first key,
# and its four cell tables (big or small height, then forward or reversed streaming).
(S_COL0, S_W, S_COUNT, S_BIG, S_SMALL, S_N_BIG, S_REVERSED, S_FIRST_BLOCK, S_BASE, S_TABLES) = (
    range(10)
)
STRIP_FIELDS = S_TABLES + 4


@functools.lru_cache(maxsize=256)
def _widths(
    long_tiles: int, cut_tiles: int, slots: int, reserve: int
) -> tuple[tuple[int, int, int], ...]:
    """The strip widths as runs (width, strips of it, their block height), narrowest first: the
    same for every point of a study with this reserve."""
    _cost, runs = strip_width_runs(long_tiles, cut_tiles, slots, reserve)
    return tuple((w, count, block_height(w, slots, reserve, long_tiles)) for w, count in runs)


def _frame_cells(h: int, w: int, split: int, reverse: bool, flip: bool) -> list[tuple[int, int]]:
    """An h x w frame block's cells in the order one k step visits them (strips.py's rule 5 on
    the real block, which is w x h when the frame is transposed)."""
    if not flip:
        return step_cells(h, w, split, reverse)
    return [(y, x) for x, y in step_cells(w, h, split, reverse)]


@functools.lru_cache(maxsize=4096)
def _tables(
    shapes: tuple[tuple[int, int, bool], ...], split: int, flip: bool
) -> tuple[dict[int, int], Section]:
    """The cell tables of these (h, w, reverse) frame blocks (they recur from point to point)."""
    return cell_tables(
        [(h, w, _frame_cells(h, w, split, reverse, flip)) for h, w, reverse in shapes]
    )


def strip_slots(shape: Shape, machine: Machine, params: StripParams) -> int:
    """strips.py's strip_slots_needed, from the strips alone (no list of every block): a 1 x 1
    block's need when none obeys the slot rule, else the largest block's accumulators and an A
    and a B tile (three slots when K is one step: nothing stays live). One more than the
    scratchpad when the widths cannot be chosen in time (TooManyStrips): never fits."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    long, cut = (Nt, Mt) if params.axis == "row" else (Mt, Nt)
    try:
        runs = _widths(long, cut, machine.slots, params.reserve)
    except TooManyStrips:
        return machine.slots + 1
    if not runs:
        return 2 + params.reserve
    if Kt == 1:
        return 3
    return max(largest_band(long, h, params.partition) * w for w, _count, h in runs) + 2


def strip_plan(
    shape: Shape, machine: Machine, params: StripParams
) -> tuple[dict[int, int], list[Section]]:
    """The plan of a strip schedule (its slot need already checked)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    flip = params.axis == "row"
    long, cut = (Nt, Mt) if flip else (Mt, Nt)
    runs = _widths(long, cut, machine.slots, params.reserve)
    strips = sum(count for _w, count, _h in runs)
    if strips > MAX_STRIPS:
        raise TooManyStrips(
            f"strip schedule {params} cuts C into {strips} strips, more than the {MAX_STRIPS} "
            "the engine plans"
        )
    widths = [w for w, count, _h in runs for _ in range(count)]
    heights = [h for _w, count, h in runs for _ in range(count)]
    if params.strip_order == "wide":
        widths, heights = widths[::-1], heights[::-1]
    records: list[int] = []
    tables: dict[tuple[int, int, bool], int] = {}
    col0 = first_block = base = 0
    for index, (w, height) in enumerate(zip(widths, heights)):
        count, big, small, n_big = band_lengths(long, height, params.partition)
        ids = []
        for h in (big, small):
            for reverse in (False, True):
                key = (h, w, reverse and params.flip)
                ids.append(tables.setdefault(key, len(tables)))
        records += [
            col0,
            w,
            count,
            big,
            small,
            n_big,
            (index + int(params.first_reverse)) % 2,
            first_block,
            base,
            *ids,
        ]
        col0, first_block, base = col0 + w, first_block + count, base + Kt * w * long
    offsets, packed = _tables(tuple(tables), params.split, flip)
    products = Mt * Kt * Nt
    geo = {
        STRUCTURE: STRIPS,
        FLIP: int(flip),
        TAIL: min(params.tail, Kt - 1),
        END: products,
        NEVER: products + 1,
        PINNED: products + 2,
        **common_fields((Mt, Kt, Nt), params.lookahead, params.store_first, params.store_delay),
        PROTECT: params.protect,
        N_BLOCKS: first_block,
        LONG: long,
        N_STRIPS: len(widths),
        REVERSE_ODD: int(params.flip),
        **offsets,
    }
    return geo, [(STRIPS_AT, len(records), records), packed]


@inline
def strip_block(st: np.ndarray, strip: int, v: int) -> tuple[int, int, int, int, int, int, int]:
    """Block v (in visiting order) of strip `strip`, as record.py describes blocks."""
    rec = st[STRIPS_AT] + strip * STRIP_FIELDS
    reversed_, big, n_big = st[rec + S_REVERSED], st[rec + S_BIG], st[rec + S_N_BIG]
    band = st[rec + S_COUNT] - 1 - v if reversed_ == 1 else v
    if band < n_big:
        row0, h = band * big, big
    else:
        row0, h = n_big * big + (band - n_big) * st[rec + S_SMALL], st[rec + S_SMALL]
    before = (
        st[LONG] - row0 - h if reversed_ == 1 else row0
    )  # the strip's rows its earlier blocks took
    w, down = (
        st[rec + S_W],
        (st[rec + S_FIRST_BLOCK] + v) % 2,
    )  # every other block walks k downwards
    table = st[rec + S_TABLES + (0 if h == big else 2) + (down if st[REVERSE_ODD] == 1 else 0)]
    return st[rec + S_BASE] + st[KT] * w * before, row0, h, st[rec + S_COL0], w, table, down


@inline
def strip_step(st: np.ndarray, strip: int, v: int) -> tuple[int, int]:
    """The block after block v of strip `strip`: (strip, v)."""
    if v + 1 < st[st[STRIPS_AT] + strip * STRIP_FIELDS + S_COUNT]:
        return strip, v + 1
    return strip + 1, 0


@inline
def strip_next_row(st: np.ndarray, strip: int, row: int, k: int) -> int:
    """Where the operand of frame row `row` at k is next used once its block of strip `strip` is
    done: the next strip's block that holds the row."""
    if strip + 1 >= st[N_STRIPS]:
        return st[NEVER]
    rec = st[STRIPS_AT] + (strip + 1) * STRIP_FIELDS
    big, n_big = st[rec + S_BIG], st[rec + S_N_BIG]
    band = row // big if row < n_big * big else n_big + (row - n_big * big) // st[rec + S_SMALL]
    block = strip_block(
        st, strip + 1, st[rec + S_COUNT] - 1 - band if st[rec + S_REVERSED] == 1 else band
    )
    return first_key(st, block, 0, row - block[1], k)


@inline
def strip_next_col(st: np.ndarray, strip: int, v: int, y: int, k: int) -> int:
    """Where the operand of column y (of block v of the strip) at k is next used once the block is
    done: the strip's next block, if any."""
    if v + 1 >= st[st[STRIPS_AT] + strip * STRIP_FIELDS + S_COUNT]:
        return st[NEVER]
    return first_key(st, strip_block(st, strip, v + 1), 1, y, k)
