"""The steps of the compiled compiler (compile.py): streaming the order into the ring (a kernel
of its own), and, inlined into the loop, emitting a row, the queues of free slots, taking a slot
for a load, advancing the DMA frontier, flushing the pending stores and freeing what a product
read last."""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.blocks import block_products
from simcore.ga1.engine.compile_state import (
    BY_PRODUCT,
    BY_STORE,
    POS_AT,
    RING_AT,
    RING_MASK,
    TIE_LOG_AT,
)
from simcore.ga1.engine.evict import (
    add,
    drop,
    farthest,
    log_ties,
)
from simcore.ga1.engine.jit import callee, get, inline, put
from simcore.ga1.engine.order import unit_products
from simcore.ga1.engine.plan import (
    N_AB,
    NEVER,
    PINNED,
    PROTECT,
    REAL_NT,
    STRUCTURE,
    UNITS,
    P,
)
from simcore.ga1.engine.record import (
    A_ID,
    B_ID,
    C_ID,
    KEY,
    RECORD,
    I,
    J,
    K,
)
from simcore.ga1.engine.tilemap import find, insert, remove
from simcore.ga1.program import LOAD, NONE, STORE, TENSOR_A, TENSOR_B, TENSOR_C, WIDTH, ZERO


@callee
def stream(st: np.ndarray, first: int, stop: int) -> int:
    """Stream the order further: the records of products first..stop-1 into the ring. Returns stop.
    (A kernel of its own: called once per batch, and compiled once, not into each caller.)"""
    ring_at, mask, pos = st[RING_AT], st[RING_MASK], st[POS_AT]
    if st[STRUCTURE] == UNITS:
        unit_products(st, pos, ring_at, mask, first, stop)
    else:
        block_products(st, pos, ring_at, mask, first, stop)
    return stop


@inline
def emit(
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
def queue_pop(free: np.ndarray, queue: np.ndarray, q: int) -> int:
    slots = free.shape[0] >> 1
    head = get(queue, 2 * q)
    s = get(free, q * slots + head)
    put(queue, 2 * q, head + 1 if head + 1 < slots else 0)
    put(queue, 2 * q + 1, get(queue, 2 * q + 1) - 1)
    return s


@inline
def queue_push(free: np.ndarray, queue: np.ndarray, q: int, s: int) -> None:
    slots = free.shape[0] >> 1
    end = get(queue, 2 * q) + get(queue, 2 * q + 1)
    put(free, q * slots + (end if end < slots else end - slots), s)
    put(queue, 2 * q + 1, get(queue, 2 * q + 1) + 1)


@inline
def take_slot(
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
        return queue_pop(free, queue, first)
    if get(queue, 2 * second + 1) > 0:
        return queue_pop(free, queue, second)
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
def advance(
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
            s = take_slot(st, free, queue, ev, nexts, tiles, where, horizon, operand < 2)
            if s < 0:
                return out, frontier, 1, generated
            insert(where, tile, s)
            put(tiles, s, tile)
            if operand < 2:
                put(nexts, s, key)
                out = emit(rows, out, LOAD, s, NONE, NONE, tensor, x, y)
            else:
                put(nexts, s, pinned)
                out = emit(rows, out, ZERO, s, NONE, NONE, NONE, NONE, NONE)
        frontier += 1
        if (
            frontier == generated and frontier < total
        ):  # the ring holds products p.. p + its length - 1
            generated = stream(st, frontier, min(total, p + mask + 1))
    return out, frontier, 0, generated


@callee
def flush_stores(
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
        out = emit(rows, out, STORE, s, NONE, NONE, TENSOR_C, c // nt, c % nt)
        remove(where, tile)
        put(tiles, s, -1)
        put(nexts, s, never)
        queue_push(free, queue, BY_STORE, s)
        ready += 1
    for n in range(ready, pending):
        put(pend, n - ready, get(pend, n))
        put(pend, slots + n - ready, get(pend, slots + n))
    return out, pending - ready


@inline
def after_read(
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
        queue_push(free, queue, BY_PRODUCT, s)
        return 0
    add(ev, s, nxt)
    return 0 if nxt >= frontier else blocked
