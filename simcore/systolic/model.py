"""Weight-stationary systolic tiling: configs, tile order, the closed-form schedule, traffic.

C = A B with A (M x K) and B (K x N) runs on an R x C array as weight tiles of at most R x C:
tile j holds rows k0 .. k0 + k_j - 1 and columns n0 .. n0 + n_j - 1 of B and streams all M
rows of A through it.

Tile order: column tiles of N outermost, K tiles inside. The K tiles of one column tile are
therefore consecutive, so the partial sums of a K split are read back and added while the
accumulator rows of that column tile are still the ones being written.

Cycle conventions (shared with the cycle model in `simcore.systolic.cycle`):
  * cycles count from 0; `T` is one past the last cycle in which a PE multiplies;
  * L_j: column q of tile j loads in cycles L_j + q .. L_j + q + k_j - 1 (bottom weight first);
  * S_j: activation i of row r enters PE (r, 0) in cycle S_j + i + r; PE (r, q) swaps its
    shadow weight in at S_j + r + q and multiplies activation i at S_j + i + r + q;
  * a tile of k_j rows delivers its sums from row k_j - 1 (unused rows are bypassed),
    so tile j ends at S_j + M + k_j + n_j - 2.

Weight fetch: k_j n_j words at W words per cycle take ceil(k_j n_j / W) whole cycles, and a
tile may start loading only once its whole fetch has ended. A buffer is free again once the
tile in it has been shifted into the array, i.e. from L_j + n_j + k_j - 1 (the last column's
last load cycle plus one). The fetch engine works on one tile at a time, in tile order.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from simcore.checks import ceil_div, require_positive_int

Dataflow = Literal["ws", "os"]






@dataclass(frozen=True)
class SystolicArray:
    """An R x C weight-stationary array; `shadow` gives every PE a second weight register."""

    rows: int
    cols: int
    shadow: bool = True

    def __post_init__(self) -> None:
        require_positive_int("array rows", self.rows)
        require_positive_int("array cols", self.cols)
        if not isinstance(self.shadow, bool):
            raise ValueError(f"shadow must be a bool, got {self.shadow!r}")

    @property
    def pes(self) -> int:
        return self.rows * self.cols


@dataclass(frozen=True)
class WeightFetch:
    """Off-chip weight fetch: None words per cycle means the weights are already on chip."""

    hbm_words_per_cycle: float | int | None = None
    buffers: int = 2

    def __post_init__(self) -> None:
        w = self.hbm_words_per_cycle
        if w is not None:
            if isinstance(w, bool) or not isinstance(w, (int, float)):
                raise ValueError(f"hbm_words_per_cycle must be a number or None, got {w!r}")
            if not math.isfinite(w) or w <= 0:
                raise ValueError(f"hbm_words_per_cycle must be positive and finite, got {w}")
        if isinstance(self.buffers, bool) or self.buffers not in (1, 2):
            raise ValueError(f"buffers must be 1 or 2, got {self.buffers!r}")

    @property
    def on_chip(self) -> bool:
        return self.hbm_words_per_cycle is None

    def cycles(self, words: int) -> int:
        """Whole cycles to fetch `words`; a float rate is taken as the decimal it prints as."""
        if self.hbm_words_per_cycle is None:
            return 0
        rate = Fraction(str(self.hbm_words_per_cycle))
        return math.ceil(Fraction(words) / rate)


@dataclass(frozen=True)
class WeightTile:
    """Tile `index`: B rows k0 .. k0+k-1, columns n0 .. n0+n-1; K tile `k_step` of `k_steps`."""

    index: int
    k0: int
    n0: int
    k: int
    n: int
    k_step: int
    k_steps: int

    @property
    def words(self) -> int:
        return self.k * self.n


def weight_tiles(array: SystolicArray, k: int, n: int) -> tuple[WeightTile, ...]:
    """The weight tiles of a K x N matrix B in run order: column tiles outer, K tiles inner."""
    require_positive_int("K", k)
    require_positive_int("N", n)
    k_steps = ceil_div(k, array.rows)
    out: list[WeightTile] = []
    for n0 in range(0, n, array.cols):
        for step, k0 in enumerate(range(0, k, array.rows)):
            out.append(
                WeightTile(
                    index=len(out),
                    k0=k0,
                    n0=n0,
                    k=min(array.rows, k - k0),
                    n=min(array.cols, n - n0),
                    k_step=step,
                    k_steps=k_steps,
                )
            )
    return tuple(out)


def tile_end(tile: WeightTile, m: int, stream: int) -> int:
    """One past the tile's last MAC: its last result leaves PE (k-1, n-1)."""
    return stream + m + tile.k + tile.n - 2


def tile_shifted_in(tile: WeightTile, load: int) -> int:
    """First cycle after the tile's last weight left the buffer (its buffer is free again)."""
    return load + tile.n + tile.k - 1


