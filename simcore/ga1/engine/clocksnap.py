"""When two clocks (timing.py) are one period apart: the timing rule's part of the periodic
timing's state signature, taken relative to the matrix unit's free time and up to a relabelling
of the slots (`moved[s]`: the slot that plays, one period later, the part slot s played).

Two clocks a (at a boundary x) and b (at x', one period later) match when every time in b is the
time in a moved by the matrix unit's advance delta = b[MXU_FREE] - a[MXU_FREE] > 0 ("moving"), or
is the same time ("fixed": nothing wrote it during the period). Then, if the period's rows repeat
(the generator's part of the signature), every period after it moves every moving time by delta
again and leaves every fixed time alone, so n periods later the clock is b with delta * n added
to the moving times, the slots relabelled n times, and n times the period's counts added to the
counts: `advance`.

Why this is exact (programs of loads, stores, products and zeros, the compiled generators' only
rows). The rule is max-plus: each start is the maximum of its engine's free time and slot times,
each finish a start plus a constant, so moving every time by delta moves every later time by
delta, and relabelling the slots of the state and of the rows relabels the result. A fixed time
breaks the uniform move, so it is allowed only where it cannot decide anything: an engine that
ran nothing during the period (it runs nothing in the next either), a slot not relabelled that no
row touched (every row that touches a slot strictly raises one of its four times: a load, a zero
or a product writes a finish later than the time it waited for, and a store's finish is later
than every earlier transfer's, so it raises BY_OTHERS), and a time of a touched slot that is at
most the free time, at x, of every engine that ran during the period (any row reading it takes
the maximum with its engine's free time, which is at least that).

`canonical` first replaces times by equivalent ones (the same future from them): a slot's last
reads that came before its last write can only be waited for by a later write, which also waits
for the write itself (ACC_READY, and READY at least as late), so BY_MXU and BY_OTHERS are raised
to ACC_READY; and the vector unit's free time only counts where it is later than every slot's
times that a zero waits for, so it is raised to the least of those. Stale times then move with
the period instead of lingering.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import callee
from simcore.ga1.engine.timing import (
    ACC_READY,
    BY_MXU,
    BY_OTHERS,
    COUNT,
    DMA_FREE,
    END,
    FILL,
    LOADS,
    MXU_FREE,
    PER_SLOT,
    PRODUCTS,
    READY,
    SLOT0,
    SLOTS,
    STORES,
    VPU_BUSY,
    VPU_FREE,
    ZEROS,
)


@callee
def canonical(clock: np.ndarray) -> None:
    """Replace the clock's times by equivalent ones (see the module's note)."""
    lowest = -1
    for s in range(clock[SLOTS]):
        at = SLOT0 + PER_SLOT * s
        written = clock[at + ACC_READY]
        clock[at + BY_MXU] = max(clock[at + BY_MXU], written)
        clock[at + BY_OTHERS] = max(clock[at + BY_OTHERS], written)
        waited = max(clock[at + BY_MXU], clock[at + BY_OTHERS], clock[at + READY])
        lowest = waited if lowest < 0 else min(lowest, waited)
    clock[VPU_FREE] = max(clock[VPU_FREE], lowest)


@callee
def clocks_match(a: np.ndarray, b: np.ndarray, moved: np.ndarray) -> bool:
    """Whether clock b is clock a one period later, slot s of a being slot moved[s] of b."""
    delta = b[MXU_FREE] - a[MXU_FREE]
    if delta <= 0:
        return False
    floor = a[MXU_FREE]
    for engine in (DMA_FREE, VPU_FREE):
        if b[engine] != a[engine]:
            if b[engine] - a[engine] != delta:
                return False
            # the engine ran: times it reads are bounded by its free time
            floor = min(floor, a[engine])
    for s in range(a[SLOTS]):
        at, there = SLOT0 + PER_SLOT * s, SLOT0 + PER_SLOT * moved[s]
        touched = moved[s] != s
        for field in range(PER_SLOT):
            if b[there + field] != a[at + field]:
                touched = True
                if b[there + field] - a[at + field] != delta:
                    return False
        if touched:
            for field in range(PER_SLOT):
                if b[there + field] == a[at + field] and (moved[s] != s or a[at + field] > floor):
                    return False
    return True


@callee
def advance(
    clock: np.ndarray,
    a: np.ndarray,
    moved: np.ndarray,
    onward: np.ndarray,
    periods: int,
    scratch: np.ndarray,
) -> None:
    """The clock `periods` periods after itself, given the clock `a` one period before it (the
    two match with `moved`); onward[t] is where slot t of the clock is `periods` periods later."""
    delta = clock[MXU_FREE] - a[MXU_FREE]
    for engine in (DMA_FREE, MXU_FREE, VPU_FREE):
        if clock[engine] != a[engine]:
            clock[engine] += periods * delta
    slots = clock[SLOTS]
    for at in range(PER_SLOT * slots):
        scratch[at] = clock[SLOT0 + at]
    for s in range(slots):
        t = moved[s]
        for field in range(PER_SLOT):
            value = scratch[PER_SLOT * t + field]
            if value != a[SLOT0 + PER_SLOT * s + field]:
                value += periods * delta
            clock[SLOT0 + PER_SLOT * onward[t] + field] = value
    for count in (LOADS, STORES, PRODUCTS, ZEROS, VPU_BUSY, COUNT):
        clock[count] += periods * (clock[count] - a[count])
    last_product = clock[MXU_FREE] + clock[FILL] if clock[PRODUCTS] > 0 else 0
    clock[END] = max(clock[DMA_FREE], clock[VPU_FREE], last_product)


@callee
def relabelling(before: np.ndarray, after: np.ndarray, moved: np.ndarray) -> None:
    """moved[s]: the slot numbered in `after` as slot s is in `before` (order[i]: the slot
    numbered i)."""
    for i in range(before.shape[0]):
        moved[before[i]] = after[i]


@callee
def power(moved: np.ndarray, periods: int, onward: np.ndarray, seen: np.ndarray) -> None:
    """onward = moved applied `periods` times, cycle by cycle (periods may be large)."""
    slots = moved.shape[0]
    for s in range(slots):
        seen[s] = 0
    for s in range(slots):
        if seen[s] == 1:
            continue
        length, t = 1, moved[s]
        while t != s:
            length, t = length + 1, moved[t]
        shift = periods % length
        t = s
        for _ in range(length):  # walk the cycle: each element goes `shift` places on
            target = t
            for _step in range(shift):
                target = moved[target]
            onward[t], seen[t] = target, 1
            t = moved[t]
