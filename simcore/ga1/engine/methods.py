"""How a generator's program is timed: in full (every instruction simulated) or periodically
(periodic.py: the steady state detected and whole periods jumped). Both give the same cycles,
busy times and counts; the result says which one did (`Timing.method`).

The periodic method covers every generator but a materialised program (timed in full): the
general family's blocks and rotating window, the strips, the chapter's blocked and k-outermost
orders. A schedule whose state never recurs is simulated in full by it (a rotating window whose
leftover operands drift from period to period does that), and a machine of more than MOST_SLOTS
slots is timed in full. A budget of simulated products bounds
either method: past it, TimingLimitError.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Protocol

import numpy as np

from simcore.ga1.engine import periodic, stream
from simcore.ga1.engine.canon import canon_length, scratch_length, start_counting_ties
from simcore.ga1.engine.plan import (
    KT,
    LOOKAHEAD,
    NT,
    PROTECT,
    RAMP,
    SIZES_AT,
    STORE_DELAY,
    STRIPS,
    STRUCTURE,
    UNITS,
    W,
)
from simcore.ga1.engine.strip_order import (
    LONG,
    N_STRIPS,
    S_BIG,
    S_SMALL,
    S_W,
    STRIP_FIELDS,
    STRIPS_AT,
)
from simcore.ga1.engine.timing import NO_TIMES, PER_SLOT, SLOT0, new_clock, timing_of
from simcore.ga1.engine.units import kind_length
from simcore.ga1.estimate import PERIODIC_MOST_SLOTS
from simcore.ga1.machine import Machine
from simcore.ga1.timing import Timing
from simcore.shape import Shape


class Generator(Protocol):
    """What the methods need of a generator (simcore.ga1.engine.generators.Generator)."""

    machine: Machine
    shape: Shape

    def _check(self, st: np.ndarray) -> None: ...


PERIODIC, FULL = "periodic", "full"
METHODS: tuple[str, ...] = (PERIODIC, FULL)
DEPTH = 9  # signatures kept per level: periods of up to DEPTH - 1 units are found
# A signature has a record per slot: past this many slots (most of them never used) the periodic
# method's signatures would cost more than they save, and its memory grows past tens of MB.
MOST_SLOTS = PERIODIC_MOST_SLOTS


class TimingLimitError(ValueError):
    """Timing the schedule would simulate more tile products than the budget allows."""


def check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown timing method {method!r} (use one of {', '.join(METHODS)})")


def periodic_family(generator: Generator, st: np.ndarray) -> int | None:
    """The driver's family for this generator and state, or None when it times in full."""
    if generator.machine.slots > MOST_SLOTS:
        return None
    kind = getattr(generator, "STREAM", None)
    if kind == stream.BLOCKED:
        return periodic.BLOCKED
    if kind == stream.KOUTER:
        return periodic.KOUTER
    if kind is None:
        return periodic.COMPILED
    return None


