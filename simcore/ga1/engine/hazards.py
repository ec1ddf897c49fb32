"""The independent hazard replay, compiled (simcore/ga1/hazards.py is the reference).

It sees only what a trace records: each instruction's start, finish, fill and the slots it
reads and writes. Per slot, `history` keeps the write that produced the current value and when
the last read of that value ends. A read must start after the write finished (plus the write's
fill, unless an accumulation reads its own accumulating write), a write after every read of the
slot's previous value. Hazards go to `found` (the first rows; found_count[0] counts them all).
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import callee, kernel
from simcore.ga1.program import LOAD, MASKLEN, MXU, NONE, STORE, VOP, ZERO

READ_TOO_EARLY, WRITE_TOO_EARLY = 0, 1
KINDS = ("read too early", "write too early")
# columns of history: one row per slot
WRITTEN_AT, WRITTEN_FILL, BY_ACCUMULATION, READS_END, SEEN = range(5)
# columns of found: one row per hazard
INDEX, KIND, SLOT, START, EARLIEST = range(5)


def new_history(slots: int) -> np.ndarray:
    """Slots 0..slots-1, never written."""
    table = np.zeros((max(slots, 0), 5), dtype=np.int64)
    table[:, WRITTEN_AT] = -1
    return table


@callee
def _contains(values: np.ndarray, count: int, slot: int) -> bool:
    for i in range(count):
        if values[i] == slot:
            return True
    return False


@callee
def _found(
    found: np.ndarray,
    found_count: np.ndarray,
    index: int,
    kind: int,
    slot: int,
    start: int,
    earliest: int,
) -> None:
    n = found_count[0]
    if n < found.shape[0]:
        found[n, INDEX], found[n, KIND], found[n, SLOT] = index, kind, slot
        found[n, START], found[n, EARLIEST] = start, earliest
    found_count[0] = n + 1


@callee
def _check(
    history: np.ndarray,
    found: np.ndarray,
    found_count: np.ndarray,
    index: int,
    start: int,
    finish: int,
    fill: int,
    reads: np.ndarray,
    n_reads: int,
    writes: np.ndarray,
    n_writes: int,
) -> None:
    """Check one trace record against the history, then record it."""
    for r in range(n_reads):
        slot = reads[r]
        if history[slot, WRITTEN_AT] < 0:
            continue
        chained = _contains(writes, n_writes, slot) and history[slot, BY_ACCUMULATION] == 1
        earliest = history[slot, WRITTEN_AT] + (0 if chained else history[slot, WRITTEN_FILL])
        if start < earliest:
            _found(found, found_count, index, READ_TOO_EARLY, slot, start, earliest)
    for w in range(n_writes):
        slot = writes[w]
        if history[slot, SEEN] == 1 and start < history[slot, READS_END]:
            _found(
                found, found_count, index, WRITE_TOO_EARLY, slot, start, history[slot, READS_END]
            )
    for r in range(n_reads):
        slot = reads[r]
        history[slot, SEEN] = 1
        history[slot, READS_END] = max(history[slot, READS_END], finish)
    for w in range(n_writes):
        slot = writes[w]
        # a new value: its readers start afresh (an accumulation counts as its own read)
        accumulated = _contains(reads, n_reads, slot)
        history[slot, SEEN] = 1
        history[slot, WRITTEN_AT] = finish
        history[slot, WRITTEN_FILL] = fill
        history[slot, BY_ACCUMULATION] = 1 if accumulated else 0
        history[slot, READS_END] = finish if accumulated else 0


@callee
def _trace_slots(
    op: int, s0: int, s1: int, s2: int, reads: np.ndarray, writes: np.ndarray
) -> tuple[int, int]:
    """The slots an instruction's trace record reads and writes (a product reads its operands,
    then its accumulator); returns their counts."""
    if op == LOAD or op == ZERO:
        writes[0] = s0
        return 0, 1
    if op == STORE:
        reads[0] = s0
        return 1, 0
    writes[0] = s0
    if op == MXU:
        reads[0], reads[1], reads[2] = s1, s2, s0
        return 3, 1
    reads[0] = s0 if op == MASKLEN else s1
    if op == VOP and s2 != NONE:
        reads[1] = s2
        return 2, 1
    return 1, 1


@kernel
def replay_rows(
    history: np.ndarray,
    found: np.ndarray,
    found_count: np.ndarray,
    rows: np.ndarray,
    times: np.ndarray,
    n: int,
    first_index: int,
    fill: int,
    scratch: np.ndarray,
) -> None:
    """Replay program rows[0:n] timed by `times` (the trace a simulation records; a product's
    fill is the machine's, every other instruction's 0). first_index numbers the first row;
    scratch has room for an instruction's slots (4)."""
    reads, writes = scratch[:3], scratch[3:]
    for index in range(n):
        op = rows[index, 0]
        n_reads, n_writes = _trace_slots(
            op, rows[index, 2], rows[index, 3], rows[index, 4], reads, writes
        )
        _check(
            history,
            found,
            found_count,
            first_index + index,
            times[index, 0],
            times[index, 1],
            fill if op == MXU else 0,
            reads,
            n_reads,
            writes,
            n_writes,
        )


@kernel
def replay_records(
    history: np.ndarray,
    found: np.ndarray,
    found_count: np.ndarray,
    records: np.ndarray,
    reads: np.ndarray,
    read_counts: np.ndarray,
    writes: np.ndarray,
    write_counts: np.ndarray,
) -> None:
    """Replay a recorded trace: records hold (index, start, finish, fill) rows, reads and writes
    the slots of each record (padded)."""
    for n in range(records.shape[0]):
        _check(
            history,
            found,
            found_count,
            records[n, 0],
            records[n, 1],
            records[n, 2],
            records[n, 3],
            reads[n],
            read_counts[n],
            writes[n],
            write_counts[n],
        )
