"""The general generator's compiler, compiled: simcore/ga1/generator/compile.py's algorithm,
decision for decision, over a streamed product order (order.py, strip_order.py), emitting
program rows in chunks.

The reference holds the whole order and its next-use arrays; here a ring holds only the products
between the matrix unit's position p and the DMA frontier (at most `lookahead` + 2), each with
the keys of its tiles' next uses. A finished accumulator waits in the pending stores with the
product after which it may go (`store_delay` products after its last). Eviction candidates
(evict.py) are what the reference's lazy heap holds valid. With `protect` > 0 a prefetch's horizon moves `protect` keys further, so an
order with `protect` numbers its keys 0, 1, 2, ... (the strip orders do; the general orders,
whose keys leave gaps, have no `protect`).

The plan, the compiler's state and the output chunk are one flat array `st` (rows.py), so a run
can stop when its chunk is full and resume where it stopped. Within a run the state the loop
changes at every product (p, the frontier, whether it is blocked, the pending stores, the rows
emitted) lives in local variables, and every section is a view whose address stays in a
register: the kernel's helpers are inlined, take what they read and return what they change.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.compile_state import (
    ALL_DUE,
    BATCH,
    BLOCKED,
    BY_PRODUCT,
    EVICT_AT,
    FAILED_AT,
    FREE_AT,
    FRONTIER,
    GENERATED,
    HEADER,
    HEADROOM,
    LIVE,
    NEXT_AT,
    NEXT_P,
    PENDING,
    PENDING_AT,
    POS_AT,
    QUEUE,
    RING_AT,
    RING_MASK,
    SLOTS,
    STOP_P,
    TIE_LOG_AT,
    TIES,
    TILE_AT,
    WHERE_AT,
    WHERE_LEN,
    headroom,
)
from simcore.ga1.engine.compile_steps import advance, after_read, emit, flush_stores, stream
from simcore.ga1.engine.evict import (
    LOG_PAIRS,
    candidates_section,
    fits,
)
from simcore.ga1.engine.jit import callee, get, inline, kernel, put
from simcore.ga1.engine.order import start_units
from simcore.ga1.engine.plan import (
    BANDS_AT,
    CELL_START_AT,
    END,
    FIRST_AT,
    LOOKAHEAD,
    N_TILES,
    NEVER,
    PINNED,
    PROTECT,
    ROW_START_AT,
    SIZES_AT,
    STORE_DELAY,
    STORE_FIRST,
    STRIPS,
    STRUCTURE,
    TABLES_AT,
    UNITS,
    P,
)
from simcore.ga1.engine.record import (
    A_ID,
    B_ID,
    C_ID,
    KEY,
    LAST,
    NEXT_A,
    NEXT_B,
    POSITION,
    RECORD,
    I,
    J,
    K,
)
from simcore.ga1.engine.rows import CAPACITY, DONE, OUT, OUT_AT, Section, assemble
from simcore.ga1.engine.tilemap import find, section
from simcore.ga1.program import MXU, NONE
from simcore.ga1.schedules import ScheduleError


def new_state(
    geo: dict[int, int], sections: list[Section], slots: int, chunk_rows: int
) -> np.ndarray:
    """The compiler at product 0 of an order's plan (`geo`, `sections`), every slot free, with
    room for `chunk_rows` rows (at least twice the headroom), the first products streamed."""
    lookahead = geo[LOOKAHEAD]
    if not fits(slots, geo[PINNED]):
        raise ScheduleError(
            f"{geo[P]} products with {slots} slots are beyond the compiled generator's numbers"
        )
    # the ring holds products p..frontier (at most lookahead + 2) and the batch streamed ahead of
    # them; a power of two, indexed by a mask
    ring_rows, room_needed = 1 << (lookahead + 2 + BATCH).bit_length(), headroom(slots, lookahead)
    evict = candidates_section(slots)
    where = section(slots, geo[N_TILES])  # which slot holds a tile (tilemap.py)
    fields = {
        **geo,
        FAILED_AT: -1,
        SLOTS: slots,
        RING_MASK: ring_rows - 1,
        HEADROOM: room_needed,
        QUEUE + 2 * BY_PRODUCT + 1: slots,
        TIES: -1,
        STOP_P: geo[P],
        WHERE_LEN: len(where),
    }
    sections = sections + [  # the compiler's own, initialised by start_order
        (RING_AT, ring_rows * RECORD, None),
        (POS_AT, POSITION, None),
        (WHERE_AT, len(where), where),
        (TILE_AT, slots, None),
        (NEXT_AT, slots, None),
        (FREE_AT, 2 * slots, None),
        (EVICT_AT, len(evict), evict),
        (PENDING_AT, 2 * slots, None),  # the stores' slots, then the products they wait for
        (TIE_LOG_AT, 2 * LOG_PAIRS, None),
    ]
    st = assemble(HEADER, fields, sections, max(chunk_rows, 2 * room_needed))
    start_order(st)
    return st


@inline
def _initialise(st: np.ndarray) -> None:
    """Every slot free, no tile resident; the cell tables' offsets absolute."""
    for field in range(CELL_START_AT, FIRST_AT + 1):
        st[field] += st[TABLES_AT]
    if st[STRUCTURE] != STRIPS:  # the strips' records are absolute
        for field in range(ROW_START_AT, SIZES_AT + 1):
            st[field] += st[BANDS_AT]
    slots = st[SLOTS]
    st[st[POS_AT] : st[POS_AT] + POSITION] = 0
    st[st[TILE_AT] : st[TILE_AT] + slots] = -1
    st[st[NEXT_AT] : st[NEXT_AT] + slots] = st[NEVER]
    for s in range(slots):
        st[st[FREE_AT] + s] = s


