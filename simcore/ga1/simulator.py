"""`simulate(machine, program) -> SimResult`: the GA-1 oracle as one pure function."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from simcore.ga1.functional import execute
from simcore.ga1.machine import Machine
from simcore.ga1.program import LOAD, OP, STORE, TENSOR, Program, ProgramError, X, Y
from simcore.ga1.timing import (
    ENGINE_NAMES,
    Timing,
    check_slots,
    engine_of,
    reads_writes,
    run_timing,
)

# One trace record per instruction, as the chapter's checker reads it.
TraceRecord = tuple[int, str, int, int, tuple[int, ...], tuple[int, ...], int]


@dataclass(frozen=True, eq=False)
class SimResult:
    """Counts and timing of one run; `outputs` (functional mode) and `trace` are optional."""

    cycles: int
    tiles_moved: int
    loads: int
    stores: int
    macs: int
    instructions: int
    busy: Mapping[str, int]
    peak_macs_per_cycle: float
    trace: tuple[TraceRecord, ...] | None = None
    outputs: Mapping[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def mxu_util(self) -> float:
        return self.macs / (self.peak_macs_per_cycle * max(self.cycles, 1))

    def busy_fraction(self, engine: str) -> float:
        return self.busy[engine] / max(self.cycles, 1)

    @property
    def dma_busy(self) -> float:
        return self.busy_fraction("dma")

    @property
    def mxu_busy(self) -> float:
        return self.busy_fraction("mxu")

    @property
    def vpu_busy(self) -> float:
        return self.busy_fraction("vpu")

    def report(self) -> dict[str, float | int]:
        return {
            "cycles": self.cycles,
            "tiles_moved": self.tiles_moved,
            "loads": self.loads,
            "stores": self.stores,
            "macs": self.macs,
            "instructions": self.instructions,
            "mxu_util": self.mxu_util,
            "dma_busy": self.dma_busy,
            "mxu_busy": self.mxu_busy,
            "vpu_busy": self.vpu_busy,
        }


def validate_program(machine: Machine, program: Program) -> None:
    """Reject slots outside the scratchpad and negative tile coordinates before running."""
    check_slots(machine, program)
    code = program.code
    moves = (code[:, OP] == LOAD) | (code[:, OP] == STORE)
    if np.any(code[moves][:, [X, Y]] < 0) or np.any(code[moves][:, TENSOR] < 0):
        raise ProgramError("a load or store has a negative tile coordinate")


def simulate(
    machine: Machine,
    program: Program,
    *,
    inputs: Mapping[str, np.ndarray] | None = None,
    trace: bool = False,
) -> SimResult:
    """Run `program` on `machine`.

    Timing-only by default (no arithmetic: what the tuner uses). Given `inputs` (DRAM tensors by
    name, e.g. {"A": a, "B": b, "C": zeros}) it is functional too and returns the updated tensors
    in `outputs`. `trace=True` records every instruction's engine, start, finish, reads, writes
    and fill, for the hazard replay and the timeline.
    """
    validate_program(machine, program)
    timing = run_timing(machine, program, record=trace)
    records = trace_records(machine, program, timing.starts, timing.finishes) if trace else None
    outputs = execute(machine, program, inputs) if inputs is not None else None
    return sim_result(machine, program, timing, records, outputs)


def trace_records(
    machine: Machine, program: Program, starts: np.ndarray | None, finishes: np.ndarray | None
) -> tuple[TraceRecord, ...]:
    """The trace of a timed program: each instruction's engine, start, finish, reads, writes
    and fill (the matrix unit's, for a product)."""
    assert starts is not None and finishes is not None
    fill = machine.mxu_fill
    built = []
    for index, (row, start, finish) in enumerate(
        zip(program.rows, starts.tolist(), finishes.tolist())
    ):
        engine = engine_of(row[0])
        reads, writes = reads_writes(list(row))
        built.append(
            (index, ENGINE_NAMES[engine], start, finish, reads, writes, fill if engine == 1 else 0)
        )
    return tuple(built)


def sim_result(
    machine: Machine,
    program: Program,
    timing: Timing,
    records: tuple[TraceRecord, ...] | None,
    outputs: Mapping[str, np.ndarray] | None,
) -> SimResult:
    return SimResult(
        cycles=timing.cycles,
        tiles_moved=timing.tiles_moved,
        loads=timing.loads,
        stores=timing.stores,
        macs=timing.products * machine.T**3,
        instructions=len(program),
        busy=dict(zip(ENGINE_NAMES, timing.busy)),
        peak_macs_per_cycle=machine.peak_macs_per_cycle,
        trace=records,
        outputs=outputs,
    )


def matmul_inputs(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """DRAM for C = A @ B: A, B, and a zero C of the right shape."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ProgramError(f"cannot multiply shapes {a.shape} and {b.shape}")
    return {
        "A": np.asarray(a, dtype=np.float64),
        "B": np.asarray(b, dtype=np.float64),
        "C": np.zeros((a.shape[0], b.shape[1])),
    }


__all__ = ["SimResult", "simulate", "matmul_inputs", "validate_program", "ProgramError"]
