"""The compiled engine over materialised programs, with the reference's interfaces: `simulate`,
`time_program`, `execute`, `replay` and `verify_program` (simcore/ga1/simulator.py, timing.py,
functional.py, hazards.py and verify.py are the references they are held to)."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence, cast

import numpy as np

from simcore.ga1.engine.functional import COMPILED_OPS, execute_rows
from simcore.ga1.engine.generators import Materialised, hazards_found
from simcore.ga1.engine.hazards import new_history, replay_records
from simcore.ga1.engine.timing import NO_TIMES, new_clock, time_checked, timing_of
from simcore.ga1.functional import execute as reference_execute
from simcore.ga1.hazards import Hazard
from simcore.ga1.machine import Machine
from simcore.ga1.program import LOAD, MATMUL_TENSORS, OP, STORE, TENSOR, Program, ProgramError
from simcore.ga1.simulator import SimResult, sim_result, trace_records, validate_program
from simcore.ga1.timing import Timing
from simcore.ga1.verify import Verification
from simcore.shape import Shape

# One instruction of a trace: index, engine, start, finish, slots read, slots written, fill.
_Record = tuple[int, str, int, int, Sequence[int], Sequence[int], int]


def time_program(machine: Machine, program: Program, record: bool = False) -> Timing:
    """`run_timing`, compiled: the totals, and with `record` every start and finish."""
    clock = new_clock(machine)
    times = np.zeros((len(program), 2), dtype=np.int64) if record else NO_TIMES
    time_checked(machine, clock, program.code, times)
    timing = timing_of(clock)
    if not record:
        return timing
    return Timing(
        timing.cycles,
        timing.busy,
        timing.loads,
        timing.stores,
        timing.products,
        starts=times[:, 0].copy(),
        finishes=times[:, 1].copy(),
    )


def simulate(
    machine: Machine,
    program: Program,
    *,
    inputs: Mapping[str, np.ndarray] | None = None,
    trace: bool = False,
) -> SimResult:
    """simcore.ga1.simulator.simulate, with compiled timing and (for programs of load, store,
    zero and product) compiled arithmetic."""
    validate_program(machine, program)
    timing = time_program(machine, program, record=trace)
    records = trace_records(machine, program, timing.starts, timing.finishes) if trace else None
    outputs = execute(machine, program, inputs) if inputs is not None else None
    return sim_result(machine, program, timing, records, outputs)


def _compiled_arithmetic(program: Program, dram: Mapping[str, np.ndarray]) -> bool:
    """The compiled functional mode covers programs of load, store, zero and product over at
    most three 2-D tensors; anything else runs the reference's arithmetic."""
    ops = set(np.unique(program.code[:, OP]).tolist()) if len(program) else set()
    return (
        ops <= COMPILED_OPS
        and len(program.tensors) <= 3
        and all(np.ndim(dram[name]) == 2 for name in program.tensors if name in dram)
    )


def execute(
    machine: Machine, program: Program, dram: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """simcore.ga1.functional.execute: the program's arithmetic on copies of the tensors."""
    if not _compiled_arithmetic(program, dram):
        return reference_execute(machine, program, dram)
    validate_program(machine, program)  # the kernel trusts its slots and coordinates
    memory = {name: np.array(value, dtype=np.float64, copy=True) for name, value in dram.items()}
    code = program.code
    moves = (code[:, OP] == LOAD) | (code[:, OP] == STORE)
    for index, name in enumerate(program.tensors):
        if name not in memory and np.any(moves & (code[:, TENSOR] == index)):
            raise ProgramError(f"program uses tensor {name!r}, which is not in DRAM")
    empty = np.zeros((0, 0))
    tensors = [memory.get(name, empty) for name in program.tensors] + [empty] * (
        3 - len(program.tensors)
    )
    spad = np.zeros((machine.slots, machine.T, machine.T))
    execute_rows(
        spad,
        np.zeros((machine.T, machine.T)),
        tensors[0],
        tensors[1],
        tensors[2],
        code,
        len(program),
    )
    return memory


def replay(trace: Iterable[Sequence[object]]) -> list[Hazard]:
    """simcore.ga1.hazards.replay, compiled: every hazard in the trace."""
    records = list(trace)
    n = len(records)
    most_reads = max((len(r[4]) for r in records), default=1)  # type: ignore[arg-type]
    most_writes = max((len(r[5]) for r in records), default=1)  # type: ignore[arg-type]
    table = np.zeros((n, 4), dtype=np.int64)
    reads = np.zeros((n, max(most_reads, 1)), dtype=np.int64)
    writes = np.zeros((n, max(most_writes, 1)), dtype=np.int64)
    read_counts, write_counts = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    most_slot = 0
    for row, record in enumerate(records):
        index, _engine, start, finish, slots_read, slots_written, fill = cast(_Record, record)
        table[row] = (index, start, finish, fill)
        read_counts[row], write_counts[row] = len(slots_read), len(slots_written)
        reads[row, : len(slots_read)] = slots_read
        writes[row, : len(slots_written)] = slots_written
        most_slot = max(most_slot, *slots_read, *slots_written, 0)
    found, count = np.zeros((4 * n + 1, 5), dtype=np.int64), np.zeros(1, dtype=np.int64)
    replay_records(
        new_history(most_slot + 1), found, count, table, reads, read_counts, writes, write_counts
    )
    return list(hazards_found(found, int(count[0])))


def verify_program(machine: Machine, program: Program, shape: Shape, seed: int = 1) -> Verification:
    """verify_matmul, compiled, over a materialised program (its tensors must be A, B and C)."""
    validate_program(machine, program)
    if program.tensors[:3] != MATMUL_TENSORS[: len(program.tensors)] or not _compiled_arithmetic(
        program, {}
    ):
        from simcore.ga1.verify import verify_matmul

        return verify_matmul(machine, program, shape, seed)[0]
    return Materialised(shape, machine, lambda: program).verify(seed)
