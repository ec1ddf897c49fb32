"""What the engines of `simcore.systolic.cycle` share: the timing error, an engine's report,
the earliest-violation tracker, per-tile arrays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from simcore.systolic.model import Tile


class SystolicTimingError(RuntimeError):
    """A schedule is infeasible: some PE would see the wrong data. `pe`, `cycle` and `kind`
    (collision, barrier, buffer, operand, step, accumulator, drain) say where and what."""

    def __init__(self, pe: tuple[int, int], cycle: int, kind: str, what: str) -> None:
        super().__init__(f"PE ({pe[0]}, {pe[1]}), cycle {cycle}: {what}")
        self.pe, self.cycle, self.kind, self.what = pe, cycle, kind, what


@dataclass(frozen=True)
class Run:
    """What an engine reports, in its own operand roles."""

    out: np.ndarray
    cycles: int
    stream_reads: int
    stationary_reads: int
    psum_writes: int
    psum_readbacks: int
    c_writes: int
    hbm_words: int
    hbm_ends: tuple[int, ...]


def tile_arrays(cut: Sequence[Tile]) -> dict[str, np.ndarray]:
    """Per-tile attributes as int64 arrays (span and real sizes, offsets)."""
    fields = ("span_rows", "span_cols", "rows", "cols", "row0", "col0")
    return {f: np.array([getattr(t, f) for t in cut], dtype=np.int64) for f in fields}


class FirstError:
    """The earliest violation seen so far, ordered as the reference engines find them: by cycle,
    then by the order of the checks within a cycle (`rank`), then row-major by PE."""

    def __init__(self) -> None:
        self.best: tuple[int, int, int, int] | None = None
        self.error: SystolicTimingError | None = None

    def offer(self, cycle: int, rank: int, pe: tuple[int, int], kind: str, what: str) -> None:
        key = (int(cycle), rank, int(pe[0]), int(pe[1]))
        if self.best is None or key < self.best:
            self.best = key
            self.error = SystolicTimingError((int(pe[0]), int(pe[1])), int(cycle), kind, what)

    def raise_if_any(self) -> None:
        if self.error is not None:
            raise self.error


def offer_barrier(first: FirstError, starts: np.ndarray, ends: np.ndarray) -> None:
    """Folds in sequence: the first tile that enters (at `starts`) before an earlier tile has
    done its last product (at `ends`)."""
    for j in range(1, len(ends)):
        busy = np.flatnonzero(ends[:j] > starts[j])
        if busy.size:
            first.offer(
                starts[j],
                2,
                (0, 0),
                "barrier",
                f"tile {j} enters before tile {busy[0]} has finished (folds in sequence)",
            )
            return
