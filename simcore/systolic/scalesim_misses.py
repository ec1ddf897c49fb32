"""Where SCALE-Sim 3.0's read buffers miss, found with numpy over whole folds at a time.

Whether a request hits depends only on the addresses, never on time: the active window after
k prefetches is the `active_sets` sets from set (k x prefetch_sets) mod sets, circularly
(simcore.systolic.scalesim_buffers). So the misses are found first, from the demand addresses
alone, and timed afterwards.

A request for an address held in set s (a convolution's IFMAP address is held in every set
its im2col copies fall in) hits after k prefetches when (s - k P) mod sets < A (P the prefetch
sets, A the active sets). A miss prefetches until it hits: with d = (s - k P) mod sets >= A,
that takes ceil((d - A + 1) / P) prefetches (P <= A, so the window cannot step over s).

The scan tests a run of requests against the current window at once and gallops: the run
doubles while it hits, and restarts behind each miss. It tests each request's own entry's set
first; only a shared address that fails that test is looked up in all its sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.systolic.scalesim_buffers import ReadGeometry
from simcore.systolic.scalesim_demand import (
    fold_block,
    fold_demand,
    prefetch_length,
    prefetch_order,
    specs,
)
from simcore.systolic.scalesim_layer import NULL, Folding

# which fold indices an operand's demand depends on (c: column fold, r: row fold)
_DEPENDS = {
    ("ws", "ifmap"): "r",
    ("ws", "filter"): "rc",
    ("os", "ifmap"): "r",
    ("os", "filter"): "c",
    ("is", "ifmap"): "rc",
    ("is", "filter"): "r",
}
_FIRST_RUN = 256


@dataclass(frozen=True)
class Holdings:
    """Where a read buffer holds its operand. `entry_set`: for each entry of the operand matrix
    (flattened), the set of its own place in the prefetch order (-1: a null entry). When an
    address fills several entries (a convolution's IFMAP), `keys` lists every (address, set)
    pair as address x sets + set, ascending, and `first[a]` is where address a's pairs start."""

    entry_set: np.ndarray
    entry_address: np.ndarray | None = None
    keys: np.ndarray | None = None
    first: np.ndarray | None = None


def entry_indices(matrix: np.ndarray) -> np.ndarray:
    """The matrix with each entry replaced by its flat index, nulls kept."""
    index = np.arange(matrix.size, dtype=np.int64).reshape(matrix.shape)
    return np.where(matrix != NULL, index, NULL)


def holdings(f: Folding, operand: str, matrix: np.ndarray, g: ReadGeometry) -> Holdings:
    order = prefetch_order(f, operand, entry_indices(matrix))
    real = order[order != NULL]
    sets = np.arange(len(real), dtype=np.int64) // g.set_words
    entry_set = np.full(matrix.size, NULL, dtype=np.int64)
    entry_set[real] = sets
    address = matrix.reshape(-1)[real]
    ordered = np.sort(address)
    if not np.any(ordered[1:] == ordered[:-1]):
        return Holdings(entry_set)
    base = int(ordered[0])
    flat = matrix.reshape(-1)
    entry_address = np.where(flat != NULL, flat - base, NULL)
    keys = np.sort((address - base) * g.sets + sets)
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    counts = np.bincount(keys // g.sets, minlength=int(ordered[-1]) - base + 1)
    first = np.concatenate([[0], np.cumsum(counts)])
    return Holdings(entry_set, entry_address, keys, first)


def read_buffer_geometry(
    f: Folding, operand: str, matrix: np.ndarray, words: int, bandwidth: int
) -> ReadGeometry:
    """The read buffer's sizes; its prefetch order holds each real entry of the matrix once."""
    length = prefetch_length(f, operand, matrix.shape)
    return ReadGeometry(words, bandwidth, length, int(np.count_nonzero(matrix != NULL)))


@dataclass(frozen=True)
class Misses:
    """The demand rows where a read buffer prefetched, and its prefetch count before and after
    each such row; `prefetches` in all."""

    rows: np.ndarray
    before: np.ndarray
    after: np.ndarray
    prefetches: int


@dataclass(frozen=True)
class _Fold:
    """One fold's requests in demand order: their rows in the fold, the sets of their own
    entries, and (shared addresses only) their addresses."""

    rows: np.ndarray
    own_sets: np.ndarray
    addresses: np.ndarray | None


def _fold_requests(
    f: Folding, operand: str, entries: np.ndarray, held: Holdings, fc: int, fr: int
) -> _Fold:
    demand = fold_demand(specs(f)[operand], fold_block(f, operand, entries, fc, fr))
    rows, cols = np.nonzero(demand != NULL)
    entry = demand[rows, cols]
    shared = held.entry_address[entry] if held.entry_address is not None else None
    return _Fold(rows.astype(np.int64), held.entry_set[entry], shared)


class _Window:
    def __init__(self, held: Holdings, g: ReadGeometry) -> None:
        self.held = held
        self.active = g.active_sets
        self.step = g.prefetch_sets
        self.total = g.sets
        self.prefetches = 0

    @property
    def start(self) -> int:
        return (self.prefetches * self.step) % self.total

    def first_miss(self, fold: _Fold, begin: int, end: int) -> int:
        """Index of the first request in fold[begin:end] the window misses, or -1."""
        start = self.start
        outside = (fold.own_sets[begin:end] - start) % self.total >= self.active
        if fold.addresses is None or not outside.any():
            return int(outside.argmax()) if outside.any() else -1
        # a shared address may be held in another set inside the window: test the candidates
        # in order, a growing batch at a time
        maybe = np.flatnonzero(outside)
        addresses = fold.addresses[begin:end]
        low, batch = 0, 16
        while low < len(maybe):
            some = maybe[low : low + batch]
            missed = self.distances(addresses[some], start) >= self.active
            if missed.any():
                return int(some[missed.argmax()])
            low, batch = low + batch, batch * 4
        return -1

    def distances(self, addresses: np.ndarray, start: int) -> np.ndarray:
        """Each shared address's distance from `start` to its first set at or after it."""
        keys, first = self.held.keys, self.held.first
        assert keys is not None and first is not None
        found = np.searchsorted(keys, addresses * self.total + start)
        wrapped = found >= first[addresses + 1]
        pick = np.where(wrapped, first[addresses], found)
        return (keys[pick] % self.total - start) % self.total

    def prefetch_until_hit(self, fold: _Fold, position: int) -> None:
        start = self.start
        if fold.addresses is None:
            held = fold.own_sets[position : position + 1]
        else:
            a = int(fold.addresses[position])
            keys, first = self.held.keys, self.held.first
            assert keys is not None and first is not None
            held = keys[first[a] : first[a + 1]] % self.total
        distance = (held - start) % self.total
        self.prefetches += int(((distance - self.active) // self.step + 1).min())


def find_misses(f: Folding, operand: str, matrix: np.ndarray, g: ReadGeometry) -> Misses:
    """Every miss of one read buffer over the whole layer."""
    if g.active_sets >= g.sets:  # the operand fits: no request ever misses
        empty = np.zeros(0, dtype=np.int64)
        return Misses(empty, empty, empty, 0)
    held = holdings(f, operand, matrix, g)
    window = _Window(held, g)
    entries = entry_indices(matrix)
    depends = _DEPENDS[(f.dataflow, operand)]
    cache: dict[tuple[int, int], _Fold] = {}
    rows: list[int] = []
    before: list[int] = []
    after: list[int] = []
    for fold_number, (fc, fr) in enumerate(
        (fc, fr) for fc in range(f.col_folds) for fr in range(f.row_folds)
    ):
        key = (fc if "c" in depends else -1, fr if "r" in depends else -1)
        if key not in cache:
            cache[key] = _fold_requests(f, operand, entries, held, fc, fr)
        fold = cache[key]
        offset = fold_number * f.rows_per_fold
        position, run, size = 0, _FIRST_RUN, len(fold.rows)
        while position < size:
            miss = window.first_miss(fold, position, position + run)
            if miss < 0:
                position += run
                run *= 2
                continue
            position += miss
            row = offset + int(fold.rows[position])
            k = window.prefetches
            window.prefetch_until_hit(fold, position)
            if rows and rows[-1] == row:
                after[-1] = window.prefetches
            else:
                rows.append(row)
                before.append(k)
                after.append(window.prefetches)
            position += 1
            run = max(_FIRST_RUN, 2 * miss)
    return Misses(
        np.array(rows, dtype=np.int64),
        np.array(before, dtype=np.int64),
        np.array(after, dtype=np.int64),
        window.prefetches,
    )
