"""The compiler's part of the periodic timing's state signature (compile.py's state at a unit's
boundary, taken relative to the unit); canon_restore.py rebuilds the state from it at another
boundary.

At a boundary the compiler is about to run product p, the unit's first. Its decisions depend on:
the frontier's distance from p and whether it is blocked; the finished accumulators waiting to be
stored, in order, each with the products it still waits (a store delay); the two queues of free
slots, in order; and per slot its tile, the tile's next use and whether it is an eviction
candidate. None depends on which slot is which, but one: an
eviction whose farthest next use is tied goes to the smaller slot, so the compiler logs those
choices (TIES, `ties`; tielog.py) and a period that had one counts only as far as relabelling the
slots keeps each choice (the same slot winning in each period). The signature
therefore numbers the slots in a canonical order (the free ones in queue order, then the others
by tile) and `order` says which slot has which number: two states with equal signatures are the
same up to relabelling slots. A tile is written relative to the unit's origin
(units.py): a row's operand as its row and k, a column's as its column and k, an accumulator as
its row and column. A next use before the unit's parent ends is written relative to the unit's
first key; one past it (a far key: used by a later block, band or strip) by its rank among the
far keys. The compiler compares keys only with keys (a prefetch's protection adds a fixed
distance, and far keys are farther than any key and protection a periodic stretch compares them
with), so ranks decide what values would.

Every resident operand's next use is its first use from p on (the compiler keeps it so), which
the order's structure gives from the tile alone: a far key is checked against it when the
signature is taken (a tile whose far use the structure does not know makes the signature
invalid: no jump from it) and computed from it when a state is rebuilt.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.compile_state import (
    BLOCKED,
    EVICT_AT,
    FREE_AT,
    FRONTIER,
    NEXT_AT,
    NEXT_P,
    PENDING,
    PENDING_AT,
    QUEUE,
    SLOTS,
    TIES,
    TILE_AT,
)
from simcore.ga1.engine.evict import BEST, GROUPS
from simcore.ga1.engine.jit import callee
from simcore.ga1.engine.plan import (
    FLIP,
    N_A,
    N_AB,
    REAL_KT,
    REAL_NT,
    STORE_DELAY,
)
from simcore.ga1.engine.rotate_units import MODULAR
from simcore.ga1.engine.units import (
    ACC,
    COL,
    ROW,
    Origin,
    far_key,
    far_next,
    origin,
    unit_start,
    units_back,
)

HEAD = 8  # frontier - p, blocked, pending stores, the two queues' lengths
PER_SLOT = 6  # role, two coordinates, what its next use is, the next use, whether a candidate
FREE, NEAR, FAR, PINNED_USE = 0, 1, 2, 3  # what a slot's next use is
BAD_TILE = -1
# restore's verdicts: rebuilt, or a far use the structure does not know, a tile outside the
# matrix, far uses that rank otherwise (each a flaw in the unit kinds, should one ever show)
REBUILT, UNKNOWN_USE, NO_TILE, OTHER_RANKS = 0, 1, 2, 3


def canon_length(slots: int) -> int:
    """The signature's length for `slots` slots: the header, the pending stores and a record per
    slot, in the canonical order."""
    return HEAD + slots + PER_SLOT * slots


def scratch_length(slots: int) -> int:
    return (PER_SLOT + 3) * slots + 2  # records, sort keys, the last numbering, far slots


@callee
def ties(st: np.ndarray) -> int:
    """Pairs logged so far of slots an eviction chose between by number (counted once
    start_counting_ties ran; tielog.py)."""
    return st[TIES]


def start_counting_ties(st: np.ndarray) -> None:
    st[TIES] = 0


@callee
def _frame_tile(st: np.ndarray, tile: int) -> tuple[int, int, int, int]:
    """(role, row or column, k or column, k) of a tile in the frame (record.py's FLIP)."""
    n_a, n_ab, kt, nt, flip = st[N_A], st[N_AB], st[REAL_KT], st[REAL_NT], st[FLIP]
    if tile < n_a:
        i, k = tile // kt, tile % kt
        return (COL if flip == 1 else ROW), i, k, k
    if tile < n_ab:
        k, j = (tile - n_a) // nt, (tile - n_a) % nt
        return (ROW if flip == 1 else COL), j, k, k
    i, j = (tile - n_ab) // nt, (tile - n_ab) % nt
    return (ACC, j, i, 0) if flip == 1 else (ACC, i, j, 0)


@callee
def tile_of(st: np.ndarray, role: int, first: int, second: int) -> int:
    """The tile of a frame role: (row, k), (column, k) or (row, column); -1 if out of range."""
    n_a, n_ab, kt, nt, flip = st[N_A], st[N_AB], st[REAL_KT], st[REAL_NT], st[FLIP]
    mt = n_a // kt
    frame_rows, frame_cols = (nt, mt) if flip == 1 else (mt, nt)
    if role == ACC:
        if first < 0 or first >= frame_rows or second < 0 or second >= frame_cols:
            return BAD_TILE
        return n_ab + (second * nt + first if flip == 1 else first * nt + second)
    extent = frame_rows if role == ROW else frame_cols
    if second < 0 or second >= kt or first < 0 or first >= extent:
        return BAD_TILE
    if (role == ROW) == (flip == 0):  # a real A tile (i, k)
        return first * kt + second
    return n_a + second * nt + first  # a real B tile (k, j)


@callee
def _relative_k(k: int, k0: int, mode: int, kt: int) -> int:
    if mode == MODULAR:
        return (k - k0) % kt
    return k if mode == 0 else (k - k0) * mode


@callee
def absolute_k(relative: int, k0: int, mode: int, kt: int) -> int:
    if mode == MODULAR:
        return (k0 + relative) % kt
    return relative if mode == 0 else k0 + relative * mode


@callee
def _rank_far(out: np.ndarray, slots: int, scratch: np.ndarray) -> None:
    """Replace each far next use by its rank among the distinct far next uses: sort the far
    slots' numbers by next use (insertion; scratch holds them), then rank in one pass."""
    count = 0
    for i in range(slots):
        at = HEAD + slots + PER_SLOT * i
        if out[at + 3] == FAR:
            value, place = out[at + 4], count
            while place > 0 and out[HEAD + slots + PER_SLOT * scratch[place - 1] + 4] > value:
                scratch[place] = scratch[place - 1]
                place -= 1
            scratch[place] = i
            count += 1
    rank, last = -1, -1
    for n in range(count):
        at = HEAD + slots + PER_SLOT * scratch[n] + 4
        if n == 0 or out[at] != last:
            rank, last = rank + 1, out[at]
        out[at] = rank


@callee
def _slot_record(
    st: np.ndarray,
    s: int,
    record: np.ndarray,
    at: int,
    origin_of: Origin,
    far: int,
    key0: int,
    numbers: int,
) -> int:
    """Slot s's record (role, coordinates, next use, candidate) at record[at:]; returns its sort
    key in the canonical order (role, then coordinates), -1 for a free slot."""
    record[at : at + PER_SLOT] = 0
    tile = st[st[TILE_AT] + s]
    if tile < 0:
        return -1
    row0, col0, columns, k0, mode = origin_of
    role, first, second, k = _frame_tile(st, tile)
    record[at] = role
    if role == ACC:
        record[at + 1], record[at + 2] = first - row0, (second - col0) * columns
        record[at + 3] = PINNED_USE
    else:
        record[at + 1] = first - row0 if role == ROW else (first - col0) * columns
        record[at + 2] = _relative_k(k, k0, mode, st[REAL_KT])
        use = st[st[NEXT_AT] + s]
        record[at + 5] = 1 if st[numbers + s] >= 0 else 0
        record[at + 3], record[at + 4] = (NEAR, use - key0) if use < far else (FAR, use)
    # coordinates are within +-2**20 (a frame of at most 65536 tiles a side): one sortable number
    return (record[at] << 42) | ((record[at + 1] + (1 << 20)) << 21) | (record[at + 2] + (1 << 20))


@callee
def _canonical_order(
    st: np.ndarray, slots: int, keys: np.ndarray, previous: np.ndarray, order: np.ndarray
) -> int:
    """order[i]: the slot numbered i (free slots in queue order, then the others by tile);
    returns how many slots it numbered."""
    count = 0
    for q in range(2):
        head, length = st[QUEUE + 2 * q], st[QUEUE + 2 * q + 1]
        for n in range(length):
            order[count] = st[st[FREE_AT] + q * slots + (head + n) % slots]
            count += 1
    free = count
    for n in range(slots):  # in the order of the last signature taken: nearly sorted already
        s = previous[n]
        if keys[s] >= 0:
            place, key = count, keys[s]
            while place > free and key < keys[order[place - 1]]:  # insertion sort by tile
                order[place] = order[place - 1]
                place -= 1
            order[place] = s
            count += 1
    return count  # every slot once, if every free slot is in a queue


@callee
def capture(
    st: np.ndarray,
    level: int,
    u0: int,
    u1: int,
    u2: int,
    out: np.ndarray,
    order: np.ndarray,
    scratch: np.ndarray,
) -> bool:
    """The signature of the compiler's state at the boundary of unit (u0, u1, u2) of `level` into
    out, and in order[i] the slot numbered i (order holds a numbering of the slots on entry, the
    last signature's: the sort starts from it); False if there is none (not at the boundary)."""
    slots = st[SLOTS]
    position, key0 = unit_start(st, u0, u1, u2)
    if position != st[NEXT_P]:
        return False
    far = far_key(st, level, u0, u1)
    origin_of = origin(st, level, u0, u1, u2)
    numbers = st[EVICT_AT] + BEST + 2 * st[st[EVICT_AT] + GROUPS]
    record, keys = scratch[: PER_SLOT * slots], scratch[PER_SLOT * slots : (PER_SLOT + 1) * slots]
    previous = scratch[(PER_SLOT + 1) * slots : (PER_SLOT + 2) * slots]
    for s in range(slots):
        keys[s] = _slot_record(st, s, record, PER_SLOT * s, origin_of, far, key0, numbers)
        previous[s] = order[s]
    if _canonical_order(st, slots, keys, previous, order) != slots:
        # a free slot outside the queues: no signature, and a numbering to start from
        for s in range(slots):
            order[s] = s
        return False
    label = keys  # the keys are not needed any more
    for i in range(slots):
        label[order[i]] = i
    out[0], out[1], out[2] = st[FRONTIER] - position, st[BLOCKED], st[PENDING]
    out[3], out[4], out[5], out[6], out[7] = st[QUEUE + 1], st[QUEUE + 3], 0, 0, 0
    for n in range(slots):
        out[HEAD + n] = -1
    for n in range(st[PENDING]):
        # a pending store as its slot's number and how long it still waits: it may go after
        # product p - 1 + wait, 0 <= wait <= the delay (stores due before p - 1 have gone)
        wait = st[st[PENDING_AT] + slots + n] - position + 1
        if wait < 0 or wait > st[STORE_DELAY]:
            return False
        out[HEAD + n] = label[st[st[PENDING_AT] + n]] + slots * wait
    for i in range(slots):
        for field in range(PER_SLOT):
            out[HEAD + slots + PER_SLOT * i + field] = record[PER_SLOT * order[i] + field]
    _rank_far(out, slots, scratch[(PER_SLOT + 2) * slots :])
    return True


@callee
def far_uses_known(st: np.ndarray, level: int, u0: int, u1: int, u2: int) -> int:
    """Whether the order's structure gives every far next use of the state at the boundary (as
    a rebuilt state needs): how many level-1 units back the far operands' blocks reach, or -1."""
    slots, back = st[SLOTS], 0
    far = far_key(st, level, u0, u1)
    for s in range(slots):
        tile, use = st[st[TILE_AT] + s], st[st[NEXT_AT] + s]
        if tile < 0:
            continue
        role, first, _second, k = _frame_tile(st, tile)
        if role == ACC or use < far:
            continue
        if far_next(st, level, u0, u1, role, first, k) != use:
            return -1
        back = max(back, units_back(st, level, u0, u1, role, first))
    return back
