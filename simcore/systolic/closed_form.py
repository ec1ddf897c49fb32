"""The closed-form schedule of each dataflow: the earliest cycle every tile's streams may start.

Cycles count from 0; a tile's `end` is one past its last event. Ls is the stream length (ws M,
is N, os K); a tile spans kt x nt PEs (its own size, or the sub-array when padded) and holds
k x n real values (ws, is) or m x n real results (os). NEG (minus infinity) stands for "no
constraint yet". The cycle models in `simcore.systolic.cycle` hold every formula here equal to
the data moves (property tests), and reject a schedule with any stream one cycle earlier.

Stationary operand (ws, is), tile j: L_j its load start (column q loads in L_j + q .. L_j + q +
kt - 1, bottom row first), S_j its stream start (item i enters row r in S_j + i + r; PE (r, q)
multiplies it in S_j + i + r + q), F_j its fetch end over the HBM link:

    F_j  = max(F_{j-1}, Q_{j-b}) + ceil(k n / W)   Q_i = L_i + n_i + kt_i - 1: tile i's buffer
                                                   is free once its last real weight is read
    L_j  = max(S_{j-1}            with shadow registers (the load overwrites shadow registers
                                  only behind the previous tile's swap),
               S_{j-1} + Ls - 1   without, folds overlapped (it overwrites the weights in use
                                  right behind the previous tile's last product),
               E_{j-1}            without, folds in sequence;
               F_j - (kt - k))    (its first real weight is read kt - k cycles in: padding first)
    S_j  = max(S_{j-1} + Ls, L_j + kt, [E_{j-1} with shadow registers and folds in sequence])
    end_j = S_j + Ls + kt + nt - 2,  E_j = max(E_{j-1}, end_j),  T = E_J

Output stationary (os), tile j: A row r enters in S_j + r + k and B column q in S_j + q + k;
PE (r, q) multiplies product k in S_j + r + q + k. With the drain charged, column q shifts its
results down and out in D_j + q .. D_j + q + mt - 1 (bottom row first):

    S_j = max(S_{j-1} + K,
              D_{j-1}           drain charged, no shadow: the accumulators empty behind it,
              D_{j-1} - K + 1   drain charged, shadow: the last product moves a result into a
                                shadow register the drain has emptied,
              E_{j-1}           folds in sequence,
              W_{j-b} - K + 1   drain not charged, HBM: the first result needs a free buffer)
    D_j = max(S_j + K + mt - 1 (every result complete), D_{j-1} + mt_{j-1} (the output port),
              W_{j-b} - (mt - m) (its first real result needs a free buffer))
    ready_j = D_j + n + mt - 1 (drain) or S_j + K + m + n - 2 (no drain): all real results out
    W_j = max(ready_j, W_{j-1}) + ceil(m n / W)                          (write-back end)
    end_j = last event; E_j counts the drain only without shadow registers and drain charged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence, Union

from simcore.shape import Shape
from simcore.systolic.model import SystolicDesign, Tile, roles, tiles

NEG = float("-inf")
State = tuple[float, ...]  # a step's times; -inf where nothing has happened yet
Times = tuple[Any, ...]  # what a step did: its events' times (None: none)
Entry = tuple[int, ...]


@dataclass(frozen=True)
class StationaryTiming:
    """ws/is tile: fetch window (0, 0 on chip), load L_j, stream S_j, end (last product + 1)."""

    tile: Tile
    fetch_start: int
    fetch_end: int
    load: int
    stream: int
    end: int

    @property
    def entry(self) -> Entry:
        return (self.load, self.stream)


@dataclass(frozen=True)
class OutputTiming:
    """os tile: stream S_j, drain D_j (None when not charged), last product + 1, all real
    results out, write-back window (None on chip), end (last event + 1)."""

    tile: Tile
    stream: int
    drain: int | None
    complete: int
    ready: int
    writeback_start: int | None
    writeback_end: int | None
    end: int

    @property
    def entry(self) -> Entry:
        return (
            (self.stream, self.stream)
            if self.drain is None
            else (self.stream, self.stream, self.drain)
        )


TileTiming = Union[StationaryTiming, OutputTiming]


@dataclass(frozen=True)
class Params:
    """The constants of one design's recurrence."""

    ls: int
    shadow: bool
    sequence: bool
    drain: bool
    buffers: int
    on_chip: bool


