"""Cycle-exact timing without simulating every product: the machine's steady state, detected.

The machine is deterministic and its rule does not depend on absolute time; a blocked order
repeats the same work: every k step of a block, every block of a band, every band. The driver
walks the order's three levels of units (units.py, chapter_units.py), simulating the innermost
ones. At each unit's boundary it takes the state's signature: the generator's (canon.py: slots,
tiles and next uses relative to the unit) and the clock (clocksnap.py: relative to the matrix
unit's free time). When the signature at a boundary equals the one L units before, and the units
from there on have the same kinds as the units L before them (the order streams the same
records, relative to each unit), the next period takes exactly the same cycles and counts: the
driver jumps ahead by as many whole periods as the kinds allow, leaving room for the lookahead,
rebuilds the state there, and simulates on. Each level keeps its own recent signatures, so a
band's blocks collapse within it and the bands collapse in turn.

Where no signature recurs (an irregular order, a state that never settles), every unit is
simulated: the result is the full simulation's, and says so (`method`).
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.canon import REBUILT, ties
from simcore.ga1.engine.chapter_units import chapter_extent2
from simcore.ga1.engine.clocksnap import advance, canonical, clocks_match, power, relabelling
from simcore.ga1.engine.jit import inline, kernel
from simcore.ga1.engine.periodic_family import (
    BLOCKED,
    COMPILED,
    DONE_OK,
    FAILED,
    INCONSISTENT,
    KOUTER,
    OVER_BUDGET,
    capture_state,
    chapter_of,
    end_of,
    kind_of,
    reach_back,
    restore_state,
    run_until,
    start_and_length,
    unit_total,
)
from simcore.ga1.engine.plan import KT, STRUCTURE, TAIL, UNITS
from simcore.ga1.engine.tielog import log_jumped, tie_periods
from simcore.ga1.engine.timing import PRODUCTS
from simcore.ga1.engine.units import block_at

# params: the history's depth is the array's; then
# (STRETCH_AHEAD: a rotating window's level 2, its stretches between units entering)
LOOK, LEVEL1_AHEAD, LEVEL0_AHEAD, BUDGET, CANON, STRETCH_AHEAD = range(6)
# stats: products simulated, jumps at each level, units jumped at each level
# and, when a rebuilt state was inconsistent, why (canon.py's verdict) and where (level, cursor);
# signatures taken; kinds compared
SIMULATED, JUMPS, JUMPED, WHY, WHERE, SIGNATURES, KINDS = 0, 1, 4, 7, 8, 12, 13
STATS = 14
# then, where room is left, each jump: level, the cursor (u0, u1, u2) and the unit jumped to
LOGGED = 5


@inline
def _cursor(level: int, u0: int, u1: int, u2: int, index: int) -> tuple[int, int, int]:
    """The cursor with unit `index` at `level` (and the first units below it)."""
    if level == 0:
        return index, 0, 0
    if level == 1:
        return u0, index, 0
    return u0, u1, index


@inline
def _extent(
    family: int,
    st: np.ndarray,
    level: int,
    u0: int,
    u1: int,
    index: int,
    period: int,
    back: int,
    kinds: np.ndarray,
) -> int:
    """The first unit from index - back on whose kind is not the kind of the unit `period`
    before it (the end of the periodic stretch), or `index` when there is none to jump."""
    if level == 2 and family != COMPILED:
        return chapter_extent2(chapter_of(family), st, index, period)
    if level == 2 and st[STRUCTURE] != UNITS:
        return _steps_extent(st, index, period)
    if index - back - period < 0:
        return index
    count = unit_total(family, st, level, u0, u1)
    for u in range(index - back, count):
        a0, a1, a2 = _cursor(level, u0, u1, 0, u)
        b0, b1, b2 = _cursor(level, u0, u1, 0, u - period)
        length = kind_of(family, st, level, a0, a1, a2, kinds[0])
        if kind_of(family, st, level, b0, b1, b2, kinds[1]) != length:
            return u
        for at in range(length):
            if kinds[0, at] != kinds[1, at]:
                return u
    return count


@inline
def _steps_extent(st: np.ndarray, index: int, period: int) -> int:
    """The end of the stretch of a block's plain steps that step `index` is in, if the step
    `period` before it is in it too (else `index`). The stretches end where the block's tail
    starts and at step TAIL: a block that walks k the other way than this one holds the first
    TAIL steps' k in its tail, where its keys run cell by cell, so far next uses in it rank
    otherwise (units.py's kinds of steps)."""
    plain, tail = st[KT] - st[TAIL], st[TAIL]
    low, high = 0, plain
    if 0 < tail < plain:
        low, high = (0, tail) if index < tail else (tail, plain)
    return high if low <= index - period and index < high else index


@inline
def _ahead(family: int, st: np.ndarray, level: int, u0: int, u1: int, params: np.ndarray) -> int:
    """Units past a periodic stretch that the lookahead (and a prefetch's protection) may reach."""
    if family != COMPILED:
        return 0
    if level == 2 and st[STRUCTURE] == UNITS:
        return params[STRETCH_AHEAD]
    if level == 2:
        block = block_at(st, u0, u1)
        hw = block[2] * block[4]
        return (params[LOOK] + hw - 1) // hw
    return params[LEVEL1_AHEAD] if level == 1 else params[LEVEL0_AHEAD]


@inline
def _same(a: np.ndarray, b: np.ndarray, length: int) -> bool:
    for at in range(length):
        if a[at] != b[at]:
            return False
    return True


@inline
def _room(
    family: int, st: np.ndarray, level: int, u0: int, u1: int, index: int, params: np.ndarray
) -> int:
    """At most how many units a jump from unit `index` could pass (whatever the period)."""
    if level < 2 or (family == COMPILED and st[STRUCTURE] == UNITS):
        end = unit_total(family, st, level, u0, u1)
    elif family == COMPILED:
        end = _steps_extent(st, index, 0)
    else:
        end = chapter_extent2(chapter_of(family), st, index, 0)
    return end - _ahead(family, st, level, u0, u1, params) - index


@inline
def _jump(
    family: int,
    st: np.ndarray,
    clock: np.ndarray,
    level: int,
    u0: int,
    u1: int,
    u2: int,
    index: int,
    period: int,
    periods: int,
    before: np.ndarray,
    order_before: np.ndarray,
    canon: np.ndarray,
    order: np.ndarray,
    moved: np.ndarray,
    work: np.ndarray,
    stats: np.ndarray,
) -> int:
    """Move clock and generator `periods` periods on from unit `index` (the state one period
    before is `before`, its slots numbered by `order_before`). Returns the unit jumped to."""
    slots = moved.shape[0]
    onward, seen, slot_of = work[:slots], work[slots : 2 * slots], work[2 * slots : 3 * slots]
    power(moved, periods, onward, seen)
    advance(clock, before, moved, onward, periods, work[3 * slots :])
    for i in range(slots):
        slot_of[i] = onward[order[i]]
    target = index + periods * period
    t0, t1, t2 = _cursor(level, u0, u1, u2, target)
    verdict = restore_state(family, st, level, t0, t1, t2, canon, slot_of)
    if verdict != REBUILT:
        stats[WHY], stats[WHERE], stats[WHERE + 1] = verdict, level, t0
        stats[WHERE + 2], stats[WHERE + 3] = t1, t2
        return INCONSISTENT
    return target


@inline
def _try_jump(
    family: int,
    st: np.ndarray,
    clock: np.ndarray,
    level: int,
    u0: int,
    u1: int,
    u2: int,
    index: int,
    meta: np.ndarray,
    canons: np.ndarray,
    orders: np.ndarray,
    clocks: np.ndarray,
    scratch: np.ndarray,
    kinds: np.ndarray,
    params: np.ndarray,
    stats: np.ndarray,
) -> int:
    """At the boundary of unit `index` of `level`: jump whole periods ahead if the state recurs
    (returns the unit jumped to, or INCONSISTENT), else remember the state (returns -1)."""
    depth, length, slots = meta.shape[1], params[CANON], orders.shape[2]
    canon, order = scratch[:length], scratch[length : length + slots]
    moved = scratch[length + slots : length + 2 * slots]
    work = scratch[length + 2 * slots :]
    if _room(family, st, level, u0, u1, index, params) < 1:
        return -1  # nothing to jump to from here: not even a signature to keep
    canonical(clock)
    valid = capture_state(family, st, level, u0, u1, u2, canon, order, work)
    stats[SIGNATURES] += 1
    tied = ties(st) if family == COMPILED else 0
    if valid:
        for period in range(1, min(depth, index + 1)):
            entry = (index - period) % depth
            if meta[level, entry, 0] != index - period:
                continue
            if not _same(canons[level, entry], canon, length):
                continue
            relabelling(orders[level, entry], order, moved)
            if not clocks_match(clocks[level, entry], clock, moved):
                continue
            back = reach_back(family, st, level, u0, u1, u2)
            if back < 0:
                break
            end = _extent(family, st, level, u0, u1, index, period, back, kinds)
            stats[KINDS] += max(0, end - index + back)
            periods = (end - _ahead(family, st, level, u0, u1, params) - index) // period
            if family == COMPILED and periods >= 1:  # ties that went to the smaller slot
                periods = tie_periods(st, meta[level, entry, 1], moved, periods, work)
                if periods >= 1:
                    log_jumped(st, meta[level, entry, 1], moved, periods, work)
            if periods >= 1:
                return _jump(
                    family,
                    st,
                    clock,
                    level,
                    u0,
                    u1,
                    u2,
                    index,
                    period,
                    periods,
                    clocks[level, entry],
                    orders[level, entry],
                    canon,
                    order,
                    moved,
                    work,
                    stats,
                )
    entry = index % depth
    meta[level, entry, 0], meta[level, entry, 1] = (index if valid else -1), tied
    for at in range(length):  # element by element: a slice assignment would allocate
        canons[level, entry, at] = canon[at]
    for at in range(slots):
        orders[level, entry, at] = order[at]
    for at in range(clock.shape[0]):
        clocks[level, entry, at] = clock[at]
    return -1


@kernel
def drive(
    family: int,
    st: np.ndarray,
    clock: np.ndarray,
    meta: np.ndarray,
    canons: np.ndarray,
    orders: np.ndarray,
    clocks: np.ndarray,
    scratch: np.ndarray,
    kinds: np.ndarray,
    params: np.ndarray,
    stats: np.ndarray,
    times: np.ndarray,
) -> int:
    """Time the generator's program periodically (see the module's note). Returns DONE_OK,
    FAILED, OVER_BUDGET, INCONSISTENT, or the first malformed row of the last chunk."""
    level, u0, u1, u2 = 0, 0, 0, 0
    meta[:, :, 0] = -1
    while True:
        index = u0 if level == 0 else (u1 if level == 1 else u2)
        if index >= unit_total(family, st, level, u0, u1):
            if level == 0:
                break
            level -= 1
            u0, u1, u2 = (u0 + 1, 0, 0) if level == 0 else (u0, u1 + 1, 0)
            continue
        target = _try_jump(
            family,
            st,
            clock,
            level,
            u0,
            u1,
            u2,
            index,
            meta,
            canons,
            orders,
            clocks,
            scratch,
            kinds,
            params,
            stats,
        )
        if target == INCONSISTENT:
            return INCONSISTENT
        if target >= 0:
            stats[JUMPS + level] += 1
            stats[JUMPED + level] += target - index
            logged = STATS + LOGGED * (stats[JUMPS] + stats[JUMPS + 1] + stats[JUMPS + 2] - 1)
            # room for a log of the jumps (tests and benchmarks)
            if logged + LOGGED <= stats.shape[0]:
                stats[logged], stats[logged + 1], stats[logged + 2] = level, u0, u1
                stats[logged + 3], stats[logged + 4] = u2, target
            u0, u1, u2 = _cursor(level, u0, u1, u2, target)
            meta[level, :, 0] = -1
            continue
        if level < 2:
            level += 1
            meta[level, :, 0] = -1
            continue
        start, length = start_and_length(family, st, u0, u1, u2)
        before = clock[PRODUCTS]
        status = run_until(family, st, clock, start + length, times)
        stats[SIMULATED] += clock[PRODUCTS] - before
        if status != DONE_OK:
            return status
        if stats[SIMULATED] > params[BUDGET]:
            return OVER_BUDGET
        u2 += 1
    before = clock[PRODUCTS]
    status = run_until(family, st, clock, end_of(family, st), times)
    stats[SIMULATED] += clock[PRODUCTS] - before
    return status


__all__ = [
    "BLOCKED",
    "BUDGET",
    "CANON",
    "COMPILED",
    "DONE_OK",
    "FAILED",
    "INCONSISTENT",
    "JUMPED",
    "JUMPS",
    "KOUTER",
    "LEVEL0_AHEAD",
    "LEVEL1_AHEAD",
    "LOOK",
    "OVER_BUDGET",
    "SIMULATED",
    "STATS",
    "drive",
]
