"""GA-1's timing rule, compiled (simcore/ga1/timing.py's `run_timing` is the reference).

A `clock` is one flat array: the engines' free times and totals, the machine's cycle counts, the
slot count, and from SLOT0 a row of four per slot (one slot's times share a cache line): when
its value may be read (READY), when the next accumulation into it may start (ACC_READY), and
when the last read of its value ends, kept in two parts: the last product that read or
accumulated it (BY_MXU) and the last store or vector instruction that read it (BY_OTHERS). The
reference's last_read is the larger of the two. The matrix unit's finishes only grow, so a
product sets BY_MXU instead of taking a maximum: consecutive products reading the same tile do
not wait for each other's update of it. `time_rows` applies the rule to a run of program rows,
given flat (row after row of WIDTH values), and leaves the clock where they end, so a program
can be timed chunk by chunk as a generator emits it, never held whole.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import inline_ir, kernel
from simcore.ga1.machine import Machine
from simcore.ga1.program import (
    LOAD,
    MASKLEN,
    MXU,
    NONE,
    OPCODE_NAMES,
    STORE,
    TRANSPOSE,
    WIDTH,
    ZERO,
    Program,
    ProgramError,
)
from simcore.ga1.timing import VECTOR_OPCODES, Timing, check_slots, vector_duration

# The DMA is busy DMA_CYCLES per transfer and the matrix unit MXU_CYCLES per product, so their busy
# times follow from the counts (timing_of); VPU_BUSY adds up vector durations, ZEROS counts zeros.
(
    DMA_FREE,
    MXU_FREE,
    VPU_FREE,
    ZEROS,
    VPU_BUSY,
    END,
    LOADS,
    STORES,
    PRODUCTS,
    COUNT,
    DMA_CYCLES,
    MXU_CYCLES,
    FILL,
) = range(13)
DURATION = 13  # DURATION + opcode: a vector-unit instruction's cycles
SLOTS = DURATION + len(OPCODE_NAMES)  # the slot count
BAD = SLOTS + 1  # the first malformed row time_rows met, or -1
SLOT0 = 32  # then READY, ACC_READY, BY_MXU and BY_OTHERS of every slot, slot after slot
READY, ACC_READY, BY_MXU, BY_OTHERS = range(4)
PER_SLOT = 4

NO_TIMES = np.zeros((0, 2), dtype=np.int64)  # a run that records no start and finish


def new_clock(machine: Machine) -> np.ndarray:
    """A clock at cycle 0 for the machine: every engine free, every slot ready."""
    kept = _CLOCKS.get(id(machine))
    if (
        kept is None or kept[0] is not machine
    ):  # hashing a Machine costs more than timing a small program
        if len(_CLOCKS) >= 64:
            _CLOCKS.clear()
        kept = _CLOCKS[id(machine)] = (machine, _clock_at_zero(machine))
    return kept[1].copy()


_CLOCKS: dict[
    int, tuple[Machine, np.ndarray]
] = {}  # by the machine's id (the machine is kept, so the id is its own)


def _clock_at_zero(machine: Machine) -> np.ndarray:
    clock = np.zeros(SLOT0 + PER_SLOT * machine.slots, dtype=np.int64)
    clock[SLOTS] = machine.slots
    clock[DMA_CYCLES] = machine.dma_cycles
    clock[MXU_CYCLES] = machine.mxu_cycles
    clock[FILL] = machine.mxu_fill
    for op in VECTOR_OPCODES:
        clock[DURATION + op] = vector_duration(machine, op)
    return clock


def time_checked(
    machine: Machine, clock: np.ndarray, rows: np.ndarray, times: np.ndarray = NO_TIMES
) -> None:
    """time_rows over an (n, WIDTH) array of rows, raising ProgramError (as the reference's
    checks do) on a malformed row."""
    flat = rows.reshape(-1) if rows.flags.c_contiguous else np.ascontiguousarray(rows).reshape(-1)
    raise_if_bad(machine, clock, rows, time_rows(clock, flat, rows.shape[0], times))


def raise_if_bad(machine: Machine, clock: np.ndarray, rows: np.ndarray, bad: int) -> None:
    """The reference's error for the malformed row `bad` of `rows` (the clock stopped there)."""
    if bad >= 0:
        row = rows[bad]
        check_slots(machine, Program(code=row.reshape(1, -1)))
        raise ProgramError(
            f"instruction {int(clock[COUNT]) + bad} has unknown opcode {int(row[0])}"
        )


