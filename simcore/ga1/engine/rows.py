"""A generator's state: one flat integer array holding its parameters, its working state and the
chunk of program rows it is emitting, so a kernel needs no other argument (every array a kernel
call passes costs as much as a small piece of work).

Every generator's state starts with the same fields: how many rows the current chunk holds
(OUT), where the chunk is (OUT_AT) and how many rows fit (CAPACITY), and whether the whole
program has been emitted (DONE). `assemble` lays out a state from its header fields and sections.
"""

from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from simcore.ga1.engine.jit import inline
from simcore.ga1.program import NONE, WIDTH

OUT, OUT_AT, CAPACITY, DONE = range(4)
COMMON = 4

Section = tuple[
    int, int, Union[None, int, Sequence[int], np.ndarray]
]  # (offset field, length, contents)


def assemble(
    header: int, fields: dict[int, int], sections: Sequence[Section], chunk_rows: int
) -> np.ndarray:
    """A state: `header` fields (the given ones set), each section at the offset its field
    records (filled with a value or given contents), and room for `chunk_rows` rows (whose
    contents are left as they come: a chunk is written before it is read)."""
    head = [0] * header
    for field, value in fields.items():
        head[field] = value
    at = header
    for field, length, _ in sections:
        head[field] = at
        at += length
    head[OUT_AT], head[CAPACITY] = at, chunk_rows
    st = np.empty(at + chunk_rows * WIDTH, dtype=np.int64)
    st[:header] = head
    at = header
    for _, length, contents in sections:
        if contents is not None:  # None: a kernel initialises the section
            st[at : at + length] = contents
        at += length
    return st


def chunk(st: np.ndarray) -> np.ndarray:
    """The rows emitted into the current chunk, as an (n, WIDTH) view."""
    at = int(st[OUT_AT])
    return st[at : at + WIDTH * int(st[OUT])].reshape(-1, WIDTH)


@inline
def room(st: np.ndarray, rows: int) -> bool:
    """Whether the chunk has room for `rows` more."""
    return st[OUT] + rows <= st[CAPACITY]


@inline
def emit(st: np.ndarray, op: int, s0: int, s1: int, s2: int, t: int, x: int, y: int) -> None:
    at = st[OUT_AT] + WIDTH * st[OUT]
    st[at], st[at + 1], st[at + 2], st[at + 3], st[at + 4], st[at + 5], st[at + 6], st[at + 7] = (
        op,
        NONE,
        s0,
        s1,
        s2,
        t,
        x,
        y,
    )
    st[OUT] += 1
