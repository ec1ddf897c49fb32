"""The generator the periodic driver runs, behind one set of calls: the compiled orders (the
compiler's state is part of the signature) or the chapter's two (their rows follow from the
position). The driver (periodic.py) passes `family` on and never asks which it holds."""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine import stream
from simcore.ga1.engine.canon import REBUILT, capture, far_uses_known
from simcore.ga1.engine.canon_restore import restore
from simcore.ga1.engine.chapter_units import (
    chapter_count,
    chapter_end,
    chapter_kind,
    chapter_restore,
    chapter_start,
    run_chapter_until,
)
from simcore.ga1.engine.compile_state import FAILED_AT, NEXT_P, STOP_P
from simcore.ga1.engine.jit import callee, inline
from simcore.ga1.engine.plan import P
from simcore.ga1.engine.rows import DONE, OUT, OUT_AT
from simcore.ga1.engine.timing import time_rows
from simcore.ga1.engine.units import unit_count, unit_kind, unit_length, unit_start

# Which generator the driver runs.
COMPILED, BLOCKED, KOUTER = 0, 1, 2
# What the driver returns: done, the generator failed (it does not fit), the simulation would pass
# its budget, or a rebuilt state disagreed with its signature (a flaw: the caller times in full).
DONE_OK, FAILED, OVER_BUDGET, INCONSISTENT = -1, -2, -3, -4


@callee
def _run_compiled_until(st: np.ndarray, clock: np.ndarray, stop: int, times: np.ndarray) -> int:
    st[STOP_P] = stop
    while True:
        stream.compiled_chunk(st)
        if st[FAILED_AT] >= 0:
            return FAILED
        bad = time_rows(clock, st[st[OUT_AT] :], st[OUT], times)
        if bad >= 0:
            return bad
        if st[DONE] == 1 or (st[NEXT_P] >= stop and stop < st[P]):
            return DONE_OK


@inline
def chapter_of(family: int) -> int:
    """The chapter generator's kind (stream.py) of a chapter family."""
    return stream.KOUTER if family == KOUTER else stream.BLOCKED


@inline
def unit_total(family: int, st: np.ndarray, level: int, u0: int, u1: int) -> int:
    if family == COMPILED:
        return unit_count(st, level, u0, u1)
    return chapter_count(chapter_of(family), st, level, u0, u1)


@inline
def start_and_length(family: int, st: np.ndarray, u0: int, u1: int, u2: int) -> tuple[int, int]:
    if family == COMPILED:
        return unit_start(st, u0, u1, u2)[0], unit_length(st, u0, u1, u2)
    return chapter_start(chapter_of(family), st, u0, u1, u2), 1


@inline
def run_until(family: int, st: np.ndarray, clock: np.ndarray, stop: int, times: np.ndarray) -> int:
    if family == COMPILED:
        return _run_compiled_until(st, clock, stop, times)
    return run_chapter_until(chapter_of(family), st, clock, stop, times)


@inline
def end_of(family: int, st: np.ndarray) -> int:
    if family == COMPILED:
        return st[P]
    return chapter_end(chapter_of(family), st)


@inline
def kind_of(
    family: int, st: np.ndarray, level: int, u0: int, u1: int, u2: int, out: np.ndarray
) -> int:
    if family == COMPILED:
        return unit_kind(st, level, u0, u1, u2, out)
    return chapter_kind(chapter_of(family), st, level, u0, u1, u2, out)


@inline
def capture_state(
    family: int,
    st: np.ndarray,
    level: int,
    u0: int,
    u1: int,
    u2: int,
    canon: np.ndarray,
    order: np.ndarray,
    scratch: np.ndarray,
) -> bool:
    if family == COMPILED:
        return capture(st, level, u0, u1, u2, canon, order, scratch)
    # the chapter's generators: fixed slots, the position says it all
    for s in range(order.shape[0]):
        order[s] = s
    return True


@inline
def reach_back(family: int, st: np.ndarray, level: int, u0: int, u1: int, u2: int) -> int:
    """How many units back the state's far operands reach, or -1 if it cannot be rebuilt."""
    return far_uses_known(st, level, u0, u1, u2) if family == COMPILED else 0


@inline
def restore_state(
    family: int,
    st: np.ndarray,
    level: int,
    u0: int,
    u1: int,
    u2: int,
    canon: np.ndarray,
    slot_of: np.ndarray,
) -> int:
    if family == COMPILED:
        return restore(st, level, u0, u1, u2, canon, slot_of)
    chapter_restore(chapter_of(family), st, u0, u1, u2)
    return REBUILT


__all__ = [
    "BLOCKED",
    "COMPILED",
    "DONE_OK",
    "FAILED",
    "INCONSISTENT",
    "KOUTER",
    "OVER_BUDGET",
    "capture_state",
    "chapter_of",
    "end_of",
    "kind_of",
    "reach_back",
    "restore_state",
    "run_until",
    "start_and_length",
    "unit_total",
]
