"""The compiler's eviction candidates: the operand slots whose next use a product set. The one to
evict has the farthest next use, then the smallest slot (the reference's heap of
(-next use, slot) orders them the same way).

The reference keeps a lazy heap and skips stale entries; its valid entries are exactly the
candidates here, so the choice is the reference's (a slot whose next use the frontier set
instead is not a candidate here: the reference may hold a stale entry for it that became valid
again, but that next use is inside the prefetch window, protected or not, and evicts nothing).

A candidate is one number, its next use shifted left past the slot bits, or'ed with the slot
counted down (MASK - slot): the largest number is the slot to evict, ties going to the smaller
slot, and a maximum over an array is a loop the compiler vectorises. Slots are grouped (GROUP
per group) and each group remembers its largest number. A product only pushes a candidate's next
use further, so an update compares with the group's best in constant time; removing a group's
best marks the group for a rescan, done when a slot must be evicted. Layout of the section `ev`:
the slot bits, the group count, then per group its best (-1: none) and whether it must be
rescanned, then per slot its number (-1: not a candidate).
"""

from __future__ import annotations

import functools

import numpy as np

from simcore.ga1.engine.jit import get, inline, put

BITS, GROUPS, BEST = 0, 1, 2
SHIFT = 6  # a group holds 2 ** SHIFT slots: one pass of a vector loop over a few registers


@functools.lru_cache(maxsize=64)
def candidates_section(slots: int) -> np.ndarray:
    """The initial layout: no candidates."""
    groups = -(-slots >> SHIFT)
    section = np.array(
        [slots.bit_length(), groups] + [-1] * groups + [0] * groups + [-1] * slots, dtype=np.int64
    )
    section.setflags(write=False)
    return section


def fits(slots: int, largest_key: int) -> bool:
    """Whether a candidate's number holds next uses up to `largest_key` with `slots` slots."""
    return largest_key < 1 << (62 - slots.bit_length())


@inline
def add(ev: np.ndarray, s: int, nxt: int) -> None:
    """Slot s is a candidate with next use nxt, at least as far as before."""
    bits, groups = get(ev, BITS), get(ev, GROUPS)
    value = (nxt << bits) | (((1 << bits) - 1) - s)
    put(ev, BEST + 2 * groups + s, value)
    best = BEST + (s >> SHIFT)
    if get(ev, best + groups) == 0 and value > get(ev, best):
        put(ev, best, value)


@inline
def drop(ev: np.ndarray, s: int) -> None:
    """Slot s is no longer a candidate."""
    groups = get(ev, GROUPS)
    at = BEST + 2 * groups + s
    value = get(ev, at)
    if value >= 0:
        put(ev, at, -1)
        best = BEST + (s >> SHIFT)
        if get(ev, best) == value:
            put(ev, best + groups, 1)  # rescan when needed


@inline
def _largest(ev: np.ndarray, start: int, stop: int) -> int:
    largest = -1
    for at in range(start, stop):
        largest = max(largest, get(ev, at))
    return largest


@inline
def farthest(ev: np.ndarray, slots: int) -> int:
    """The candidate to evict first, or -1 when there is none."""
    bits, groups = get(ev, BITS), get(ev, GROUPS)
    numbers = BEST + 2 * groups
    for g in range(groups):
        if get(ev, BEST + groups + g) == 1:  # find the group's best candidate again
            put(
                ev,
                BEST + g,
                _largest(ev, numbers + (g << SHIFT), numbers + min((g + 1) << SHIFT, slots)),
            )
            put(ev, BEST + groups + g, 0)
    best = _largest(ev, BEST, BEST + groups)
    if best < 0:
        return -1
    return ((1 << bits) - 1) - (best & ((1 << bits) - 1))


@inline
def tied(ev: np.ndarray, slots: int, best: int) -> bool:
    """Whether another candidate's next use is the same as slot best's (the choice between them
    then falls to the smaller slot: the one decision of the compiler that depends on slot numbers,
    which the periodic timing must see)."""
    bits, groups = get(ev, BITS), get(ev, GROUPS)
    numbers = BEST + 2 * groups
    use = get(ev, numbers + best) >> bits
    for s in range(slots):
        value = get(ev, numbers + s)
        if s != best and value >= 0 and value >> bits == use:
            return True
    return False
