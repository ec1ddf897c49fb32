"""Timing a repeat tree (chunks of rows, and bodies repeated a number of times), compiled, with
whole periods of a repeat jumped exactly.

The timing rule is a max-plus system: every start is the maximum of earlier finishes and free
times, every finish a start plus a fixed duration, so adding a constant to every time of the
clock adds it to every later time. Before each repetition of a body the clock's times are taken
relative to a base, the earliest free time of the engines the tree uses (the DMA and the vector
unit, and the matrix unit when the tree has a product anywhere), clamped at zero: a slot's time
below that base is never the maximum again, since every later instruction starts after its
engine is free. (Leaving out an engine that runs later would be wrong: its next instruction
could start at a slot's time below the base.) When a repeat's signature equals one taken p
repetitions before, the body is the same instructions, so every further p repetitions shift the
clock by the same D cycles and add the same counts: the driver jumps over as many whole periods
as remain, then simulates the rest.

Tables: `nodes` rows are (kind, a, b, c): a CHUNK runs rows[a : a + b]; a REPEAT runs its c
children, children[b : b + c], `a` times. Node 0 is the root, a REPEAT run once.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import kernel
from simcore.ga1.engine.timing import (
    BAD,
    COUNT,
    DMA_FREE,
    END,
    FILL,
    LOADS,
    MXU_FREE,
    PRODUCTS,
    SLOT0,
    STORES,
    VPU_BUSY,
    VPU_FREE,
    ZEROS,
    time_rows,
)
from simcore.ga1.program import WIDTH

CHUNK, REPEAT = 0, 1
KIND, A, B, C = range(4)
# frames: one per open repeat
NODE, NEXT, DONE, JUMPING, KEPT = range(5)
FRAME = 5
HISTORY = 8  # signatures kept per open repeat: periods of up to this many repetitions are found
# a field of the clock the layout leaves free: 1 when the tree has a product (the matrix unit's
# free time is part of the base)
MXU_IN_BASE = BAD + 1
assert MXU_IN_BASE < SLOT0
# a driver's outcome, when no row was malformed
DONE_OK = -1
# what drive() counts: repetitions simulated, periods jumped
SIMULATED, JUMPS = range(2)


@kernel
def _base(clock: np.ndarray) -> int:
    if clock[MXU_IN_BASE] == 1:
        return min(clock[DMA_FREE], clock[VPU_FREE], clock[MXU_FREE])
    return min(clock[DMA_FREE], clock[VPU_FREE])


@kernel
def _same_state(clock: np.ndarray, kept: np.ndarray) -> bool:
    """Whether the two clocks' times are equal relative to their bases (clamped at them)."""
    base, other = _base(clock), _base(kept)
    for field in (DMA_FREE, VPU_FREE, MXU_FREE):
        if max(clock[field], base) - base != max(kept[field], other) - other:
            return False
    for at in range(SLOT0, clock.shape[0]):
        if max(clock[at], base) - base != max(kept[at], other) - other:
            return False
    return True


@kernel
def _advance(clock: np.ndarray, kept: np.ndarray, times: int) -> None:
    """Move the clock `times` periods on, a period being what took `kept` to `clock`."""
    base = _base(clock)
    shift = times * (base - _base(kept))
    for field in (DMA_FREE, VPU_FREE, MXU_FREE):
        if field != MXU_FREE or clock[MXU_IN_BASE] == 1:
            clock[field] = max(clock[field], base) + shift
    for at in range(SLOT0, clock.shape[0]):
        clock[at] = max(clock[at], base) + shift
    for field in (ZEROS, VPU_BUSY, LOADS, STORES, PRODUCTS, COUNT):
        clock[field] += times * (clock[field] - kept[field])
    last_product = clock[MXU_FREE] + clock[FILL] if clock[PRODUCTS] > 0 else 0
    clock[END] = max(clock[DMA_FREE], clock[VPU_FREE], last_product)


@kernel
def _try_jump(
    clock: np.ndarray, frame: np.ndarray, count: int, history: np.ndarray, when: np.ndarray
) -> bool:
    """At a repetition's start: jump whole periods if the state recurs (True), else keep it."""
    if clock[PRODUCTS] > 0 and clock[MXU_IN_BASE] != 1:  # a product the base leaves out
        frame[JUMPING] = 0
        return False
    done = frame[DONE]
    for s in range(min(frame[KEPT], HISTORY)):
        if _same_state(clock, history[s]):
            period = done - when[s]
            times = (count - done) // period
            _advance(clock, history[s], times)
            frame[DONE] = done + times * period
            frame[JUMPING] = 0
            return times > 0
    at = frame[KEPT] % HISTORY
    for field in range(clock.shape[0]):
        history[at, field] = clock[field]
    when[at] = done
    frame[KEPT] += 1
    return False


@kernel
def drive(
    clock: np.ndarray,
    rows: np.ndarray,
    nodes: np.ndarray,
    children: np.ndarray,
    frames: np.ndarray,
    history: np.ndarray,
    when: np.ndarray,
    jump: bool,
    times: np.ndarray,
    stats: np.ndarray,
) -> int:
    """Time the tree from node 0. Returns DONE_OK, or the index in `rows` of the first
    malformed row (nothing after it is timed). `frames`, `history` and `when` have a row per
    level of the tree."""
    depth = 0
    frames[0, NODE], frames[0, NEXT], frames[0, DONE] = 0, 0, 0
    frames[0, JUMPING], frames[0, KEPT] = 0, 0
    while depth >= 0:
        frame = frames[depth]
        node = nodes[frame[NODE]]
        if frame[NEXT] == 0:  # a repetition starts
            if frame[JUMPING] == 1 and _try_jump(
                clock, frame, node[A], history[depth], when[depth]
            ):
                stats[JUMPS] += 1
            if frame[DONE] >= node[A]:
                depth -= 1
                continue
            stats[SIMULATED] += 1
        if frame[NEXT] == node[C]:  # the repetition ends
            frame[NEXT] = 0
            frame[DONE] += 1
            continue
        child = children[node[B] + frame[NEXT]]
        frame[NEXT] += 1
        if nodes[child, KIND] == CHUNK:
            start, n = nodes[child, A], nodes[child, B]
            bad = time_rows(clock, rows[start * WIDTH :], n, times)
            if bad >= 0:
                return start + bad
        else:
            depth += 1
            inner = frames[depth]
            inner[NODE], inner[NEXT], inner[DONE], inner[KEPT] = child, 0, 0, 0
            inner[JUMPING] = 1 if jump else 0
    return DONE_OK
