"""GA-1's timing rule, written once.

Every instruction goes to one engine's in-order queue (DMA, matrix unit, vector unit). It starts
when its engine is free, when every slot it reads has been written (plus the fill, for a product
read by anyone but the next accumulation), and when every slot it overwrites has been read by
all earlier readers. Accumulating into a slot chains on the previous product without the fill.

`run_timing` walks a compact program and returns the start and finish of every instruction plus
the engine totals. It does no arithmetic: functional mode adds that on top, in program order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simcore.ga1.machine import Machine
from simcore.ga1.program import (
    BCASTCOL,
    EXP,
    LOAD,
    MASKLEN,
    MXU,
    NONE,
    OPCODE_NAMES,
    ROWRED,
    S0,
    S2,
    SFU,
    STORE,
    TRANSPOSE,
    VOP,
    VSCALE,
    ZERO,
    Program,
    ProgramError,
)

DMA, MXU_ENGINE, VPU = 0, 1, 2
ENGINE_NAMES: tuple[str, ...] = ("dma", "mxu", "vpu")
# Every vector-unit opcode, the extensions (sfu, transpose) last.
VECTOR_OPCODES: tuple[int, ...] = (
    ZERO,
    VOP,
    EXP,
    VSCALE,
    ROWRED,
    BCASTCOL,
    MASKLEN,
    SFU,
    TRANSPOSE,
)


@dataclass(frozen=True, eq=False)
class Timing:
    """What the timing rule decided: per-instruction start/finish and engine totals.

    `method` says how the totals were reached: "full" (every instruction simulated) or
    "periodic" (the machine's steady state detected and whole periods jumped, exactly; see
    simcore/ga1/engine/periodic.py). `simulated` is the tile products actually simulated (all of
    them for "full"; None when not counted)."""

    cycles: int
    busy: tuple[int, int, int]
    loads: int
    stores: int
    products: int
    starts: np.ndarray | None = None
    finishes: np.ndarray | None = None
    method: str = "full"
    simulated: int | None = None

    @property
    def tiles_moved(self) -> int:
        return self.loads + self.stores

    def mxu_util(self, machine: Machine) -> float:
        """The share of the matrix unit's peak the run used (as SimResult.mxu_util)."""
        return self.products * machine.T**3 / (machine.peak_macs_per_cycle * max(self.cycles, 1))

    @property
    def dma_busy(self) -> float:
        return self.busy[DMA] / max(self.cycles, 1)


def vector_duration(machine: Machine, op: int) -> int:
    """Cycles of a vector-unit instruction (zero and masklen take one). The sfu extension costs
    what exp does (the same special-function lanes); transpose what a lane pass does."""
    lanes_pass = math.ceil(machine.tile_words / machine.vpu_lanes)
    if op in (ZERO, MASKLEN):
        return 1
    if op in (EXP, SFU):
        return math.ceil(machine.tile_words / machine.sfu_lanes) + 1
    if op == ROWRED:
        return lanes_pass + 3
    return lanes_pass + 1


def check_slots(machine: Machine, program: Program) -> None:
    """Reject a program that names a slot the scratchpad does not have."""
    if not len(program):
        return
    slots = program.code[:, S0 : S2 + 1]
    used = slots[slots != NONE]
    if used.size and (used.min() < 0 or used.max() >= machine.slots):
        bad = int(used.max() if used.max() >= machine.slots else used.min())
        raise ProgramError(
            f"program uses slot {bad}, the scratchpad has slots 0..{machine.slots - 1}"
        )


