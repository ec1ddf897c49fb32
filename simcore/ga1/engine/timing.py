"""GA-1's timing rule, compiled (simcore/ga1/timing.py's `run_timing` is the reference).

A `clock` is one flat array: the engines' free times and totals, the machine's cycle counts, and
per slot (three entries from SLOT0 + 3 s) when its value may be read (READY), when the next
accumulation into it may start (ACC_READY) and when the last read of its value ends (LAST_READ).
`time_rows` applies the rule to a run of program rows and leaves the clock where they end, so a
program can be timed chunk by chunk as a generator emits it, never held whole.
"""
from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import kernel
from simcore.ga1.machine import Machine
from simcore.ga1.program import (
    BCASTCOL, EXP, LOAD, MASKLEN, MXU, NONE, ROWRED, STORE, VOP, VSCALE, ZERO, Program, ProgramError,
)
from simcore.ga1.timing import Timing, check_slots, vector_duration

(DMA_FREE, MXU_FREE, VPU_FREE, DMA_BUSY, MXU_BUSY, VPU_BUSY, END, LOADS, STORES, PRODUCTS, COUNT,
 DMA_CYCLES, MXU_CYCLES, FILL) = range(14)
DURATION = 14            # DURATION + opcode: a vector-unit instruction's cycles
SLOT0 = DURATION + 10    # slot s: READY, ACC_READY, LAST_READ at SLOT0 + 3 s + 0, 1, 2
READY, ACC_READY, LAST_READ = 0, 1, 2


def new_clock(machine: Machine) -> np.ndarray:
    """A clock at cycle 0 for the machine: every engine free, every slot ready."""
    clock = np.zeros(SLOT0 + 3 * machine.slots, dtype=np.int64)
    clock[DMA_CYCLES] = machine.dma_cycles
    clock[MXU_CYCLES] = machine.mxu_cycles
    clock[FILL] = machine.mxu_fill
    for op in (ZERO, VOP, EXP, VSCALE, ROWRED, BCASTCOL, MASKLEN):
        clock[DURATION + op] = vector_duration(machine, op)
    return clock


def time_checked(machine: Machine, clock: np.ndarray, rows: np.ndarray, times: np.ndarray) -> None:
    """time_rows, raising ProgramError (as the reference's checks do) on a malformed row."""
    bad = time_rows(clock, rows, rows.shape[0], times)
    if bad >= 0:
        row = rows[bad]
        check_slots(machine, Program(code=row.reshape(1, -1)))
        raise ProgramError(f"instruction {int(clock[COUNT]) + bad} has unknown opcode {int(row[0])}")


def timing_of(clock: np.ndarray) -> Timing:
    """The totals of everything timed so far."""
    return Timing(cycles=int(clock[END]), busy=(int(clock[DMA_BUSY]), int(clock[MXU_BUSY]), int(clock[VPU_BUSY])),
                  loads=int(clock[LOADS]), stores=int(clock[STORES]), products=int(clock[PRODUCTS]))


@kernel
def _vector(clock, op, s0, s1, s2, vpu_free):  # type: ignore[no-untyped-def]
    """A vector-unit instruction: reads s1 (and s2) and writes s0; masklen reads and writes s0,
    zero reads nothing. Returns its (start, finish)."""
    c, first, second = SLOT0 + 3 * s0, SLOT0 + 3 * s1, SLOT0 + 3 * s2
    reads = 0 if op == ZERO else 1 if op == MASKLEN or s2 == NONE else 2
    if op == MASKLEN:
        first = c
    start = vpu_free
    if reads > 0:
        start = max(start, clock[first + READY])
    if reads > 1:
        start = max(start, clock[second + READY])
    start = max(start, clock[c + LAST_READ], clock[c + READY])
    finish = start + clock[DURATION + op]
    if reads > 0:
        clock[first + LAST_READ] = max(clock[first + LAST_READ], finish)
    if reads > 1:
        clock[second + LAST_READ] = max(clock[second + LAST_READ], finish)
    clock[c + READY] = finish
    clock[c + ACC_READY] = finish
    return start, finish


