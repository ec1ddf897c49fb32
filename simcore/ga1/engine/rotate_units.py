"""The loops of the general family's rotating window (order.py's units), as the periodic timing
walks them.

Units (columns of a row band) enter one after another, unit u at step entry(u), and live KT steps;
at step t every live unit multiplies by k = t mod KT. Level 0 is a row band, level 1 the band
again (one unit), level 2 the stretch of steps from one of the band's units entering to the next
one entering. A stretch's position is the number of the first product of its first step.

Tiles are taken relative to the entering unit: its band's first row, its column (counted in the
band's direction) and the step's k (modulo KT, every unit's k wraps around). A stretch's kind
lists the live units (their distance, age, band, height, direction, whether last in their band),
the units entering within KT steps (where a row's operand is next used), and where the next
band's units in the live units' columns enter (where a column's operand is next used, past the
band: far, so only how those uses compare counts).
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import callee
from simcore.ga1.engine.order import _band, _entry, _first_live, _step_with, _unit_key
from simcore.ga1.engine.plan import (
    KT,
    N_RB,
    N_UNITS,
    NEVER,
    NT,
    RAMP,
    ROW_START_AT,
    SERPENTINE,
    STEP,
    W,
)

MODULAR = 2  # origin's k mode: k relative to the step's, modulo KT


@callee
def _reversed(st: np.ndarray, r: int) -> bool:
    return st[SERPENTINE] == 1 and r % 2 == 1


@callee
def last_live(st: np.ndarray, t: int) -> int:
    """hi(t): the last unit that has entered by step t."""
    if t < 0:
        return -1
    hi = ((t + 1) * st[W] - 1) // st[KT]
    return min(st[N_UNITS] - 1, max(st[RAMP] - 1, hi))


@callee
def steps(st: np.ndarray) -> int:
    """Every step of the order (the last unit's life ends it)."""
    return _entry(st, st[N_UNITS] - 1) + st[KT]


@callee
def _height(st: np.ndarray, u: int) -> int:
    return _band(st, ROW_START_AT, u // st[NT])[1]


@callee
def position(st: np.ndarray, t: int) -> int:
    """The number of the first product of step t: every earlier step's live units' cells."""
    if t >= steps(st):
        return _done(st, st[N_UNITS])
    lo, hi = _first_live(st, t), last_live(st, t)
    count = _done(st, lo)
    for u in range(lo, hi + 1):
        count += (t - _entry(st, u)) * _height(st, u)
    return count


@callee
def _done(st: np.ndarray, units: int) -> int:
    """The products of units 0 .. units - 1, every step of their lives."""
    nt = st[NT]
    r, place = units // nt, units % nt
    if r >= st[N_RB]:
        return st[KT] * nt * _band(st, ROW_START_AT, st[N_RB])[0]
    row0, h = _band(st, ROW_START_AT, r)
    return st[KT] * (nt * row0 + place * h)


@callee
def stretch_start(st: np.ndarray, u0: int, u2: int) -> int:
    """The step at which unit u2 of band u0 enters."""
    return _entry(st, u0 * st[NT] + u2)


@callee
def stretch_end(st: np.ndarray, u0: int, u2: int) -> int:
    u = u0 * st[NT] + u2
    return steps(st) if u + 1 >= st[N_UNITS] else _entry(st, u + 1)


@callee
def column_of(st: np.ndarray, u: int) -> int:
    """The frame column of unit u (bands run backwards in the serpentine's odd bands)."""
    nt = st[NT]
    place = u % nt
    return nt - 1 - place if _reversed(st, u // nt) else place


@callee
def rotate_origin(st: np.ndarray, u0: int, u2: int) -> tuple[int, int, int, int, int]:
    """(row, column, column direction, k, k mode) that tiles are taken relative to at the
    stretch's start: the entering unit's band row, its column, its band's direction, the step's
    k."""
    u = u0 * st[NT] + u2
    row0 = _band(st, ROW_START_AT, u0)[0]
    direction = -1 if _reversed(st, u0) else 1
    return row0, column_of(st, u), direction, stretch_start(st, u0, u2) % st[KT], MODULAR


@callee
def rotate_far_key(st: np.ndarray, level: int, u0: int) -> int:
    """Keys from the next band's first unit entering on are far (within a band's stretches)."""
    if level != 2 or u0 + 1 >= st[N_RB]:
        return st[NEVER]
    return _entry(st, (u0 + 1) * st[NT]) * st[STEP]


@callee
def rotate_far_next(
    st: np.ndarray, level: int, u0: int, is_column: bool, column: int, k: int
) -> int:
    """Where a column's operand (column, k) is next used past band u0: the next band's unit in
    that column, at the step of its life that multiplies by k; -1 for anything else."""
    if level != 2 or not is_column or u0 + 1 >= st[N_RB]:
        return -1
    nt = st[NT]
    u2 = (u0 + 1) * nt + (nt - 1 - column if _reversed(st, u0 + 1) else column)
    return _unit_key(st, _step_with(st, u2, k), u2, 0)


@callee
def _unit_kind(st: np.ndarray, u: int, v: int, out: np.ndarray, at: int) -> int:
    """Unit v seen from entering unit u: distance, age, band, height, direction, last in band."""
    nt = st[NT]
    out[at], out[at + 1], out[at + 2] = v - u, _entry(st, u) - _entry(st, v), v // nt - u // nt
    out[at + 3], out[at + 4] = _height(st, v), 1 if _reversed(st, v // nt) else 0
    out[at + 5] = 1 if v % nt == nt - 1 else 0
    return at + 6


@callee
def _next_band_kind(st: np.ndarray, u: int, v: int, anchor: int, out: np.ndarray, at: int) -> int:
    """Where the next band's unit in live unit v's column enters, against the entering unit's."""
    nt = st[NT]
    r = v // nt
    if r + 1 >= st[N_RB]:
        out[at], out[at + 1], out[at + 2] = -1, 0, 0
        return at + 3
    column = column_of(st, v)
    v2 = (r + 1) * nt + (nt - 1 - column if _reversed(st, r + 1) else column)
    out[at], out[at + 1], out[at + 2] = v2 - anchor, _entry(st, v2) - _entry(st, anchor), 1
    return at + 3


@callee
def rotate_kind(st: np.ndarray, level: int, u0: int, u2: int, out: np.ndarray) -> int:
    """The kind of band u0 (level 0) or of stretch u2 of it (level 2), into out; its length."""
    nt, kt = st[NT], st[KT]
    if level == 1:
        out[0] = 0
        return 1
    if level == 0:  # the band, the one before (its units still live) and the one after
        at = 0
        for r in (u0 - 1, u0, u0 + 1):
            exists = 0 <= r < st[N_RB]
            if exists:
                out[at], out[at + 1] = _band(st, ROW_START_AT, r)[1], 1 if _reversed(st, r) else 0
            else:
                out[at], out[at + 1] = -1, -1
            at += 2
        first = u0 * nt
        out[at], out[at + 1] = (first * kt) % st[W], min(st[RAMP] - first, st[W] + 1)
        return at + 2
    u = u0 * nt + u2
    t = _entry(st, u)
    # the stretch's length, the entry pattern's phase, how many units are live
    lo = _first_live(st, t)
    out[0], out[1], out[2] = stretch_end(st, u0, u2) - t, (u * kt) % st[W], u + 1 - lo
    at = 3
    column = column_of(st, u)
    anchor = (u0 + 1) * nt + (nt - 1 - column if _reversed(st, u0 + 1) else column)
    for v in range(lo, u + 1):
        at = _unit_kind(st, u, v, out, at)
        at = _next_band_kind(st, u, v, anchor, out, at)
    if u0 + 1 < st[N_RB]:  # the next band's column uses against this k, and its entry pattern
        out[at], out[at + 1] = (t - _entry(st, anchor)) % kt, (anchor * kt) % st[W]
        at += 2
    # the units entering within KT steps of the stretch (where its rows' operands are next used)
    for w in range(u + 1, min(st[N_UNITS], last_live(st, t + kt + out[0]) + 2)):
        out[at], out[at + 1], out[at + 2] = w - u, _entry(st, w) - t, w // nt - u0
        at += 3
    return at