def _params(design: SystolicDesign, shape: Shape) -> Params:
    a = design.assumptions
    return Params(
        roles(design.dataflow, shape).stream,
        a.shadow,
        a.in_sequence,
        a.drain,
        design.hbm.buffers,
        design.hbm.on_chip,
    )


Kind = tuple[int, int, int, int, int]  # span rows, span cols, rows, cols, HBM cycles


def stationary_step(state: State, kind: Kind, p: Params) -> tuple[State, Times]:
    """One ws/is tile. State: previous stream start, fetch end, the buffer-free times of the
    previous two tiles, the latest end so far."""
    s, f, q1, q2, e = state
    kt, nt, k, n, hbm = kind
    fs: float
    fe: float
    ready: float
    if p.on_chip:
        fs = fe = ready = 0
        f_next, q = NEG, NEG
    else:
        fs = max(f, q1 if p.buffers == 1 else q2)
        fe = fs + hbm
        ready, f_next = fe - (kt - k), fe
    bound = s if p.shadow else e if p.sequence else s + p.ls - 1
    load = max(bound, ready, 0)
    stream = max(s + p.ls, load + kt)
    if p.shadow and p.sequence:
        stream = max(stream, e)
    end = stream + p.ls + kt + nt - 2
    if not p.on_chip:
        q = load + n + kt - 1
    return (stream, f_next, q, q1, max(e, end)), (fs, fe, load, stream, end)


def output_step(state: State, kind: Kind, p: Params) -> tuple[State, Times]:
    """One os tile. State: previous stream start, the register-reuse bound, the next free drain
    start, write-back ends of the previous two tiles, the latest barrier end, the latest event."""
    s, reuse, next_drain, w1, w2, e, last_all = state
    mt, nt, m, n, hbm = kind
    k = p.ls
    wb = w1 if p.buffers == 1 else w2
    stream = max(s + k, reuse, 0)
    if p.sequence:
        stream = max(stream, e)
    if not p.drain and not p.on_chip:
        stream = max(stream, wb - k + 1)
    complete = stream + k + mt + nt - 2
    drain = None
    if p.drain:
        drain = max(stream + k + mt - 1, next_drain)
        if not p.on_chip:
            drain = max(drain, wb - (mt - m))
        drain_end = drain + nt + mt - 1
        ready = drain + n + mt - 1
        reuse, next_drain = (drain - k + 1 if p.shadow else drain), drain + mt
        barrier, last = (complete if p.shadow else drain_end), max(complete, drain_end)
    else:
        ready = stream + k + m + n - 2
        reuse, next_drain, barrier, last = NEG, NEG, complete, complete
    w_start = w_end = None
    w_next = NEG
    if not p.on_chip:
        w_start = max(ready, w1)
        w_end = w_next = w_start + hbm
        last = max(last, w_end)
    new = (stream, reuse, next_drain, w_next, w1, max(e, barrier), max(last_all, last))
    return new, (stream, drain, complete, ready, w_start, w_end, last)


def _initial(design: SystolicDesign) -> State:
    if design.dataflow == "os":
        return (NEG,) * 7
    return (NEG, NEG if design.hbm.on_chip else 0, NEG, NEG, NEG)


def _step_of(design: SystolicDesign) -> Callable[[State, Kind, Params], tuple[State, Times]]:
    return output_step if design.dataflow == "os" else stationary_step


@dataclass(frozen=True)
class Schedule:
    """A whole run: the design, per-tile timings and the total cycle count."""

    design: SystolicDesign
    shape: Shape
    timings: tuple[TileTiming, ...]
    cycles: int

    @property
    def entries(self) -> tuple[Entry, ...]:
        """Per tile, the stream starts the cycle models accept: ws/is (load, stream); os
        (A stream, B stream) or, with the drain charged, (A stream, B stream, drain)."""
        return tuple(t.entry for t in self.timings)

    @property
    def utilisation(self) -> float:
        return self.shape.m * self.shape.k * self.shape.n / (self.design.array.pes * self.cycles)


def _kind(design: SystolicDesign, tile: Tile) -> Kind:
    return (tile.span_rows, tile.span_cols, tile.rows, tile.cols, design.hbm.cycles(tile.words))


