"""The compiler's state rebuilt from a signature (canon.py) at another unit boundary of the same
kind: the slots' tiles and next uses, the pending stores, the free queues and the order's stream
positioned at the unit's first product."""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.blocks import (
    POS_B,
    POS_CELL,
    POS_IN_STRIP,
    POS_S,
    POS_STRIP,
    block_products,
)
from simcore.ga1.engine.canon import (
    FAR,
    FREE,
    HEAD,
    NEAR,
    NO_TILE,
    OTHER_RANKS,
    PER_SLOT,
    REBUILT,
    UNKNOWN_USE,
    absolute_k,
    tile_of,
)
from simcore.ga1.engine.compile_state import (
    BLOCKED,
    EVICT_AT,
    FREE_AT,
    FRONTIER,
    GENERATED,
    NEXT_AT,
    NEXT_P,
    PENDING,
    PENDING_AT,
    POS_AT,
    QUEUE,
    RING_AT,
    RING_MASK,
    SLOTS,
    TILE_AT,
    WHERE_AT,
    WHERE_LEN,
)
from simcore.ga1.engine.evict import BEST, GROUPS, add
from simcore.ga1.engine.jit import callee
from simcore.ga1.engine.order import POS_HI as UNIT_HI
from simcore.ga1.engine.order import _enter_step, _first_live, unit_products
from simcore.ga1.engine.plan import N_CB, NEVER, PINNED, REAL_KT, STRIPS, STRUCTURE, UNITS, P
from simcore.ga1.engine.rotate_units import stretch_start
from simcore.ga1.engine.rows import DONE, OUT
from simcore.ga1.engine.strip_order import S_FIRST_BLOCK, STRIP_FIELDS, STRIPS_AT
from simcore.ga1.engine.tilemap import insert, remove
from simcore.ga1.engine.units import ACC, ROW, far_key, far_next, origin, unit_start


@callee
def _clear(st: np.ndarray, slots: int) -> None:
    """No tile resident, no eviction candidate."""
    where = st[st[WHERE_AT] : st[WHERE_AT] + st[WHERE_LEN]]
    for s in range(slots):
        tile = st[st[TILE_AT] + s]
        if tile >= 0:
            remove(where, tile)
    ev = st[EVICT_AT]
    groups = st[ev + GROUPS]
    for g in range(groups):
        st[ev + BEST + g], st[ev + BEST + groups + g] = -1, 0
    st[ev + BEST + 2 * groups : ev + BEST + 2 * groups + slots] = -1


@callee
def _restore_slots(
    st: np.ndarray,
    level: int,
    u0: int,
    u1: int,
    u2: int,
    canon: np.ndarray,
    slot_of: np.ndarray,
    key0: int,
) -> int:
    slots = st[SLOTS]
    row0, col0, columns, k0, mode = origin(st, level, u0, u1, u2)
    far = far_key(st, level, u0, u1)
    where = st[st[WHERE_AT] : st[WHERE_AT] + st[WHERE_LEN]]
    ev = st[st[EVICT_AT] : st[PENDING_AT]]
    for i in range(slots):
        at, s = HEAD + slots + PER_SLOT * i, slot_of[i]
        role, use, tile = canon[at], st[NEVER], -1
        if role == ACC:
            tile = tile_of(st, ACC, canon[at + 1] + row0, col0 + canon[at + 2] * columns)
            use = st[PINNED]
        elif role != FREE:
            first = canon[at + 1] + row0 if role == ROW else col0 + canon[at + 1] * columns
            k = absolute_k(canon[at + 2], k0, mode, st[REAL_KT])
            tile = tile_of(st, role, first, k)
            if canon[at + 3] == NEAR:
                use = key0 + canon[at + 4]
            else:
                use = far_next(st, level, u0, u1, role, first, k)
            if use < 0 or (canon[at + 3] == FAR) != (use >= far):
                return UNKNOWN_USE
        if role != FREE:
            if tile < 0:
                return NO_TILE
            insert(where, tile, s)
        st[st[TILE_AT] + s], st[st[NEXT_AT] + s] = tile, use
        if canon[at + 5] == 1:
            add(ev, s, use)
    return REBUILT


