"""When each engine is busy, as few spans as draw the same picture: a timeline of a large program
has millions of instructions, but an engine that runs them back to back is one busy span.

`busy_spans` splits a timed program's transfers and products into three rows (DMA loads, DMA
stores, the matrix unit) and merges, within a row, each instruction that starts when the previous
one finishes; instructions that take no time are left out (they draw nothing). With `most`, gaps
narrower than cycles / `most` are merged too (far below a pixel when `most` is a few thousand), so
a row has at most about `most` spans whatever the program: a picture's memory stays bounded.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import kernel
from simcore.ga1.program import LOAD, MXU, OP, STORE, Program

ROWS = (LOAD, STORE, MXU)  # the rows' opcodes, in drawing order


@kernel
def _merge(
    ops: np.ndarray, starts: np.ndarray, finishes: np.ndarray, op: int, out: np.ndarray, gap: int
) -> int:
    """The busy spans of the instructions with opcode `op`, into out (one row per span), spans
    at most `gap` cycles apart merged; returns how many."""
    count, first, last = 0, -1, -1  # the open span, first < 0: none yet
    for index in range(ops.shape[0]):
        start, finish = starts[index], finishes[index]
        if ops[index] != op or finish <= start:
            continue
        if (
            first >= 0 and start <= last + gap
        ):  # back to back with the open span (an engine never overlaps itself)
            last = max(last, finish)
            continue
        if first >= 0:
            out[count, 0], out[count, 1] = first, last
            count += 1
        first, last = start, finish
    if first >= 0:
        out[count, 0], out[count, 1] = first, last
        count += 1
    return count


def busy_spans(
    program: Program, starts: np.ndarray, finishes: np.ndarray, most: int | None = None
) -> list[np.ndarray]:
    """Per row of ROWS, an (n, 2) array of (start, finish) busy spans in time order; with
    `most`, about that many at most (gaps under cycles / `most` merged)."""
    ops = np.ascontiguousarray(program.code[:, OP])
    starts, finishes = (
        np.ascontiguousarray(starts, dtype=np.int64),
        np.ascontiguousarray(finishes, dtype=np.int64),
    )
    end = int(finishes.max()) if len(finishes) else 0
    gap = 0 if most is None else end // max(1, most)
    found = []
    for op in ROWS:
        out = np.zeros((int(np.count_nonzero(ops == op)), 2), dtype=np.int64)
        found.append(out[: _merge(ops, starts, finishes, op, out, gap)].copy())
    return found


def first_instructions(
    program: Program, starts: np.ndarray, finishes: np.ndarray, before: int
) -> list[np.ndarray]:
    """Per row of ROWS, the (start, finish) of each instruction that starts before cycle `before`
    (and takes time), in program order."""
    ops = program.code[:, OP]
    shown = (finishes > starts) & (starts < before)
    return [
        np.stack([starts[chosen], finishes[chosen]], axis=1)
        for chosen in (shown & (ops == op) for op in ROWS)
    ]