def _ahead(look: int, products: int) -> int:
    """Units past a stretch the lookahead may reach when a unit has at least `products`."""
    return -(-look // max(products, 1))


def _compiled_params(st: np.ndarray, slots: int, budget: int) -> tuple[np.ndarray, int]:
    """The driver's parameters for a compiled order, and the length of its longest unit kind."""
    look = int(st[LOOKAHEAD]) + int(st[PROTECT]) + int(st[STORE_DELAY]) + 3
    kt = int(st[KT])
    if int(st[STRUCTURE]) == STRIPS:
        at = int(st[STRIPS_AT])
        records = [st[at + i * STRIP_FIELDS :][:STRIP_FIELDS] for i in range(int(st[N_STRIPS]))]
        block = min((min(int(r[S_BIG]), int(r[S_SMALL])) * int(r[S_W]) for r in records), default=1)
        band = min((int(r[S_W]) for r in records), default=1) * int(st[LONG])
        tallest = max((int(r[S_BIG]) for r in records), default=1)
    elif int(st[STRUCTURE]) == UNITS:
        return _rotate_params(st, slots, budget, look)
    else:
        h0, h1, w0, w1 = (int(v) for v in st[int(st[SIZES_AT]) :][:4])
        block, band, tallest = min(h0, h1) * min(w0, w1), min(h0, h1) * int(st[NT]), 1
    ahead = (_ahead(look, kt * block), _ahead(look, kt * band))
    fields = [look, ahead[0], ahead[1], budget, canon_length(slots), 0]
    params = np.array(fields, dtype=np.int64)
    return params, kind_length(max(slots, tallest))


def _rotate_params(st: np.ndarray, slots: int, budget: int, look: int) -> tuple[np.ndarray, int]:
    """A rotating window's: its stretches (from one unit entering to the next) hold at least
    KT // W steps of one live unit's cells each; with KT < W, a step passes per KT / W stretches."""
    kt, window, ramp = int(st[KT]), int(st[W]), int(st[RAMP])
    lowest = min(int(v) for v in st[int(st[SIZES_AT]) :][:2])  # the shorter row band
    if kt >= window:
        stretch = _ahead(look, (kt // window) * lowest) + 1
    else:
        stretch = _ahead(look * window, kt * lowest) + window + 1
    band = _ahead(look, kt * lowest * int(st[NT])) + 1
    fields = [look, 0, band, budget, canon_length(slots), stretch]
    live = window + ramp + 2  # units live at once, at most, and as many entering within KT steps
    return np.array(fields, dtype=np.int64), 32 + 9 * live + 3 * (2 * live + 2)


# the last periodic timing's: products simulated, jumps, units jumped
LAST_STATS = np.zeros(periodic.STATS, dtype=np.int64)


def time_periodically(
    generator: Generator, st: np.ndarray, family: int, budget: int
) -> Timing | None:
    """The program's timing by the periodic method, from the generator's state at its start;
    None when the driver found a rebuilt state inconsistent (the caller then times in full)."""
    machine = generator.machine
    clock = new_clock(machine)
    slots = machine.slots
    if family == periodic.COMPILED:
        params, kinds_length = _compiled_params(st, slots, budget)
        start_counting_ties(st)
    else:
        params, kinds_length = np.array([0, 0, 0, budget, 0, 0], dtype=np.int64), 4
    length = int(params[periodic.CANON])
    # per signature kept: its unit, the ties before it
    meta = np.full((3, DEPTH, 2), -1, dtype=np.int64)
    canons = np.zeros((3, DEPTH, max(length, 1)), dtype=np.int64)
    orders = np.zeros((3, DEPTH, slots), dtype=np.int64)
    clocks = np.zeros((3, DEPTH, SLOT0 + PER_SLOT * slots), dtype=np.int64)
    # the signature, its numbering, a relabelling, then room for capture's and a jump's work
    scratch = np.zeros(
        length + 2 * slots + max(scratch_length(slots), (3 + PER_SLOT) * slots), dtype=np.int64
    )
    scratch[length : length + slots] = np.arange(slots)  # a numbering of the slots to start from
    kinds = np.zeros((2, kinds_length), dtype=np.int64)
    stats = np.zeros(periodic.STATS, dtype=np.int64)
    status = periodic.drive(
        family, st, clock, meta, canons, orders, clocks, scratch, kinds, params, stats, NO_TIMES
    )
    LAST_STATS[:] = stats
    if status == periodic.INCONSISTENT:
        where = stats[periodic.WHERE : periodic.WHERE + 4].tolist()
        name, why = type(generator).__name__, int(stats[periodic.WHY])
        warnings.warn(
            f"periodic timing of {name} {generator.shape}: the state rebuilt at level "
            f"{where[0]}, unit {tuple(where[1:])} disagreed with its signature (verdict "
            f"{why}); timed in full",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    if status == periodic.OVER_BUDGET:
        raise TimingLimitError(
            f"timing {generator.shape} would simulate more than {budget:.3g} "
            "tile products (the schedule does not settle into a period)"
        )
    generator._check(st)  # a failed generator raises ScheduleError
    if status != periodic.DONE_OK:
        from simcore.ga1.engine.rows import chunk
        from simcore.ga1.engine.timing import raise_if_bad

        raise_if_bad(machine, clock, chunk(st), int(status))
    jumped = int(stats[periodic.JUMPS : periodic.JUMPS + 3].sum()) > 0
    timing = timing_of(clock)
    return dataclasses.replace(
        timing, method=PERIODIC if jumped else FULL, simulated=int(stats[periodic.SIMULATED])
    )
