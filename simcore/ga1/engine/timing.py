"""GA-1's timing rule, compiled (simcore/ga1/timing.py's `run_timing` is the reference).

A `clock` is one flat array: the engines' free times and totals, the machine's cycle counts, the
slot count, and three rows of a value per slot from SLOT0: when its value may be read (READY), when the next
accumulation into it may start (ACC_READY) and when the last read of its value ends (LAST_READ).
`time_rows` applies the rule to a run of program rows and leaves the clock where they end, so a
program can be timed chunk by chunk as a generator emits it, never held whole.
"""
from __future__ import annotations

import functools

import numpy as np

from simcore.ga1.engine.jit import kernel
from simcore.ga1.machine import Machine
from simcore.ga1.program import (
    BCASTCOL, EXP, LOAD, MASKLEN, MXU, NONE, ROWRED, STORE, VOP, VSCALE, ZERO, Program, ProgramError,
)
from simcore.ga1.timing import Timing, check_slots, vector_duration

# The DMA is busy DMA_CYCLES per transfer and the matrix unit MXU_CYCLES per product, so their busy
# times follow from the counts (timing_of); VPU_BUSY adds up vector durations, ZEROS counts zeros.
(DMA_FREE, MXU_FREE, VPU_FREE, ZEROS, VPU_BUSY, END, LOADS, STORES, PRODUCTS, COUNT, DMA_CYCLES,
 MXU_CYCLES, FILL) = range(13)
DURATION = 13            # DURATION + opcode: a vector-unit instruction's cycles
SLOTS = DURATION + 10    # the slot count
BAD = SLOTS + 1          # the first malformed row time_rows met, or -1
SLOT0 = BAD + 1        # then READY, ACC_READY and LAST_READ of every slot, slot after slot
READY, ACC_READY, LAST_READ = 0, 1, 2


NO_TIMES = np.zeros((0, 2), dtype=np.int64)  # a run that records no start and finish


def new_clock(machine: Machine) -> np.ndarray:
    """A clock at cycle 0 for the machine: every engine free, every slot ready."""
    return _clock_at_zero(machine).copy()


@functools.lru_cache(maxsize=64)
def _clock_at_zero(machine: Machine) -> np.ndarray:
    clock = np.zeros(SLOT0 + 3 * machine.slots, dtype=np.int64)
    clock[SLOTS] = machine.slots
    clock[DMA_CYCLES] = machine.dma_cycles
    clock[MXU_CYCLES] = machine.mxu_cycles
    clock[FILL] = machine.mxu_fill
    for op in (ZERO, VOP, EXP, VSCALE, ROWRED, BCASTCOL, MASKLEN):
        clock[DURATION + op] = vector_duration(machine, op)
    clock.setflags(write=False)
    return clock


def time_checked(machine: Machine, clock: np.ndarray, rows: np.ndarray, times: np.ndarray = NO_TIMES) -> None:
    """time_rows, raising ProgramError (as the reference's checks do) on a malformed row."""
    bad = time_rows(clock, *slot_rows(clock), rows, rows.shape[0], times)
    if bad >= 0:
        row = rows[bad]
        check_slots(machine, Program(code=row.reshape(1, -1)))
        raise ProgramError(f"instruction {int(clock[COUNT]) + bad} has unknown opcode {int(row[0])}")


def timing_of(clock: np.ndarray) -> Timing:
    """The totals of everything timed so far."""
    dma = int(clock[LOADS] + clock[STORES]) * int(clock[DMA_CYCLES])
    vpu = int(clock[VPU_BUSY] + clock[ZEROS] * clock[DURATION + ZERO])
    return Timing(cycles=int(clock[END]), busy=(dma, int(clock[PRODUCTS] * clock[MXU_CYCLES]), vpu),
                  loads=int(clock[LOADS]), stores=int(clock[STORES]), products=int(clock[PRODUCTS]))


