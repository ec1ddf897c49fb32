"""One kernel per chunk, and generation and timing fused in one call: a timing-only evaluation
crosses from Python into compiled code once, not once per chunk. The compiled generators
(compile.py) and the chapter's (chapter.py, or a materialised program) have kernels apart, so a
program of the chapter's never waits for the general compiler to compile."""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.chapter import run_blocked, run_kouter
from simcore.ga1.engine.compile import run_general
from simcore.ga1.engine.compile_state import FAILED_AT
from simcore.ga1.engine.jit import kernel
from simcore.ga1.engine.rows import CAPACITY, DONE, OUT, OUT_AT
from simcore.ga1.engine.timing import time_rows

BLOCKED, KOUTER, MATERIALISED = range(
    3
)  # a chapter generator's kind: which kernel emits its chunks


@kernel
def compiled_chunk(st: np.ndarray) -> None:
    """Emit the next chunk of a compiled generator's rows into its state."""
    st[OUT] = 0
    run_general(st)


@kernel
def chapter_chunk(kind: int, st: np.ndarray) -> None:
    """Emit the next chunk of rows into the state (a materialised program is one chunk)."""
    st[OUT] = 0
    if kind == BLOCKED:
        run_blocked(st)
    elif kind == KOUTER:
        run_kouter(st)
    else:
        st[OUT], st[DONE] = st[CAPACITY], 1


@kernel
def time_compiled(st: np.ndarray, clock: np.ndarray, times: np.ndarray) -> int:
    """Chunk after chunk, emit and time until the program ends or the generator fails (its state
    says why). Returns -1, or the first malformed row of the last chunk (timed up to it)."""
    while True:
        compiled_chunk(st)
        if st[FAILED_AT] >= 0:
            return -1
        bad = time_rows(clock, st[st[OUT_AT] :], st[OUT], times)
        if bad >= 0 or st[DONE] == 1:
            return bad


@kernel
def time_chapter(kind: int, st: np.ndarray, clock: np.ndarray, times: np.ndarray) -> int:
    """time_compiled, for a chapter generator of this kind."""
    while True:
        chapter_chunk(kind, st)
        bad = time_rows(clock, st[st[OUT_AT] :], st[OUT], times)
        if bad >= 0 or st[DONE] == 1:
            return bad
