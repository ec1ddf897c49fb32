"""The general generator's compiler, compiled: simcore/ga1/generator/compile.py's algorithm,
decision for decision, over a streamed product order (order.py), emitting program rows in
chunks.

The reference holds the whole order and its next-use arrays; here a ring holds only the products
between the matrix unit's position p and the DMA frontier (at most `lookahead` + 2), each with
the keys of its tiles' next uses. Eviction candidates (evict.py) are what the reference's lazy
heap holds valid.

The plan, the compiler's state and the output chunk are one flat array `st` (rows.py), so a run
can stop when its chunk is full and resume where it stopped.
"""
from __future__ import annotations

import numpy as np

from simcore.ga1.engine.evict import add, candidates_section, drop, farthest
from simcore.ga1.engine.jit import inline, kernel
from simcore.ga1.engine.rows import DONE, assemble, emit, room
from simcore.ga1.engine.order import (
    A_ID, B_ID, C_ID, I, J, K, KEY, LAST, NEXT_A, NEXT_B, POSITION, RECORD, block_product, start_block, start_units,
    unit_product,
)
from simcore.ga1.engine.plan import (
    END, LOOKAHEAD, N_AB, N_TILES, NEVER, P, PINNED, PLAN_END, REAL_NT, STORE_FIRST, STRUCTURE, UNITS,
    general_plan,
)
from simcore.ga1.generator.order import GeneralParams
from simcore.ga1.machine import Machine
from simcore.ga1.program import LOAD, MXU, NONE, STORE, ZERO
from simcore.shape import Shape

_TENSOR_A, _TENSOR_B, _TENSOR_C = 0, 1, 2
(FRONTIER, BLOCKED, GENERATED, PENDING, FAILED_AT, LIVE, NEXT_P, SLOTS, RING_ROWS, HEADROOM,
 RING_AT, POS_AT, WHERE_AT, TILE_AT, NEXT_AT, FREE_AT, EVICT_AT, PENDING_AT,
 HEAD, COUNT) = range(PLAN_END, PLAN_END + 20)
# Two queues of free slots, q = 0: slots freed by a product's last read, q = 1: freed by a store;
# queue q's first entry and length are at HEAD + 2 q and COUNT + 2 q.
BY_PRODUCT, BY_STORE = 0, 1
HEADER = PLAN_END + 22


def headroom(slots: int, lookahead: int) -> int:
    """Rows one resumption emits at most: the stores of every slot twice, and three rows for each
    product the frontier passes."""
    return 2 * slots + 3 * (lookahead + 2) + 2


def new_state(shape: Shape, machine: Machine, params: GeneralParams, chunk_rows: int) -> np.ndarray:
    """The generator at product 0, every slot free, with room for `chunk_rows` rows (at least
    twice the headroom)."""
    geo, sections = general_plan(shape, machine, params)
    # the ring holds products p..frontier (at most lookahead + 2); a power of two, indexed by a mask
    slots, ring_rows, room_needed = machine.slots, 1 << (params.lookahead + 3).bit_length(), headroom(machine.slots, params.lookahead)
    evict = candidates_section(slots)
    fields = {**geo, FAILED_AT: -1, SLOTS: slots, RING_ROWS: ring_rows, HEADROOM: room_needed,
              COUNT + 2 * BY_PRODUCT: slots}
    sections = sections + [
        (RING_AT, ring_rows * RECORD, 0), (POS_AT, POSITION, 0), (WHERE_AT, geo[N_TILES], -1), (TILE_AT, slots, -1),
        (NEXT_AT, slots, geo[NEVER]), (FREE_AT, 2 * slots, np.concatenate([np.arange(slots), np.zeros(slots, dtype=np.int64)])),
        (EVICT_AT, len(evict), evict), (PENDING_AT, slots, 0)]
    return assemble(HEADER, fields, sections, max(chunk_rows, 2 * room_needed))


@inline
def _queue_pop(st: np.ndarray, q: int) -> int:
    head = st[HEAD + 2 * q]
    s = st[st[FREE_AT] + q * st[SLOTS] + head]
    st[HEAD + 2 * q] = head + 1 if head + 1 < st[SLOTS] else 0
    st[COUNT + 2 * q] -= 1
    return s