def slot_rows(clock: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The clock's per-slot rows, as views: ready, acc_ready, last_read (passed to the kernels
    apart from the clock, so the compiler can keep each one's address at hand)."""
    n = int(clock[SLOTS])
    return clock[SLOT0:SLOT0 + n], clock[SLOT0 + n:SLOT0 + 2 * n], clock[SLOT0 + 2 * n:SLOT0 + 3 * n]


@kernel
def _vector(clock: np.ndarray, ready: np.ndarray, acc_ready: np.ndarray, last_read: np.ndarray,
        rows: np.ndarray, index: int, times: np.ndarray) -> bool:
    """One vector-unit instruction other than zero: reads s1 (and s2) and writes s0; masklen reads
    and writes s0. False if it reads a slot the scratchpad does not have."""
    op, s0, s1, s2 = rows[index, 0], rows[index, 2], rows[index, 3], rows[index, 4]
    reads = 1 if op == MASKLEN or s2 == NONE else 2
    first, slots = s0 if op == MASKLEN else s1, ready.shape[0]
    if first < 0 or first >= slots or (reads > 1 and (s2 < 0 or s2 >= slots)):
        return False
    start = max(clock[VPU_FREE], ready[first])
    if reads > 1:
        start = max(start, ready[s2])
    start = max(start, last_read[s0], ready[s0])
    finish = start + clock[DURATION + op]
    last_read[first] = max(last_read[first], finish)
    if reads > 1:
        last_read[s2] = max(last_read[s2], finish)
    ready[s0] = finish
    acc_ready[s0] = finish
    clock[VPU_FREE] = finish
    clock[VPU_BUSY] += finish - start
    clock[END] = max(clock[END], finish)
    if times.shape[0] > 0:
        times[index, 0], times[index, 1] = start, finish
    return True


@kernel
def _transfers_and_products(clock: np.ndarray, ready: np.ndarray, acc_ready: np.ndarray,
        last_read: np.ndarray, rows: np.ndarray, index: int, n: int, times: np.ndarray) -> int:
    """Time rows from `index` until one that is neither a load, a store, a product nor a zero
    (returned; n at the end), in local variables: the hot loop. A malformed row is also where
    it stops, with clock[BAD] set."""
    dma_free, mxu_free, vpu_free, end = clock[DMA_FREE], clock[MXU_FREE], clock[VPU_FREE], clock[END]
    loads, stores, products, zeros = clock[LOADS], clock[STORES], clock[PRODUCTS], clock[ZEROS]
    dma_cycles, mxu_cycles, fill, zero = clock[DMA_CYCLES], clock[MXU_CYCLES], clock[FILL], clock[DURATION + ZERO]
    record, slots = times.shape[0] > 0, ready.shape[0]
    while index < n:
        op, s0, s1, s2 = rows[index, 0], rows[index, 2], rows[index, 3], rows[index, 4]
        if s0 < 0 or s0 >= slots or (op == MXU and (s1 < 0 or s1 >= slots or s2 < 0 or s2 >= slots)):
            clock[BAD] = index
            break
        if op == MXU:  # c=s0 accumulates, a=s1 and b=s2 are read
            start = max(mxu_free, ready[s1], ready[s2], acc_ready[s0], last_read[s0])
            finish = start + mxu_cycles
            mxu_free = finish
            last_read[s1] = max(last_read[s1], finish)
            last_read[s2] = max(last_read[s2], finish)
            last_read[s0] = finish  # finish >= the old value: the start waited for it
            ready[s0] = finish + fill
            acc_ready[s0] = finish
            end = max(end, finish + fill)
            products += 1
        elif op == LOAD:  # writes s0
            start = max(dma_free, last_read[s0], ready[s0])
            finish = start + dma_cycles
            dma_free = finish
            ready[s0] = finish
            acc_ready[s0] = finish
            end = max(end, finish)
            loads += 1
        elif op == STORE:  # reads s0
            start = max(dma_free, ready[s0])
            finish = start + dma_cycles
            dma_free = finish
            last_read[s0] = max(last_read[s0], finish)
            end = max(end, finish)
            stores += 1
        elif op == ZERO:  # the vector unit writes s0, reading nothing
            start = max(vpu_free, last_read[s0], ready[s0])
            finish = start + zero
            vpu_free = finish
            zeros += 1
            ready[s0] = finish
            acc_ready[s0] = finish
            end = max(end, finish)
        else:
            break
        if record:
            times[index, 0], times[index, 1] = start, finish
        index += 1
    clock[DMA_FREE], clock[MXU_FREE], clock[VPU_FREE], clock[END] = dma_free, mxu_free, vpu_free, end
    clock[LOADS], clock[STORES], clock[PRODUCTS], clock[ZEROS] = loads, stores, products, zeros
    return index


@kernel
def time_rows(clock: np.ndarray, ready: np.ndarray, acc_ready: np.ndarray, last_read: np.ndarray,
        rows: np.ndarray, n: int, times: np.ndarray) -> int:
    """Time rows[0:n] in program order (ready, acc_ready and last_read: the clock's slot_rows);
    with a non-empty `times`, record each start and finish. Returns -1, or the first malformed
    row: an unknown opcode or a slot the rule would touch outside 0..slots-1 (nothing from it on
    is timed: a kernel never touches memory outside its arrays)."""
    clock[BAD] = -1
    index = 0
    while index < n and clock[BAD] < 0:
        index = _transfers_and_products(clock, ready, acc_ready, last_read, rows, index, n, times)
        if index < n and clock[BAD] < 0:
            op = rows[index, 0]
            if op <= ZERO or op > MASKLEN or not _vector(clock, ready, acc_ready, last_read, rows, index, times):
                clock[BAD] = index
            else:
                index += 1
    clock[COUNT] += index
    return clock[BAD]
