"""The compiler's eviction candidates: the operand slots whose next use a product set. The one to
evict has the farthest next use, then the smallest slot (the reference's heap of
(-next use, slot) orders them the same way).

The reference keeps a lazy heap and skips stale entries; its valid entries are exactly the
candidates here, so the choice is the reference's (a slot whose next use the frontier set
instead is not a candidate here: the reference may hold a stale entry for it that became valid
again, but that next use is inside the prefetch window and evicts nothing).

Slots are grouped (a power of two near sqrt(slots) per group) and each group remembers its best candidate. A
product only pushes a candidate's next use further, so an update compares with the group's best
in constant time; removing a group's best marks the group for a rescan, done when a slot must be
evicted. Layout in the generator's state from `at`: group size, group count, then per group its
best slot (-1: none) and whether it must be rescanned, then per slot whether it is a candidate.
"""
from __future__ import annotations

import math

import numpy as np

from simcore.ga1.engine.jit import inline, kernel

SHIFT, GROUPS, BEST = 0, 1, 2  # a group holds 2 ** SHIFT slots


def candidates_section(slots: int) -> np.ndarray:
    """The initial layout: no candidates."""
    shift = max(3, (math.isqrt(slots) - 1).bit_length())
    groups = -(-slots >> shift)
    return np.array([shift, groups] + [-1] * groups + [0] * groups + [0] * slots, dtype=np.int64)


@inline
def _before(st: np.ndarray, nexts: int, a: int, b: int) -> bool:
    """Slot a is evicted before slot b (b may be -1: none)."""
    if b < 0:
        return True
    far_a, far_b = st[nexts + a], st[nexts + b]
    return far_a > far_b or (far_a == far_b and a < b)


@inline
def add(st: np.ndarray, at: int, nexts: int, s: int) -> None:
    """Slot s is a candidate with a next use at least as far as before."""
    groups = st[at + GROUPS]
    st[at + BEST + 2 * groups + s] = 1
    best = at + BEST + (s >> st[at + SHIFT])
    if st[best + groups] == 0 and _before(st, nexts, s, st[best]):
        st[best] = s


@inline
def drop(st: np.ndarray, at: int, s: int) -> None:
    """Slot s is no longer a candidate."""
    groups = st[at + GROUPS]
    flag = at + BEST + 2 * groups + s
    if st[flag] == 0:
        return
    st[flag] = 0
    best = at + BEST + (s >> st[at + SHIFT])
    if st[best] == s:
        st[best + groups] = 1  # rescan when needed


@kernel
def farthest(st: np.ndarray, at: int, nexts: int, slots: int) -> int:
    """The candidate to evict first, or -1 when there is none."""
    groups, size = st[at + GROUPS], 1 << st[at + SHIFT]
    best = -1
    for g in range(groups):
        if st[at + BEST + groups + g] == 1:
            _rescan_slots(st, at, nexts, g, min((g + 1) * size, slots))
        s = st[at + BEST + g]
        if s >= 0 and _before(st, nexts, s, best):
            best = s
    return best


@kernel
def _rescan_slots(st: np.ndarray, at: int, nexts: int, g: int, stop: int) -> None:
    """Find group g's best candidate among slots g * size .. stop - 1."""
    groups, size = st[at + GROUPS], 1 << st[at + SHIFT]
    flags = at + BEST + 2 * groups
    best = -1
    for s in range(g * size, stop):
        if st[flags + s] == 1 and _before(st, nexts, s, best):
            best = s
    st[at + BEST + g], st[at + BEST + groups + g] = best, 0