def timing_of(clock: np.ndarray) -> Timing:
    """The totals of everything timed so far."""
    v = clock[: DURATION + ZERO + 1].tolist()  # Python integers, read at once
    loads, stores, products = v[LOADS], v[STORES], v[PRODUCTS]
    busy = (
        (loads + stores) * v[DMA_CYCLES],
        products * v[MXU_CYCLES],
        v[VPU_BUSY] + v[ZEROS] * v[DURATION + ZERO],
    )
    return Timing(v[END], busy, loads, stores, products)


@kernel
def _vector(clock: np.ndarray, rows: np.ndarray, index: int, times: np.ndarray) -> bool:
    """One vector-unit instruction other than zero: reads s1 (and s2) and writes s0; masklen reads
    and writes s0. False if it reads a slot the scratchpad does not have."""
    at = index * WIDTH
    op, s0, s1, s2 = rows[at], rows[at + 2], rows[at + 3], rows[at + 4]
    reads = 1 if op == MASKLEN or s2 == NONE else 2
    first, slots = s0 if op == MASKLEN else s1, clock[SLOTS]
    if first < 0 or first >= slots or (reads > 1 and (s2 < 0 or s2 >= slots)):
        return False
    a, b, c = SLOT0 + PER_SLOT * first, SLOT0 + PER_SLOT * s2, SLOT0 + PER_SLOT * s0
    start = max(clock[VPU_FREE], clock[a + READY])
    if reads > 1:
        start = max(start, clock[b + READY])
    start = max(start, clock[c + BY_MXU], clock[c + BY_OTHERS], clock[c + READY])
    finish = start + clock[DURATION + op]
    clock[a + BY_OTHERS] = max(clock[a + BY_OTHERS], finish)
    if reads > 1:
        clock[b + BY_OTHERS] = max(clock[b + BY_OTHERS], finish)
    clock[c + READY] = finish
    clock[c + ACC_READY] = finish
    clock[VPU_FREE] = finish
    clock[VPU_BUSY] += finish - start
    if times.shape[0] > 0:
        times[index, 0], times[index, 1] = start, finish
    return True


@kernel
def _transfers_and_products(
    clock: np.ndarray, rows: np.ndarray, index: int, n: int, times: np.ndarray
) -> int:
    """Time rows from `index` until one that is neither a load, a store, a product nor a zero
    (returned; n at the end), in local variables: the hot loop. A malformed row is also where
    it stops, with clock[BAD] set to 1."""
    # rows and times from `index` on, so the loop counts from 0 (no test for negative indices),
    # and two copies of the loop: one records, the other has no test for it
    if times.shape[0] > 0:
        return index + _hot_loop(clock, rows[index * WIDTH :], n - index, times[index:], True)
    return index + _hot_loop(clock, rows[index * WIDTH :], n - index, times, False)


