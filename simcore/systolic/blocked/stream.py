"""The array's tile stream across blocks: every block's tiles follow the previous block's tiles
under the array's own recurrence (`simcore.systolic.closed_form`), so fill and drain overlap
across block boundaries as they do across the tiles of one GEMM, and the array waits only when
memory is late.

A block C[i,j] += A[i,k] B[k,j] is cut into the array's tiles (`model.tiles` of its sub-GEMM,
with the design's dataflow, mapping and assumptions). Tile j of the whole run, whatever its
block, is timed by the closed form's recurrence with three changes:

  * ws/is: the store's port reads the stationary tile's k n words at its read width, tile after
    tile, once the tile's block is in place and the previous tile has started to stream (its
    weights have left the path the next ones take): F_j = max(F_{j-1}, S_{j-1}, D_stationary)
    + ceil(k n / W),
    and the tile's load starts once its read has started and takes no more than its first kt
    cycles to wait for the read: L_j >= max(F_j - ceil(k n / W), F_j - kt). A port of at least n words a cycle never holds a load back (the read of
    the previous tiles ended within their loads), so one block with its data in place runs
    exactly the closed form;
  * the stream of a tile starts no earlier than its block's streamed operands and its C block
    are in place: S_j >= D_stream;
  * a tile's stream window is Ls'_j = max(Ls_j, the cycles each store port needs for the
    tile's words): a port slower than the array spreads the stream (the array waits for the
    missing items), and every formula that reads a tile's stream length reads Ls'_j, but for
    os with shadow registers, where a shorter stream is the safe side: the next tile's last
    product must not come before the previous drain, so it reads the tile's own Ls.

Stream lengths may differ from block to block (edge blocks), so the state keeps the end of the
previous stream window (t = S + Ls') beside its start. The state also keeps the gates that the
block level raises before a block (the fetch gate is F itself; g gates the stream): both grow
with every tile, so a gate set before a block's first tile holds for all its tiles.

Stationary state: (s, t, g, f, e): the previous stream start and window end, the stream gate,
the end of the port's last read (its gate), the latest end. Output state: (s, t, g, reuse,
next_drain, barrier, last). The last element is always the latest event (a step is finished
when it is).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from simcore.shape import Shape
from simcore.systolic.closed_form import NEG
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign, Tile, roles, tiles

# span rows, span cols, rows, cols, stream length Ls, stream window Ls', fetch cycles (0: os)
TileKind = tuple[int, int, int, int, int, int, int]
ArrayState = tuple[float, ...]
# outer repeats, each running (kind, repeats) in turn
BlockTiles = tuple[tuple[int, tuple[tuple[TileKind, int], ...]], ...]
STREAMED = {"ws": ("a",), "is": ("b",), "os": ("a", "b")}
STATIONARY = {"ws": "b", "is": "a", "os": None}


@dataclass(frozen=True)
class StreamParams:
    shadow: bool
    sequence: bool
    drain: bool
    output: bool  # os: the results stay in the PEs


def stream_params(design: SystolicDesign) -> StreamParams:
    a = design.assumptions
    return StreamParams(a.shadow, a.in_sequence, a.drain, design.dataflow == "os")


def initial_state(design: SystolicDesign) -> ArrayState:
    return initial_state_of(stream_params(design))


def initial_state_of(p: StreamParams) -> ArrayState:
    if p.output:
        return (NEG, NEG, NEG, NEG, NEG, 0, 0)
    return (NEG, NEG, NEG, 0, 0)


def gate(state: ArrayState, fetch_ready: float, stream_ready: float, p: StreamParams) -> ArrayState:
    """Hold the next tiles until their stationary block (fetch) and streamed blocks are in."""
    st = list(state)
    st[2] = max(st[2], stream_ready)
    if not p.output:
        st[3] = max(st[3], fetch_ready)
    return tuple(st)


def stationary_tile(
    state: ArrayState, kind: TileKind, p: StreamParams
) -> tuple[ArrayState, tuple[Any, ...]]:
    """One ws/is tile: (fetch start, fetch end, load, stream, end) and the new state."""
    s, t, g, f, e = state
    kt, nt, _k, _n, _ls, ls, fetch = kind
    fs = max(f, s)
    fe = fs + fetch
    bound = s if p.shadow else e if p.sequence else t - 1
    load = max(bound, fs, fe - kt, 0)
    stream = max(t, load + kt, g)
    if p.shadow and p.sequence:
        stream = max(stream, e)
    end = stream + ls + kt + nt - 2
    return (stream, stream + ls, stream, fe, max(e, end)), (fs, fe, load, stream, end)


def output_tile(
    state: ArrayState, kind: TileKind, p: StreamParams
) -> tuple[ArrayState, tuple[Any, ...]]:
    """One os tile: (stream, drain or None, last product + 1, end) and the new state."""
    s, t, g, reuse, next_drain, barrier, last = state
    mt, nt, _m, _n, items, ls, _fetch = kind
    # with shadow registers the last product of the tile's own items moves a result into the
    # shadow register the previous drain has emptied
    stream = max(t, reuse - items if p.shadow else reuse, g, 0)
    if p.sequence:
        stream = max(stream, barrier)
    complete = stream + ls + mt + nt - 2
    drain = None
    if p.drain:
        drain = max(stream + ls + mt - 1, next_drain)
        drain_end = drain + nt + mt - 1
        reuse, next_drain = (drain + 1 if p.shadow else drain), drain + mt
        bar, end = (complete if p.shadow else drain_end), max(complete, drain_end)
    else:
        reuse, next_drain, bar, end = NEG, NEG, complete, complete
    new = (stream, stream + ls, stream, reuse, next_drain, max(barrier, bar), max(last, end))
    return new, (stream, drain, complete, end)


def tile_step(
    state: ArrayState, kind: TileKind, p: StreamParams
) -> tuple[ArrayState, tuple[Any, ...]]:
    return output_tile(state, kind, p) if p.output else stationary_tile(state, kind, p)


def _port_cycles(machine: SystolicMachine, demand: dict[str, tuple[Fraction, Fraction]]) -> int:
    """Cycles the busiest store port needs for (reads, writes) per operand in its store."""
    memory = machine.memory
    by_store: dict[str, list[Fraction]] = {}
    for operand, (reads, writes) in demand.items():
        store = memory.store_of(operand)
        key = "accumulator" if store is None else store.name
        total = by_store.setdefault(key, [Fraction(0), Fraction(0)])
        total[0] += reads
        total[1] += writes
    ports = {s.name: s.buffer for s in memory.stores}
    if memory.accumulator is not None:
        ports["accumulator"] = memory.accumulator
    return max(
        max(ports[key].read_cycles(r), ports[key].write_cycles(w))
        for key, (r, w) in by_store.items()
    )


def tile_kind(machine: SystolicMachine, design: SystolicDesign, ls: int, tile: Tile) -> TileKind:
    """A tile's kind: its spans and real sizes, its stream window and its fetch cycles."""
    k, n = tile.rows, tile.cols
    wide = Fraction(1) if machine.memory.store_of("c") is None else machine.accumulator_words
    if design.dataflow == "os":  # rows M, cols N, stream K
        demand = {"a": (Fraction(k * ls), Fraction(0)), "b": (Fraction(ls * n), Fraction(0))}
        demand["c"] = (Fraction(0), k * n * wide)
        fetch = 0
    else:
        streamed, held = ("a", "b") if design.dataflow == "ws" else ("b", "a")
        demand = {streamed: (Fraction(ls * k), Fraction(0)), held: (Fraction(k * n), Fraction(0))}
        back = ls * n * wide if tile.row_fold > 0 else Fraction(0)
        demand["c"] = (back, ls * n * wide)
        store = machine.memory.store_of(held)
        assert store is not None  # a and b always live in a buffer
        fetch = math.ceil(Fraction(k * n) / store.buffer.read_width)
    window = max(ls, _port_cycles(machine, demand))
    return (tile.span_rows, tile.span_cols, k, n, ls, window, fetch)