def run_timing(machine: Machine, program: Program, record: bool = False) -> Timing:
    """Apply the timing rule to every instruction, in program order."""
    n_slots = machine.slots
    ready = [0] * n_slots  # when a slot's value may be read by a non-accumulating reader
    acc_ready = [0] * n_slots  # when the next accumulation into the slot may start
    last_read = [0] * n_slots  # when the last read of the slot's current value finishes
    dma_free = mxu_free = vpu_free = 0
    dma_busy = mxu_busy = vpu_busy = 0
    end = 0
    loads = stores = products = 0
    dma_cycles = machine.dma_cycles
    mxu_cycles = machine.mxu_cycles
    fill = machine.mxu_fill
    durations = [0] * len(OPCODE_NAMES)
    for op in VECTOR_OPCODES:
        durations[op] = vector_duration(machine, op)
    n = len(program)
    starts = [0] * n if record else None
    finishes = [0] * n if record else None

    for index, (op, _sub, s0, s1, s2, _t, _x, _y) in enumerate(program.rows):
        if op == MXU:  # c=s0 accumulates, a=s1 and b=s2 are read
            start = mxu_free
            r = ready[s1]
            if r > start:
                start = r
            r = ready[s2]
            if r > start:
                start = r
            r = acc_ready[s0]
            if r > start:
                start = r
            r = last_read[s0]
            if r > start:
                start = r
            finish = start + mxu_cycles
            mxu_free = finish
            mxu_busy += mxu_cycles
            if last_read[s1] < finish:
                last_read[s1] = finish
            if last_read[s2] < finish:
                last_read[s2] = finish
            last_read[s0] = finish  # finish >= the old value: the start waited for it
            ready[s0] = finish + fill
            acc_ready[s0] = finish
            if finish + fill > end:
                end = finish + fill
            products += 1
        elif op == LOAD:  # writes s0
            start = dma_free
            r = last_read[s0]
            if r > start:
                start = r
            r = ready[s0]
            if r > start:
                start = r
            finish = start + dma_cycles
            dma_free = finish
            dma_busy += dma_cycles
            ready[s0] = finish
            acc_ready[s0] = finish
            if finish > end:
                end = finish
            loads += 1
        elif op == STORE:  # reads s0
            start = dma_free
            r = ready[s0]
            if r > start:
                start = r
            finish = start + dma_cycles
            dma_free = finish
            dma_busy += dma_cycles
            if last_read[s0] < finish:
                last_read[s0] = finish
            if finish > end:
                end = finish
            stores += 1
        else:  # vector unit: reads s1 (and s2), writes s0; masklen reads and writes s0
            duration = durations[op]
            start = vpu_free
            if op == MASKLEN:
                reads: tuple[int, ...] = (s0,)
            elif op == ZERO:
                reads = ()
            elif s2 != NONE:
                reads = (s1, s2)
            else:
                reads = (s1,)
            for s in reads:
                if ready[s] > start:
                    start = ready[s]
            if last_read[s0] > start:
                start = last_read[s0]
            if ready[s0] > start:
                start = ready[s0]
            finish = start + duration
            vpu_free = finish
            vpu_busy += duration
            for s in reads:
                if last_read[s] < finish:
                    last_read[s] = finish
            ready[s0] = finish
            acc_ready[s0] = finish
            if finish > end:
                end = finish
        if record:
            starts[index] = start  # type: ignore[index]
            finishes[index] = finish  # type: ignore[index]

    return Timing(
        cycles=end,
        busy=(dma_busy, mxu_busy, vpu_busy),
        loads=loads,
        stores=stores,
        products=products,
        starts=np.array(starts, dtype=np.int64) if record else None,
        finishes=np.array(finishes, dtype=np.int64) if record else None,
    )


def engines_of(code: np.ndarray) -> np.ndarray:
    """engine_of for every row of a program's code."""
    op = code[:, 0]
    return np.where(op == MXU, MXU_ENGINE, np.where((op == LOAD) | (op == STORE), DMA, VPU))


def engine_of(op: int) -> int:
    if op in (LOAD, STORE):
        return DMA
    if op == MXU:
        return MXU_ENGINE
    return VPU


def reads_writes(row: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Slots an instruction reads and writes, as the trace records them (a product's
    accumulator counts as both read and written, after its operands)."""
    op, _sub, s0, s1, s2 = row[:5]
    if op == LOAD or op == ZERO:
        return (), (s0,)
    if op == STORE:
        return (s0,), ()
    if op == MXU:
        return (s1, s2, s0), (s0,)
    if op == MASKLEN:
        return (s0,), (s0,)
    if op == VOP and s2 != NONE:
        return (s1, s2), (s0,)
    return (s1,), (s0,)