@callee
def _same_ranks(st: np.ndarray, canon: np.ndarray, slot_of: np.ndarray, slots: int) -> bool:
    """Whether the far next uses rebuilt rank as the signature says (the order's structure
    promises it; a mismatch would be a flaw in the unit kinds)."""
    for i in range(slots):
        at = HEAD + slots + PER_SLOT * i
        if canon[at + 3] != FAR:
            continue
        for j in range(slots):
            other = HEAD + slots + PER_SLOT * j
            if canon[other + 3] != FAR:
                continue
            a, b = st[st[NEXT_AT] + slot_of[i]], st[st[NEXT_AT] + slot_of[j]]
            x, y = canon[at + 4], canon[other + 4]
            if (a < b) != (x < y) or (a == b) != (x == y):
                return False
    return True


@callee
def _position_stream(st: np.ndarray, u0: int, u1: int, u2: int, position: int) -> None:
    """The order's stream at the unit's first product, and the ring streamed from it."""
    pos, ring_at, mask = st[POS_AT], st[RING_AT], st[RING_MASK]
    stop = min(st[P], position + mask + 1)
    if st[STRUCTURE] == UNITS:
        t = stretch_start(st, u0, u2)
        st[pos + UNIT_HI] = _first_live(st, t) - 1  # the step's entering units are found from there
        _enter_step(st, pos, t)
        unit_products(st, pos, ring_at, mask, position, stop)
    else:
        if st[STRUCTURE] == STRIPS:
            st[pos + POS_B] = st[st[STRIPS_AT] + u0 * STRIP_FIELDS + S_FIRST_BLOCK] + u1
        else:
            st[pos + POS_B] = u0 * st[N_CB] + u1
        st[pos + POS_S], st[pos + POS_CELL] = u2, 0
        strip = st[STRUCTURE] == STRIPS
        st[pos + POS_STRIP], st[pos + POS_IN_STRIP] = (u0, u1) if strip else (0, 0)
        block_products(st, pos, ring_at, mask, position, stop)
    st[GENERATED] = stop


@callee
def restore(
    st: np.ndarray, level: int, u0: int, u1: int, u2: int, canon: np.ndarray, slot_of: np.ndarray
) -> int:
    """The compiler's state at the boundary of unit (u0, u1, u2) of `level` from a signature
    taken at another boundary of the same kind, slot_of[i] holding what the signature numbers i.
    Returns REBUILT, or why it cannot be rebuilt."""
    slots = st[SLOTS]
    position, key0 = unit_start(st, u0, u1, u2)
    _clear(st, slots)
    rebuilt = _restore_slots(st, level, u0, u1, u2, canon, slot_of, key0)
    if rebuilt != REBUILT:
        return rebuilt
    if not _same_ranks(st, canon, slot_of, slots):
        return OTHER_RANKS
    st[NEXT_P], st[FRONTIER] = position, position + canon[0]
    st[BLOCKED], st[PENDING] = canon[1], canon[2]
    for n in range(canon[2]):
        wait, number = divmod(canon[HEAD + n], slots)
        st[st[PENDING_AT] + n] = slot_of[number]
        st[st[PENDING_AT] + slots + n] = position - 1 + wait
    count = 0
    for q in range(2):
        st[QUEUE + 2 * q], st[QUEUE + 2 * q + 1] = 0, canon[3 + q]
        for n in range(canon[3 + q]):
            st[st[FREE_AT] + q * slots + n] = slot_of[count]
            count += 1
    _position_stream(st, u0, u1, u2, position)
    st[OUT], st[DONE] = 0, 0
    return REBUILT