@inline
def _queue_push(st: np.ndarray, q: int, s: int) -> None:
    end = st[HEAD + 2 * q] + st[COUNT + 2 * q]
    st[st[FREE_AT] + q * st[SLOTS] + (end if end < st[SLOTS] else end - st[SLOTS])] = s
    st[COUNT + 2 * q] += 1


@inline
def _take_slot(st: np.ndarray, horizon: int, for_load: bool) -> int:
    """A slot to write now: a free one, else evict the operand used farthest after `horizon`."""
    first, second = (BY_STORE, BY_PRODUCT) if for_load else (BY_PRODUCT, BY_STORE)
    if st[COUNT + 2 * first] > 0:
        return _queue_pop(st, first)
    if st[COUNT + 2 * second] > 0:
        return _queue_pop(st, second)
    best = farthest(st, st[EVICT_AT], st[NEXT_AT], st[SLOTS])
    if best < 0 or st[st[NEXT_AT] + best] <= horizon:
        return -1  # the farthest next use is inside the prefetch window: nothing to evict
    drop(st, st[EVICT_AT], best)
    st[st[WHERE_AT] + st[st[TILE_AT] + best]] = -1
    st[st[TILE_AT] + best] = -1
    return best


@kernel
def _generate(st: np.ndarray) -> None:
    """Stream the order one product further (into the ring)."""
    rec = st[RING_AT] + (st[GENERATED] & (st[RING_ROWS] - 1)) * RECORD
    if st[STRUCTURE] == UNITS:
        unit_product(st, st[POS_AT], rec)
    else:
        block_product(st, st[POS_AT], rec)
    st[GENERATED] += 1


@inline
def _record(st: np.ndarray, q: int) -> int:
    """Where product q's record is (the order is streamed up to the frontier's product)."""
    return st[RING_AT] + (q & (st[RING_ROWS] - 1)) * RECORD


@inline
def _frontier_key(st: np.ndarray) -> int:
    q = st[FRONTIER]
    return st[END] if q >= st[P] else st[_record(st, q) + KEY]


@inline
def _resident(st: np.ndarray, tile: int, key: int, tensor: int, x: int, y: int) -> bool:
    """Make operand tile (tensor, x, y) resident for the product with `key`; False when no slot
    is free."""
    where, tiles, nexts = st[WHERE_AT], st[TILE_AT], st[NEXT_AT]
    s = st[where + tile]
    if s >= 0:
        if st[nexts + s] > key:
            st[nexts + s] = key
            drop(st, st[EVICT_AT], s)  # a candidate again after its next product
        return True
    s = _take_slot(st, key, True)
    if s < 0:
        return False
    st[where + tile], st[tiles + s], st[nexts + s] = s, tile, key
    emit(st, LOAD, s, NONE, NONE, tensor, x, y)
    return True


@inline
def _advance(st: np.ndarray, limit: int) -> None:
    """The DMA frontier: make the tiles of products up to `limit` resident, in order."""
    while st[FRONTIER] < limit and st[BLOCKED] == 0:
        rec = _record(st, st[FRONTIER])
        key = st[rec + KEY]
        i, j, k = st[rec + I], st[rec + J], st[rec + K]
        if (not _resident(st, st[rec + A_ID], key, _TENSOR_A, i, k)
                or not _resident(st, st[rec + B_ID], key, _TENSOR_B, k, j)):
            st[BLOCKED] = 1
            return
        c = st[rec + C_ID]
        if st[st[WHERE_AT] + c] < 0:
            s = _take_slot(st, key, False)
            if s < 0:
                st[BLOCKED] = 1
                return
            st[st[WHERE_AT] + c], st[st[TILE_AT] + s], st[st[NEXT_AT] + s] = s, c, st[PINNED]
            emit(st, ZERO, s, NONE, NONE, NONE, NONE, NONE)
        st[FRONTIER] += 1
        if st[FRONTIER] < st[P]:
            _generate(st)