@kernel
def _malformed(op, s0, s1, s2, slots):  # type: ignore[no-untyped-def]
    """An unknown opcode, or a slot outside 0..slots-1 that the rule would touch."""
    if op < LOAD or op > MASKLEN or s0 < 0 or s0 >= slots:
        return True
    if op == MXU:
        return s1 < 0 or s1 >= slots or s2 < 0 or s2 >= slots
    if op == LOAD or op == STORE or op == ZERO or op == MASKLEN:
        return False
    return s1 < 0 or s1 >= slots or (s2 != NONE and (s2 < 0 or s2 >= slots))


@kernel
def time_rows(clock, rows, n, times):  # type: ignore[no-untyped-def]
    """Time rows[0:n] in program order; with a non-empty `times`, record each start and finish.
    Returns -1, or the first malformed row (nothing from it on is timed: a kernel never touches
    memory outside its arrays)."""
    dma_free, mxu_free, vpu_free = clock[DMA_FREE], clock[MXU_FREE], clock[VPU_FREE]
    dma_busy, mxu_busy, vpu_busy, end = clock[DMA_BUSY], clock[MXU_BUSY], clock[VPU_BUSY], clock[END]
    loads, stores, products = clock[LOADS], clock[STORES], clock[PRODUCTS]
    dma_cycles, mxu_cycles, fill = clock[DMA_CYCLES], clock[MXU_CYCLES], clock[FILL]
    record, slots, bad = times.shape[0] > 0, (clock.shape[0] - SLOT0) // 3, -1
    for index in range(n):
        op, s0, s1, s2 = rows[index, 0], rows[index, 2], rows[index, 3], rows[index, 4]
        if _malformed(op, s0, s1, s2, slots):
            bad, n = index, index
            break
        c = SLOT0 + 3 * s0
        if op == MXU:  # c=s0 accumulates, a=s1 and b=s2 are read
            a, b = SLOT0 + 3 * s1, SLOT0 + 3 * s2
            start = max(mxu_free, clock[a + READY], clock[b + READY], clock[c + ACC_READY], clock[c + LAST_READ])
            finish = start + mxu_cycles
            mxu_free = finish
            mxu_busy += mxu_cycles
            clock[a + LAST_READ] = max(clock[a + LAST_READ], finish)
            clock[b + LAST_READ] = max(clock[b + LAST_READ], finish)
            clock[c + LAST_READ] = finish  # finish >= the old value: the start waited for it
            clock[c + READY] = finish + fill
            clock[c + ACC_READY] = finish
            end = max(end, finish + fill)
            products += 1
        elif op == LOAD:  # writes s0
            start = max(dma_free, clock[c + LAST_READ], clock[c + READY])
            finish = start + dma_cycles
            dma_free = finish
            dma_busy += dma_cycles
            clock[c + READY] = finish
            clock[c + ACC_READY] = finish
            end = max(end, finish)
            loads += 1
        elif op == STORE:  # reads s0
            start = max(dma_free, clock[c + READY])
            finish = start + dma_cycles
            dma_free = finish
            dma_busy += dma_cycles
            clock[c + LAST_READ] = max(clock[c + LAST_READ], finish)
            end = max(end, finish)
            stores += 1
        else:  # vector unit
            start, finish = _vector(clock, op, s0, s1, s2, vpu_free)
            vpu_free = finish
            vpu_busy += finish - start
            end = max(end, finish)
        if record:
            times[index, 0] = start
            times[index, 1] = finish
    clock[DMA_FREE], clock[MXU_FREE], clock[VPU_FREE] = dma_free, mxu_free, vpu_free
    clock[DMA_BUSY], clock[MXU_BUSY], clock[VPU_BUSY], clock[END] = dma_busy, mxu_busy, vpu_busy, end
    clock[LOADS], clock[STORES], clock[PRODUCTS] = loads, stores, products
    clock[COUNT] += n
    return bad