@kernel
def start_order(st: np.ndarray) -> None:
    """Position the order's stream at its start and stream the first products."""
    _initialise(st)
    if st[STRUCTURE] == UNITS:
        start_units(st, st[POS_AT])
    st[GENERATED] = stream(st, 0, min(st[P], st[RING_MASK] + 1))


@callee
def run_general(st: np.ndarray) -> None:
    """Compile products into the chunk until it is nearly full or every product is done
    (st[DONE]); on failure st[FAILED_AT] is the product that found no room."""
    slots = st[SLOTS]
    where = st[st[WHERE_AT] : st[WHERE_AT] + st[WHERE_LEN]]
    tiles, nexts = st[st[TILE_AT] : st[TILE_AT] + slots], st[st[NEXT_AT] : st[NEXT_AT] + slots]
    free, queue = st[st[FREE_AT] : st[FREE_AT] + 2 * slots], st[QUEUE : QUEUE + 5]
    ev, pend, rows = (
        st[st[EVICT_AT] : st[PENDING_AT]],
        st[st[PENDING_AT] : st[PENDING_AT] + 2 * slots],
        st[st[OUT_AT] :],
    )
    p, total, lookahead, store_first, protect, never, delay = (
        st[NEXT_P],
        st[P],
        st[LOOKAHEAD],
        st[STORE_FIRST],
        st[PROTECT],
        st[NEVER],
        st[STORE_DELAY],
    )
    frontier, blocked, pending, out, generated = (
        st[FRONTIER],
        st[BLOCKED],
        st[PENDING],
        st[OUT],
        st[GENERATED],
    )
    last_start = st[CAPACITY] - st[HEADROOM]  # a product may start while the chunk has its headroom
    ring_at, mask, end = st[RING_AT], st[RING_MASK], st[END]
    stop = min(
        total, st[STOP_P]
    )  # a caller may stop the run at a product (the periodic timing's boundaries)
    while p < stop and out <= last_start:
        limit = min(p + 1 + lookahead, total)
        rec = ring_at + (p & mask) * RECORD
        if protect > 0 and frontier <= p:
            blocked = 0  # a demand load may evict what a prefetch could not
        if store_first == 1 and pending > 0:
            out, left = flush_stores(
                st, rows, out, where, tiles, nexts, free, queue, pend, pending, p - 1
            )
            blocked, pending = (0 if left < pending else blocked), left
        # the frontier runs, then again after the stores due by now, then (if the product still
        # waits for a slot) after every store still delayed
        for phase in range(3):
            if phase > 0:
                if pending == 0 or (phase == 2 and frontier > p):
                    break
                due = p - 1 if phase == 1 else ALL_DUE
                out, left = flush_stores(
                    st, rows, out, where, tiles, nexts, free, queue, pend, pending, due
                )
                blocked, pending = (0 if left < pending else blocked), left
            if frontier < limit and blocked == 0:
                out, frontier, blocked, generated = advance(
                    st,
                    rows,
                    out,
                    where,
                    tiles,
                    nexts,
                    free,
                    queue,
                    ev,
                    frontier,
                    limit,
                    p,
                    get(st, rec + KEY),
                    generated,
                )
        if frontier <= p:
            st[FAILED_AT], st[DONE] = p, 1
            st[LIVE] = _count(nexts, st[PINNED])
            break
        a, b, c = get(st, rec + A_ID), get(st, rec + B_ID), get(st, rec + C_ID)
        sa, sb, sc = find(where, a), find(where, b), find(where, c)
        out = emit(rows, out, MXU, sc, sa, sb, NONE, NONE, NONE)
        ahead = end if frontier >= total else get(st, ring_at + (frontier & mask) * RECORD + KEY)
        blocked = after_read(
            where,
            tiles,
            nexts,
            free,
            queue,
            ev,
            sa,
            a,
            get(st, rec + NEXT_A),
            never,
            ahead,
            blocked,
        )
        blocked = after_read(
            where,
            tiles,
            nexts,
            free,
            queue,
            ev,
            sb,
            b,
            get(st, rec + NEXT_B),
            never,
            ahead,
            blocked,
        )
        if get(st, rec + LAST) == 1:
            put(pend, pending, sc)
            put(pend, slots + pending, p + delay)
            pending += 1
        p += 1
    if p == total and out <= last_start:
        out, pending = flush_stores(
            st, rows, out, where, tiles, nexts, free, queue, pend, pending, ALL_DUE
        )
        st[DONE] = 1
    st[NEXT_P], st[FRONTIER], st[BLOCKED], st[PENDING], st[OUT], st[GENERATED] = (
        p,
        frontier,
        blocked,
        pending,
        out,
        generated,
    )


@inline
def _count(values: np.ndarray, value: int) -> int:
    found = 0
    for v in values:
        if v == value:
            found += 1
    return found


@kernel
def failed_product(st: np.ndarray) -> tuple[int, int, int]:
    """(i, j, k) of the product that found no room."""
    rec = st[RING_AT] + (st[FAILED_AT] & st[RING_MASK]) * RECORD
    return st[rec + I], st[rec + J], st[rec + K]
