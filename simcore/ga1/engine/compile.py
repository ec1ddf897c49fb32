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

from simcore.ga1.engine.blocks import block_products
from simcore.ga1.engine.evict import (
    LOG_PAIRS,
    add,
    candidates_section,
    drop,
    farthest,
    fits,
    log_ties,
)
from simcore.ga1.engine.jit import get, inline, kernel, put
from simcore.ga1.engine.order import start_units, unit_products
from simcore.ga1.engine.plan import (
    BANDS_AT,
    CELL_START_AT,
    END,
    FIRST_AT,
    LOOKAHEAD,
    N_AB,
    N_TILES,
    NEVER,
    PINNED,
    PLAN_END,
    PROTECT,
    REAL_NT,
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
from simcore.ga1.engine.tilemap import find, insert, remove, section
from simcore.ga1.program import LOAD, MXU, NONE, STORE, TENSOR_A, TENSOR_B, TENSOR_C, WIDTH, ZERO
from simcore.ga1.schedules import ScheduleError

(
    FRONTIER,
    BLOCKED,
    PENDING,
    GENERATED,
    FAILED_AT,
    LIVE,
    NEXT_P,
    SLOTS,
    RING_MASK,
    HEADROOM,
    RING_AT,
    POS_AT,
    WHERE_AT,
    TILE_AT,
    NEXT_AT,
    FREE_AT,
    EVICT_AT,
    PENDING_AT,
    STOP_P,
    WHERE_LEN,
    QUEUE,
) = range(PLAN_END, PLAN_END + 21)
# Two queues of free slots, q = 0: slots freed by a product's last read, q = 1: freed by a store;
# queue q's first entry and length are at QUEUE + 2 q and QUEUE + 2 q + 1. QUEUE + 4 counts the
# pairs of slots an eviction chose between by slot number alone (-1: not counted; the periodic
# timing counts them), logged in the ring at TIE_LOG_AT (evict.py's log_ties).
BY_PRODUCT, BY_STORE = 0, 1
TIES = QUEUE + 4
TIE_LOG_AT = QUEUE + 5
HEADER = QUEUE + 6
BATCH = 32  # products the order streams ahead at a time, at least
ALL_DUE = 1 << 62  # a product after which every pending store may go


def headroom(slots: int, lookahead: int) -> int:
    """Rows one product emits at most: the stores of every slot twice, and three rows for each
    product the frontier passes."""
    return 2 * slots + 3 * (lookahead + 2) + 2


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
def _stream(st: np.ndarray, first: int, stop: int) -> int:
    """Stream the order further: the records of products first..stop-1 into the ring. Returns stop.
    (A kernel of its own: called once per batch, and compiled once, not into each caller.)"""
    ring_at, mask, pos = st[RING_AT], st[RING_MASK], st[POS_AT]
    if st[STRUCTURE] == UNITS:
        unit_products(st, pos, ring_at, mask, first, stop)
    else:
        block_products(st, pos, ring_at, mask, first, stop)
    return stop


@kernel
def start_order(st: np.ndarray) -> None:
    """Position the order's stream at its start and stream the first products."""
    _initialise(st)
    if st[STRUCTURE] == UNITS:
        start_units(st, st[POS_AT])
    st[GENERATED] = _stream(st, 0, min(st[P], st[RING_MASK] + 1))


@inline
def _emit(
    rows: np.ndarray, out: int, op: int, s0: int, s1: int, s2: int, t: int, x: int, y: int
) -> int:
    at = WIDTH * out
    put(rows, at, op)
    put(rows, at + 1, NONE)
    put(rows, at + 2, s0)
    put(rows, at + 3, s1)
    put(rows, at + 4, s2)
    put(rows, at + 5, t)
    put(rows, at + 6, x)
    put(rows, at + 7, y)
    return out + 1


@inline
def _queue_pop(free: np.ndarray, queue: np.ndarray, q: int) -> int:
    slots = free.shape[0] >> 1
    head = get(queue, 2 * q)
    s = get(free, q * slots + head)
    put(queue, 2 * q, head + 1 if head + 1 < slots else 0)
    put(queue, 2 * q + 1, get(queue, 2 * q + 1) - 1)
    return s


@inline
def _queue_push(free: np.ndarray, queue: np.ndarray, q: int, s: int) -> None:
    slots = free.shape[0] >> 1
    end = get(queue, 2 * q) + get(queue, 2 * q + 1)
    put(free, q * slots + (end if end < slots else end - slots), s)
    put(queue, 2 * q + 1, get(queue, 2 * q + 1) + 1)


@inline
def _take_slot(
    st: np.ndarray,
    free: np.ndarray,
    queue: np.ndarray,
    ev: np.ndarray,
    nexts: np.ndarray,
    tiles: np.ndarray,
    where: np.ndarray,
    horizon: int,
    for_load: bool,
) -> int:
    """A slot to write now: a free one, else evict the operand used farthest after `horizon`."""
    first, second = (BY_STORE, BY_PRODUCT) if for_load else (BY_PRODUCT, BY_STORE)
    if get(queue, 2 * first + 1) > 0:
        return _queue_pop(free, queue, first)
    if get(queue, 2 * second + 1) > 0:
        return _queue_pop(free, queue, second)
    best = farthest(ev, tiles.shape[0])
    if best < 0 or get(nexts, best) <= horizon:
        return (
            -1
        )  # the farthest next use is inside the (protected) prefetch window: nothing to evict
    if get(queue, 4) >= 0:
        put(queue, 4, log_ties(ev, tiles.shape[0], best, st, get(st, TIE_LOG_AT), get(queue, 4)))
    drop(ev, best)
    remove(where, get(tiles, best))
    put(tiles, best, -1)
    return best


@inline
def _advance(
    st: np.ndarray,
    rows: np.ndarray,
    out: int,
    where: np.ndarray,
    tiles: np.ndarray,
    nexts: np.ndarray,
    free: np.ndarray,
    queue: np.ndarray,
    ev: np.ndarray,
    frontier: int,
    limit: int,
    p: int,
    current: int,
    generated: int,
) -> tuple[int, int, int, int]:
    """The DMA frontier: make the tiles of products up to `limit` resident, in order (a load or
    zero for each tile not resident); product p (key `current`) is the matrix unit's next.
    Returns (rows emitted, frontier, blocked: no slot found, products streamed)."""
    protect, total, pinned, ring_at, mask = (
        st[PROTECT],
        st[P],
        st[PINNED],
        st[RING_AT],
        st[RING_MASK],
    )
    while frontier < limit:
        rec = ring_at + (frontier & mask) * RECORD
        key = get(st, rec + KEY)
        horizon = key + protect if key > current else key  # a prefetch spares `protect` more
        for operand in range(3):  # A, B, then C's accumulator
            if operand == 0:
                tile, tensor, x, y = (
                    get(st, rec + A_ID),
                    TENSOR_A,
                    get(st, rec + I),
                    get(st, rec + K),
                )
            elif operand == 1:
                tile, tensor, x, y = (
                    get(st, rec + B_ID),
                    TENSOR_B,
                    get(st, rec + K),
                    get(st, rec + J),
                )
            else:
                tile, tensor, x, y = get(st, rec + C_ID), NONE, NONE, NONE
            s = find(where, tile)
            if s >= 0:
                if operand < 2 and get(nexts, s) > key:
                    put(nexts, s, key)
                    drop(ev, s)  # a candidate again after its next product
                continue
            s = _take_slot(st, free, queue, ev, nexts, tiles, where, horizon, operand < 2)
            if s < 0:
                return out, frontier, 1, generated
            insert(where, tile, s)
            put(tiles, s, tile)
            if operand < 2:
                put(nexts, s, key)
                out = _emit(rows, out, LOAD, s, NONE, NONE, tensor, x, y)
            else:
                put(nexts, s, pinned)
                out = _emit(rows, out, ZERO, s, NONE, NONE, NONE, NONE, NONE)
        frontier += 1
        if (
            frontier == generated and frontier < total
        ):  # the ring holds products p.. p + its length - 1
            generated = _stream(st, frontier, min(total, p + mask + 1))
    return out, frontier, 0, generated


@kernel
def _flush_stores(
    st: np.ndarray,
    rows: np.ndarray,
    out: int,
    where: np.ndarray,
    tiles: np.ndarray,
    nexts: np.ndarray,
    free: np.ndarray,
    queue: np.ndarray,
    pend: np.ndarray,
    pending: int,
    due: int,
) -> tuple[int, int]:
    """Store the finished accumulators that may be stored after product `due`, in finishing
    order (their products come in that order too); returns the rows emitted and the stores left
    pending. (A kernel of its own: called once per finished block of accumulators, and compiled
    once.)"""
    nt, n_ab, never = st[REAL_NT], st[N_AB], st[NEVER]
    slots = pend.shape[0] >> 1
    ready = 0
    while ready < pending and get(pend, slots + ready) <= due:
        s = get(pend, ready)
        tile = get(tiles, s)
        c = tile - n_ab
        out = _emit(rows, out, STORE, s, NONE, NONE, TENSOR_C, c // nt, c % nt)
        remove(where, tile)
        put(tiles, s, -1)
        put(nexts, s, never)
        _queue_push(free, queue, BY_STORE, s)
        ready += 1
    for n in range(ready, pending):
        put(pend, n - ready, get(pend, n))
        put(pend, slots + n - ready, get(pend, slots + n))
    return out, pending - ready


@inline
def _after_read(
    where: np.ndarray,
    tiles: np.ndarray,
    nexts: np.ndarray,
    free: np.ndarray,
    queue: np.ndarray,
    ev: np.ndarray,
    s: int,
    tile: int,
    nxt: int,
    never: int,
    frontier: int,
    blocked: int,
) -> int:
    """An operand's next use moves on; a tile never used again frees its slot now (`frontier`:
    the key of the frontier's product). Returns whether the frontier stays blocked."""
    put(nexts, s, nxt)
    if nxt == never:
        drop(ev, s)
        remove(where, tile)
        put(tiles, s, -1)
        _queue_push(free, queue, BY_PRODUCT, s)
        return 0
    add(ev, s, nxt)
    return 0 if nxt >= frontier else blocked


@kernel
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
            out, left = _flush_stores(
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
                out, left = _flush_stores(
                    st, rows, out, where, tiles, nexts, free, queue, pend, pending, due
                )
                blocked, pending = (0 if left < pending else blocked), left
            if frontier < limit and blocked == 0:
                out, frontier, blocked, generated = _advance(
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
        out = _emit(rows, out, MXU, sc, sa, sb, NONE, NONE, NONE)
        ahead = end if frontier >= total else get(st, ring_at + (frontier & mask) * RECORD + KEY)
        blocked = _after_read(
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
        blocked = _after_read(
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
        out, pending = _flush_stores(
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
