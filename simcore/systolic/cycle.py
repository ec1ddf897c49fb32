"""The cycle models of the three dataflows: run C = A B on a design with a given schedule, move
every operand as the hardware does, stop at the first PE that would see the wrong data.

Two engines, each with one model per kind of dataflow:
  * the reference engines (`reference_stationary`, `reference_output`) step cycle by cycle and
    move every token, register value and partial sum through the PE grid; they are the readable
    definition and the differential oracle;
  * the event engines (`events_stationary`, `events_output`) compute, for every tile and every
    PE, the cycle each stream's first and last token arrives and the cycles each register holds
    each value (all of them follow from where a stream enters and its one-hop-per-cycle moves),
    check the same conditions, find the earliest violation, and do each tile's products as one
    block. The test suite holds them equal to the reference engines: product, cycle count,
    words moved and the PE, cycle and kind of the first error.
`simulate_systolic` runs the event engine; `simulate_systolic_reference` the reference one.

ws and is share the stationary-operand array: ws keeps tiles of B in the PEs and streams the
rows of A; is keeps tiles of A^T (K x M) and streams the columns of B, so its sums leave as the
rows of C^T. os keeps a tile of C and streams both A (from the left) and B (from the top).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from simcore.shape import Shape
from simcore.systolic.closed_form import Entry, Schedule, entries_of
from simcore.systolic.closed_form import schedule as closed_form
from simcore.systolic.common import Run, SystolicTimingError
from simcore.systolic.events_output import run_output_events
from simcore.systolic.events_stationary import run_stationary_events
from simcore.systolic.model import SystolicDesign, Traffic, roles, tiles
from simcore.systolic.reference_output import run_output_reference
from simcore.systolic.reference_stationary import run_stationary_reference

__all__ = [
    "SystolicResult",
    "SystolicTimingError",
    "simulate_systolic",
    "simulate_systolic_reference",
]


@dataclass(frozen=True, eq=False)
class SystolicResult:
    """The product, the measured cycle count and the words the model actually moved."""

    design: SystolicDesign
    shape: Shape
    c: np.ndarray
    cycles: int
    entries: tuple[Entry, ...]
    hbm_ends: tuple[int, ...]  # per tile: fetch end (ws, is) or write-back end (os); 0 on chip
    traffic: Traffic
    hbm_words: int

    @property
    def macs(self) -> int:
        return self.traffic.macs

    @property
    def utilisation(self) -> float:
        return self.macs / (self.design.array.pes * self.cycles)


def operands(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"A and B must be 2-D, got shapes {a.shape} and {b.shape}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: A is {a.shape}, B is {b.shape}")
    if 0 in a.shape or 0 in b.shape:
        raise ValueError(f"A and B must not be empty, got shapes {a.shape} and {b.shape}")
    return a, b


def checked_entries(
    design: SystolicDesign,
    shape: Shape,
    given: Schedule | Sequence[Sequence[int]] | None,
    count: int,
) -> tuple[Entry, ...]:
    """The per-tile stream starts: the closed form's if none given; validated otherwise."""
    if given is None:
        return closed_form(design, shape).entries
    if isinstance(given, Schedule) and (given.design != design or given.shape != shape):
        raise ValueError("schedule was computed for another design or shape")
    entries = entries_of(given)
    width = 3 if design.dataflow == "os" and design.assumptions.drain else 2
    names = {2: "(load, stream)", 3: "(A stream, B stream, drain)"}
    if design.dataflow == "os" and width == 2:
        names[2] = "(A stream, B stream)"
    if len(entries) != count:
        raise ValueError(f"schedule has {len(entries)} entries for {count} tiles")
    for j, entry in enumerate(entries):
        if len(entry) != width or any(
            isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in entry
        ):
            raise ValueError(
                f"tile {j}: schedule entry must be {names[width]} as ints, got {entry!r}"
            )
        if min(entry) < 0:
            raise ValueError(f"tile {j}: stream starts must not be negative, got {entry}")
    for stream in range(width):
        for j in range(1, count):
            if entries[j][stream] < entries[j - 1][stream]:
                raise ValueError(
                    f"tile {j} starts stream {stream} in cycle {entries[j][stream]}, before tile "
                    f"{j - 1} does ({entries[j - 1][stream]}): tiles run in tile order"
                )
    return tuple(tuple(int(v) for v in e) for e in entries)


Engine = Callable[..., Run]


def _simulate(
    design: SystolicDesign,
    a: np.ndarray,
    b: np.ndarray,
    given: Schedule | Sequence[Sequence[int]] | None,
    engines: tuple[Engine, Engine],
) -> SystolicResult:
    if not isinstance(design, SystolicDesign):
        raise TypeError(f"design must be a SystolicDesign, got {type(design).__name__}")
    a, b = operands(a, b)
    shape = Shape(a.shape[0], a.shape[1], b.shape[1])
    cut = tiles(design, shape)
    entries = checked_entries(design, shape, given, len(cut))
    stationary, output = engines
    if design.dataflow == "os":
        run = output(design, a, b, entries, cut)
        a_reads, b_reads, c = run.stream_reads, run.stationary_reads, run.out
    elif design.dataflow == "ws":
        run = stationary(design, a, b, entries, cut, "weight")
        a_reads, b_reads, c = run.stream_reads, run.stationary_reads, run.out
    else:  # is: B's columns stream past A^T; the sums are the rows of C^T
        run = stationary(design, b.T, a.T, entries, cut, "input")
        a_reads, b_reads, c = run.stationary_reads, run.stream_reads, run.out.T
    traffic = Traffic(
        design.dataflow,
        shape.m * shape.k * shape.n,
        a_reads,
        b_reads,
        run.psum_writes,
        run.psum_readbacks,
        run.c_writes,
    )
    return SystolicResult(
        design, shape, c, run.cycles, entries, run.hbm_ends, traffic, run.hbm_words
    )


# Arrays of one word per PE the event engines hold at once (the state of every PE a tile spans,
# and a tile's temporaries).
ENGINE_PE_ARRAYS = 8


def engine_words(design: SystolicDesign, shape: Shape) -> int:
    """About the words `simulate_systolic` holds: A, B, C and numpy's product, and a few words for
    every PE of the largest tile's span (the whole sub-array when edge tiles are padded)."""
    role, mapping = roles(design.dataflow, shape), design.used
    span_rows, span_cols = (
        (mapping.rows, mapping.cols)
        if design.assumptions.padded
        else (min(mapping.rows, role.row_dim), min(mapping.cols, role.col_dim))
    )
    m, k, n = shape.m, shape.k, shape.n
    return m * k + k * n + 2 * m * n + ENGINE_PE_ARRAYS * span_rows * span_cols


def simulate_systolic(
    design: SystolicDesign,
    a: np.ndarray,
    b: np.ndarray,
    schedule: Schedule | Sequence[Sequence[int]] | None = None,
) -> SystolicResult:
    """Run C = A B on `design` with the event engine; `schedule` gives each tile's stream starts
    (default: the closed form). Raises SystolicTimingError at the first PE that would fail."""
    return _simulate(design, a, b, schedule, (run_stationary_events, run_output_events))


def simulate_systolic_reference(
    design: SystolicDesign,
    a: np.ndarray,
    b: np.ndarray,
    schedule: Schedule | Sequence[Sequence[int]] | None = None,
) -> SystolicResult:
    """The same run stepped cycle by cycle (slow; the readable definition)."""
    return _simulate(design, a, b, schedule, (run_stationary_reference, run_output_reference))