@inline_ir
def _hot_loop(clock: np.ndarray, rows: np.ndarray, n: int, times: np.ndarray, record: bool) -> int:
    dma_free, mxu_free, vpu_free = clock[DMA_FREE], clock[MXU_FREE], clock[VPU_FREE]
    loads, stores, products, zeros = clock[LOADS], clock[STORES], clock[PRODUCTS], clock[ZEROS]
    dma_cycles, mxu_cycles, fill, zero = (
        clock[DMA_CYCLES],
        clock[MXU_CYCLES],
        clock[FILL],
        clock[DURATION + ZERO],
    )
    slots = clock[SLOTS]
    slot = clock[SLOT0:]  # a slot's READY, ACC_READY, BY_MXU and BY_OTHERS from PER_SLOT * slot
    index = 0
    while index < n:
        at = index * WIDTH
        op, s0, s1, s2 = rows[at], rows[at + 2], rows[at + 3], rows[at + 4]
        if (
            s0 < 0
            or s0 >= slots
            or (op == MXU and (s1 < 0 or s1 >= slots or s2 < 0 or s2 >= slots))
        ):
            clock[BAD] = 1  # time_rows finds the row
            break
        c = PER_SLOT * s0
        if op == MXU:  # c=s0 accumulates, a=s1 and b=s2 are read
            a, b = PER_SLOT * s1, PER_SLOT * s2
            start = max(
                mxu_free,
                slot[a + READY],
                slot[b + READY],
                slot[c + ACC_READY],
                slot[c + BY_MXU],
                slot[c + BY_OTHERS],
            )
            finish = start + mxu_cycles
            mxu_free = finish
            slot[a + BY_MXU] = finish  # the last read of a, b and c: no product finished later
            slot[b + BY_MXU] = finish
            slot[c + BY_MXU] = finish
            slot[c + READY] = finish + fill
            slot[c + ACC_READY] = finish
            products += 1
        elif op == LOAD:  # writes s0
            start = max(dma_free, slot[c + BY_MXU], slot[c + BY_OTHERS], slot[c + READY])
            finish = start + dma_cycles
            dma_free = finish
            slot[c + READY] = finish
            slot[c + ACC_READY] = finish
            loads += 1
        elif op == STORE:  # reads s0
            start = max(dma_free, slot[c + READY])
            finish = start + dma_cycles
            dma_free = finish
            slot[c + BY_OTHERS] = max(slot[c + BY_OTHERS], finish)
            stores += 1
        elif op == ZERO:  # the vector unit writes s0, reading nothing
            start = max(vpu_free, slot[c + BY_MXU], slot[c + BY_OTHERS], slot[c + READY])
            finish = start + zero
            vpu_free = finish
            zeros += 1
            slot[c + READY] = finish
            slot[c + ACC_READY] = finish
        else:
            break
        if record:
            times[index, 0], times[index, 1] = start, finish
        index += 1
    clock[DMA_FREE], clock[MXU_FREE], clock[VPU_FREE] = dma_free, mxu_free, vpu_free
    clock[LOADS], clock[STORES], clock[PRODUCTS], clock[ZEROS] = loads, stores, products, zeros
    return index


@kernel
def time_rows(clock: np.ndarray, rows: np.ndarray, n: int, times: np.ndarray) -> int:
    """Time the first n rows of `rows` (flat) in program order; with a non-empty `times`, record
    each start and finish. Returns -1, or the first malformed row: an unknown opcode or a slot the
    rule would touch outside 0..slots-1 (nothing from it on is timed: a kernel never touches
    memory outside its arrays)."""
    clock[BAD] = -1
    index = 0
    while index < n:
        index = _transfers_and_products(clock, rows, index, n, times)
        if clock[BAD] >= 0:  # the hot loop stopped at a malformed row
            clock[BAD] = index
            break
        if index < n:
            op = rows[index * WIDTH]
            if op <= ZERO or op > TRANSPOSE or not _vector(clock, rows, index, times):
                clock[BAD] = index
                break
            index += 1
    clock[COUNT] += index
    # Every engine's finishes only grow, so the last instruction to finish is the last of one engine.
    last_product = clock[MXU_FREE] + clock[FILL] if clock[PRODUCTS] > 0 else 0
    clock[END] = max(clock[DMA_FREE], clock[VPU_FREE], last_product)
    return clock[BAD]