def schedule(design: SystolicDesign, shape: Shape) -> Schedule:
    """The closed-form schedule, tile by tile (the readable form; `cycles` is the fast one)."""
    p, step = _params(design, shape), _step_of(design)
    state = _initial(design)
    out: list[TileTiming] = []
    for tile in tiles(design, shape):
        state, rec = step(state, _kind(design, tile), p)
        out.append(
            OutputTiming(tile, *rec) if design.dataflow == "os" else StationaryTiming(tile, *rec)
        )
    return Schedule(design, shape, tuple(out), int(state[-1]))


# --- the cycle count without walking every tile -------------------------------------------------
#
# The recurrence is shift-invariant: no formula above has an absolute constant once the first
# tile has started (S >= 0). So if a run of identical steps (tiles of one kind, or whole outer
# folds) brings the state back to an earlier state shifted by some delta, P steps after it, every
# P further steps shift it by delta again, and the rest of the run can be jumped. The period P
# may be more than one step (two HBM buffers alternate), and is found among the last RECENT
# states (all the memory a run keeps). Tiles come in runs of one kind: inside each outer fold, the
# full inner folds then the edge one; and the full outer folds, then the edge one.

RECENT = 64


def _normal(state: State) -> State:
    return tuple(x - state[0] for x in state)


def _shift(state: State, delta: float) -> State:
    return tuple(x + delta for x in state)  # -inf stays -inf


def _repeat(advance: Callable[[State], State], state: State, count: int) -> State:
    """`count` applications of `advance`, jumping whole periods once the state recurs up to a
    shift (after the first step: from the initial state the constants above may bind)."""
    seen: dict[State, tuple[int, float]] = {}  # normal form -> (steps done, stream start)
    done = 0
    while done < count:
        state = advance(state)
        done += 1
        norm = _normal(state)
        if norm in seen:
            then, start = seen[norm]
            period, periods = done - then, (count - done) // (done - then)
            state = _shift(state, (state[0] - start) * periods)
            done += period * periods
            seen = {}
            continue
        if len(seen) >= RECENT:
            seen = {}
        seen[norm] = (done, state[0])
    return state


def _run(
    step: Callable[[State, Kind, Params], tuple[State, Times]],
    state: State,
    kind: Kind,
    count: int,
    p: Params,
) -> State:
    """`count` identical tiles, jumping once the state repeats up to a shift."""
    return _repeat(lambda s: step(s, kind, p)[0], state, count)


def _parts(dim: int, side: int) -> list[tuple[int, int]]:
    """(count, extent) runs of a dimension cut into tiles of `side`: full tiles, then the edge."""
    full, edge = divmod(dim, side)
    return [(c, e) for c, e in ((full, side), (1 if edge else 0, edge)) if c]


def cycles(design: SystolicDesign, shape: Shape) -> int:
    """schedule(design, shape).cycles in time that grows with the number of distinct runs."""
    p, step = _params(design, shape), _step_of(design)
    role, mapping, pad = roles(design.dataflow, shape), design.used, design.assumptions.padded
    col_outer = mapping.order == "col-outer"
    rows, cols = _parts(role.row_dim, mapping.rows), _parts(role.col_dim, mapping.cols)
    outer, inner = (cols, rows) if col_outer else (rows, cols)

    def kind(outer_ext: int, inner_ext: int) -> Kind:
        r, c = (inner_ext, outer_ext) if col_outer else (outer_ext, inner_ext)
        span = (mapping.rows, mapping.cols) if pad else (r, c)
        return (*span, r, c, design.hbm.cycles(r * c))

    state = _initial(design)
    for count, ext in outer:
        group = [(kind(ext, inner_ext), inner_count) for inner_count, inner_ext in inner]

        def fold(state: State, group: list[tuple[Kind, int]] = group) -> State:
            for tile_kind, inner_count in group:
                state = _run(step, state, tile_kind, inner_count, p)
            return state

        state = _repeat(fold, state, count)
    return int(state[-1])


def entries_of(schedule_or_entries: Schedule | Sequence[Sequence[int]]) -> tuple[Entry, ...]:
    if isinstance(schedule_or_entries, Schedule):
        return schedule_or_entries.entries
    return tuple(tuple(e) for e in schedule_or_entries)