@dataclass(frozen=True)
class TileTiming:
    """One tile's schedule: fetch window (0, 0 when on chip), load L_j, stream S_j, end."""

    tile: WeightTile
    fetch_start: int
    fetch_end: int
    load: int
    stream: int
    end: int


@dataclass(frozen=True)
class Schedule:
    """A whole run: per-tile timings and the total cycle count T."""

    array: SystolicArray
    m: int
    k: int
    n: int
    fetch: WeightFetch
    tiles: tuple[TileTiming, ...]
    cycles: int

    @property
    def macs(self) -> int:
        return self.m * self.k * self.n

    @property
    def utilisation(self) -> float:
        return self.macs / (self.array.pes * self.cycles)

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """(L_j, S_j) per tile, the form `simulate_systolic` accepts as a schedule."""
        return tuple((t.load, t.stream) for t in self.tiles)


def fetch_window(
    fetch: WeightFetch,
    tile: WeightTile,
    previous_fetch_end: int,
    buffer_free: int,
) -> tuple[int, int]:
    """(start, end) of a tile's fetch: after the previous fetch and once its buffer is free."""
    if fetch.on_chip:
        return 0, 0
    start = max(previous_fetch_end, buffer_free)
    return start, start + fetch.cycles(tile.words)


def stream_schedule(
    array: SystolicArray,
    m: int,
    k: int,
    n: int,
    fetch: WeightFetch | None = None,
) -> Schedule:
    """Closed-form schedule: S_{j+1} = max(S_j + M, L_{j+1} + k_{j+1}) with shadow registers.

    L_{j+1} = max(S_j, F_{j+1}) with shadow registers (the next load may overwrite a shadow
    register once this tile has swapped it in), max(end_j, F_{j+1}) without (chapter 4: each
    tile loads, streams and drains before the next load). T is the latest tile end, which is
    the spec's S_J + M + k_J + n_J - 2 whenever the last tile ends last.
    """
    require_positive_int("M", m)
    fetch = fetch if fetch is not None else WeightFetch()
    tiles = weight_tiles(array, k, n)
    out: list[TileTiming] = []
    for j, tile in enumerate(tiles):
        previous_fetch_end = out[-1].fetch_end if out else 0
        owner = j - fetch.buffers  # the tile that last used this tile's buffer
        buffer_free = tile_shifted_in(tiles[owner], out[owner].load) if owner >= 0 else 0
        fetch_start, fetch_end = fetch_window(fetch, tile, previous_fetch_end, buffer_free)
        if not out:
            load = fetch_end
            stream = load + tile.k
        else:
            prev = out[-1]
            load = max(prev.stream if array.shadow else prev.end, fetch_end)
            stream = max(prev.stream + m, load + tile.k)
        out.append(TileTiming(tile, fetch_start, fetch_end, load, stream, tile_end(tile, m, stream)))
    cycles = max(t.end for t in out)
    return Schedule(array, m, k, n, fetch, tuple(out), cycles)


@dataclass(frozen=True)
class Traffic:
    """On-chip buffer words moved by one GEMM. psum_writes are partial (not final) sums."""

    dataflow: str
    macs: int
    a_reads: int
    b_reads: int
    psum_writes: int
    psum_readbacks: int
    c_writes: int

    @property
    def total(self) -> int:
        return self.a_reads + self.b_reads + self.psum_writes + self.psum_readbacks + self.c_writes

    @property
    def words_per_mac(self) -> float:
        return self.total / self.macs

    @property
    def words_per_mac_exact(self) -> Fraction:
        return Fraction(self.total, self.macs)


def traffic(array: SystolicArray, m: int, k: int, n: int, dataflow: Dataflow) -> Traffic:
    """Exact buffer traffic of C = A B on the array, tiles rounded up at the edges.

    ws: A streams once per column tile of B; B is read once; every K tile but the last writes
    partial sums, every K tile but the first reads them back; C is written once.
    os: each PE keeps one result of an R x C output tile until it is complete; A is read once
    per column tile of B, B once per row tile of A, C written once.
    """
    for name, value in (("M", m), ("K", k), ("N", n)):
        require_positive_int(name, value)
    col_tiles = ceil_div(n, array.cols)
    if dataflow == "ws":
        extra_k = ceil_div(k, array.rows) - 1  # K tiles that hand partial sums on
        return Traffic(
            dataflow="ws",
            macs=m * k * n,
            a_reads=m * k * col_tiles,
            b_reads=k * n,
            psum_writes=m * n * extra_k,
            psum_readbacks=m * n * extra_k,
            c_writes=m * n,
        )
    if dataflow == "os":
        return Traffic(
            dataflow="os",
            macs=m * k * n,
            a_reads=m * k * col_tiles,
            b_reads=k * n * ceil_div(m, array.rows),
            psum_writes=0,
            psum_readbacks=0,
            c_writes=m * n,
        )
    raise ValueError(f"dataflow must be 'ws' or 'os', got {dataflow!r}")