@kernel
def _flush_stores(st: np.ndarray) -> None:
    for n in range(st[PENDING]):
        s = st[st[PENDING_AT] + n]
        tile = st[st[TILE_AT] + s]
        c = tile - st[N_AB]
        emit(st, STORE, s, NONE, NONE, _TENSOR_C, c // st[REAL_NT], c % st[REAL_NT])
        st[st[WHERE_AT] + tile] = -1
        st[st[TILE_AT] + s] = -1
        st[st[NEXT_AT] + s] = st[NEVER]
        _queue_push(st, BY_STORE, s)
    if st[PENDING] > 0:
        st[BLOCKED] = 0
        st[PENDING] = 0


@inline
def _after_read(st: np.ndarray, s: int, tile: int, nxt: int, frontier: int) -> None:
    """An operand's next use moves on; a tile never used again frees its slot now (`frontier`:
    the key of the frontier's product)."""
    st[st[NEXT_AT] + s] = nxt
    if nxt == st[NEVER]:
        drop(st, st[EVICT_AT], s)
        st[st[WHERE_AT] + tile] = -1
        st[st[TILE_AT] + s] = -1
        _queue_push(st, BY_PRODUCT, s)
        st[BLOCKED] = 0
    else:
        add(st, st[EVICT_AT], st[NEXT_AT], s)
        if nxt >= frontier:
            st[BLOCKED] = 0


@kernel
def _product(st: np.ndarray, p: int) -> bool:
    """Everything due at product p, then the product itself; False if it found no room."""
    limit = min(p + 1 + st[LOOKAHEAD], st[P])
    if st[STORE_FIRST] == 1 and st[PENDING] > 0:
        _flush_stores(st)
    if st[FRONTIER] < limit and st[BLOCKED] == 0:
        _advance(st, limit)
    if st[PENDING] > 0:
        _flush_stores(st)
        if st[FRONTIER] < limit:
            _advance(st, limit)
    if st[FRONTIER] <= p:
        return False
    rec = _record(st, p)
    where = st[WHERE_AT]
    sa, sb, sc = st[where + st[rec + A_ID]], st[where + st[rec + B_ID]], st[where + st[rec + C_ID]]
    emit(st, MXU, sc, sa, sb, NONE, NONE, NONE)
    frontier = _frontier_key(st)  # the frontier stays put until the next product
    _after_read(st, sa, st[rec + A_ID], st[rec + NEXT_A], frontier)
    _after_read(st, sb, st[rec + B_ID], st[rec + NEXT_B], frontier)
    if st[rec + LAST] == 1:
        st[st[PENDING_AT] + st[PENDING]] = sc
        st[PENDING] += 1
    return True


@kernel
def _count(st: np.ndarray, at: int, n: int, value: int) -> int:
    found = 0
    for i in range(n):
        if st[at + i] == value:
            found += 1
    return found


@kernel
def run_general(st: np.ndarray) -> None:
    """Compile products into the chunk until it is nearly full or every product is done
    (st[DONE]); on failure st[FAILED_AT] is the product that found no room."""
    if st[GENERATED] == 0:  # the first product's record: later ones follow the frontier
        if st[STRUCTURE] == UNITS:
            start_units(st, st[POS_AT])
        else:
            start_block(st, st[POS_AT], 0)
        _generate(st)
    p = st[NEXT_P]
    while p < st[P]:
        if not room(st, st[HEADROOM]):
            st[NEXT_P] = p
            return
        if not _product(st, p):
            st[FAILED_AT] = p
            st[LIVE] = _count(st, st[NEXT_AT], st[SLOTS], st[PINNED])
            st[DONE] = 1
            return
        p += 1
    st[NEXT_P] = p
    if not room(st, st[HEADROOM]):
        return
    _flush_stores(st)
    st[DONE] = 1


@kernel
def failed_product(st: np.ndarray) -> tuple[int, int, int]:
    """(i, j, k) of the product that found no room."""
    rec = _record(st, st[FAILED_AT])
    return st[rec + I], st[rec + J], st[rec + K]