def block_tile_list(
    machine: SystolicMachine, design: SystolicDesign, m: int, k: int, n: int
) -> list[TileKind]:
    """Every tile of a block, in the array's order (the readable form)."""
    shape = Shape(m, k, n)
    ls = roles(design.dataflow, shape).stream
    return [tile_kind(machine, design, ls, tile) for tile in tiles(design, shape)]


def _row_segments(dim: int, side: int) -> list[tuple[int, int, bool]]:
    """(count, extent, first row fold) runs of the array's row dimension."""
    full, edge = divmod(dim, side)
    out = []
    if full:
        out.append((1, side, True))
        if full > 1:
            out.append((full - 1, side, False))
    if edge:
        out.append((1, edge, not full))
    return out


def _col_segments(dim: int, side: int) -> list[tuple[int, int]]:
    full, edge = divmod(dim, side)
    return [(c, e) for c, e in ((full, side), (1 if edge else 0, edge)) if c]


@lru_cache(maxsize=4096)
def block_tiles(
    machine: SystolicMachine, design: SystolicDesign, m: int, k: int, n: int
) -> BlockTiles:
    """A block's tiles as nested runs of identical kinds (the same order as `block_tile_list`)."""
    role = roles(design.dataflow, Shape(m, k, n))
    mapping, pad = design.used, design.assumptions.padded
    rows = _row_segments(role.row_dim, mapping.rows)
    cols = _col_segments(role.col_dim, mapping.cols)

    def kind(r: int, c: int, first: bool) -> TileKind:
        span = (mapping.rows, mapping.cols) if pad else (r, c)
        tile = Tile(0, 0, 0, r, c, span[0], span[1], 0 if first else 1, 2)
        return tile_kind(machine, design, role.stream, tile)

    if mapping.order == "col-outer":
        return tuple(
            (cc, tuple((kind(re, ce, first), rc) for rc, re, first in rows)) for cc, ce in cols
        )
    return tuple(
        (rc, tuple((kind(re, ce, first), cc) for cc, ce in cols)) for rc, re, first in rows
    )


def _relative(arr: ArrayState) -> tuple[float, ...]:
    return tuple(v - arr[0] for v in arr)


def _shifted(arr: ArrayState, d: float) -> ArrayState:
    return tuple(v + d for v in arr)  # -inf stays -inf


def _tile_run(arr: ArrayState, tile: TileKind, count: int, p: StreamParams) -> ArrayState:
    prev = None
    for done in range(1, count + 1):
        before = arr
        arr, _ = tile_step(arr, tile, p)
        delta = arr[0] - before[0]
        norm = _relative(arr)
        if prev is not None and norm == prev[0] and delta == prev[1]:
            return _shifted(arr, delta * (count - done))
        prev = (norm, delta)
    return arr


def run_tiles(arr: ArrayState, runs: BlockTiles, p: StreamParams) -> ArrayState:
    """A block's tiles after the state (gated before), runs of one kind jumped once the state
    recurs shifted (max-plus: the jump is exact)."""
    for count, group in runs:
        prev = None
        for done in range(1, count + 1):
            before = arr
            for tile, repeats in group:
                arr = _tile_run(arr, tile, repeats, p)
            delta = arr[0] - before[0]
            norm = _relative(arr)
            if prev is not None and norm == prev[0] and delta == prev[1]:
                arr = _shifted(arr, delta * (count - done))
                break
            prev = (norm, delta)
    return arr
