"""A block schedule: block sizes bm, bk, bn of the GEMM's M, K and N, the loop order over the
blocks (outermost first: 'mnk' runs k innermost, so each C block stays in the accumulators until
it is complete), how much of each operand stays on chip, and single or double buffering of it.

What stays on chip is an operand's tile: with span 3 (the default) one block, which is loaded
again whenever the operand's block changes from one step to the next; with span s < 3 every
block of the operand that the loops at levels s .. 2 reach (level 0 is the outermost loop), so
span 0 keeps the whole operand. A tile's blocks come in as they are first used and stay until a
loop outside the span moves the operand on. Double buffering holds a second tile, so that the
next one can come in while the current one is in use.

Feasibility is arithmetic on the tiles, checked before any timing: every store must hold the
tiles of the operands it holds, times their buffering. A and B tiles are operand words; a C tile
is accumulator words in the accumulator store or, without one, in the buffer that holds c
(accumulator_bits / word_bits words each).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

from simcore.checks import ceil_div, require_positive_int
from simcore.shape import Shape
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign

LOOP_ORDERS: tuple[str, ...] = tuple("".join(p) for p in itertools.permutations("mkn"))
INDEXED_BY = {"a": "mk", "b": "kn", "c": "mn"}


@dataclass(frozen=True)
class BlockSchedule:
    """Block sizes, loop order (outermost first) and each operand's buffering (1 or 2 slots)."""

    bm: int
    bk: int
    bn: int
    order: str = "mnk"
    buffering: tuple[int, int, int] = (2, 2, 2)
    span: tuple[int, int, int] = (3, 3, 3)

    def __post_init__(self) -> None:
        for name in ("bm", "bk", "bn"):
            require_positive_int(name, getattr(self, name))
        if self.order not in LOOP_ORDERS:
            raise ValueError(f"order must be one of {', '.join(LOOP_ORDERS)}, got {self.order!r}")
        if len(self.buffering) != 3 or any(
            isinstance(b, bool) or b not in (1, 2) for b in self.buffering
        ):
            raise ValueError(f"buffering must be three of 1 or 2 (a, b, c), got {self.buffering!r}")
        if len(self.span) != 3 or any(
            isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 3 for x in self.span
        ):
            raise ValueError(
                f"span must be three loop levels from 0 to 3 (a, b, c), got {self.span!r}"
            )

    def clipped(self, shape: Shape) -> "BlockSchedule":
        """The same schedule with blocks no larger than the GEMM."""
        return BlockSchedule(
            min(self.bm, shape.m),
            min(self.bk, shape.k),
            min(self.bn, shape.n),
            self.order,
            self.buffering,
            self.span,
        )

    def grid(self, shape: Shape) -> tuple[int, int, int]:
        """Blocks along M, K and N."""
        return ceil_div(shape.m, self.bm), ceil_div(shape.k, self.bk), ceil_div(shape.n, self.bn)

    def describe(self) -> str:
        names = "".join("sd"[b - 1] for b in self.buffering)
        spans = "" if self.span == (3, 3, 3) else " span " + "".join(map(str, self.span))
        return f"{self.bm}x{self.bk}x{self.bn} {self.order} {names}{spans}"

    def level(self, dim: str) -> int:
        """The loop level of `dim` (0: outermost)."""
        return self.order.index(dim)

    def tile(self, operand: str, shape: Shape) -> tuple[int, int]:
        """Extents of the operand's on-chip tile along its two dimensions (its span's reach)."""
        span = self.span["abc".index(operand)]
        size = {"m": (self.bm, shape.m), "k": (self.bk, shape.k), "n": (self.bn, shape.n)}
        ext = [size[d][1] if self.level(d) >= span else min(*size[d]) for d in INDEXED_BY[operand]]
        return ext[0], ext[1]


@dataclass(frozen=True)
class Batch:
    """`runs` independent GEMMs of one shape under one block schedule, spread over `lanes`
    groups of the machine's side-by-side arrays (each group one array of rows x cols / lanes
    columns): run g goes to lane g mod lanes, each lane runs its GEMMs one after the other as
    one loop outside the schedule's, and the lanes share the stores and the link."""

    runs: int = 1
    lanes: int = 1

    def __post_init__(self) -> None:
        require_positive_int("runs", self.runs)
        require_positive_int("lanes", self.lanes)
        if self.runs % self.lanes:
            raise ValueError(f"lanes ({self.lanes}) must divide the runs ({self.runs})")

    @property
    def rounds(self) -> int:
        """GEMMs each lane runs."""
        return self.runs // self.lanes


SINGLE = Batch()


def footprints(
    machine: SystolicMachine, schedule: BlockSchedule, shape: Shape, copies: int = 1
) -> list[tuple[str, Fraction, int]]:
    """(store key, words needed, capacity in words) of every store under the schedule, run by
    `copies` arrays at once (each with its own tiles)."""
    need: dict[str, Fraction] = {}
    memory = machine.memory
    for operand, slots in zip("abc", schedule.buffering):
        rows, cols = schedule.tile(operand, shape)
        elements = Fraction(rows * cols)
        store = memory.store_of(operand)
        if store is None:  # c in the accumulator store, in accumulator words
            need["accumulator"] = elements * slots * copies
            continue
        words = elements * (machine.accumulator_words if operand == "c" else 1)
        key = f"buffers.{store.name}"
        need[key] = need.get(key, Fraction(0)) + words * slots * copies
    out = []
    for store in memory.stores:
        key = f"buffers.{store.name}"
        out.append((key, need.get(key, Fraction(0)), store.capacity))
    if memory.accumulator is not None:
        out.append(
            ("accumulator", need.get("accumulator", Fraction(0)), memory.accumulator.capacity)
        )
    return out


@dataclass(frozen=True)
class Feasibility:
    """Whether the blocks fit; for each store over its capacity, (store, words over, capacity)."""

    over: tuple[tuple[str, Fraction, int], ...]

    @property
    def ok(self) -> bool:
        return not self.over

    @property
    def worst(self) -> float:
        """The largest overshoot relative to its store's capacity (0 when feasible)."""
        return max((float(words / cap) for _s, words, cap in self.over), default=0.0)

    def describe(self) -> str:
        if self.ok:
            return "the blocks fit"
        return "; ".join(
            f"{store}: {_words(words)} words over its {cap} (needs {_words(words + cap)})"
            for store, words, cap in self.over
        )


def _words(value: Fraction) -> str:
    return str(int(value)) if value.denominator == 1 else f"{float(value):.6g}"


def feasibility(
    machine: SystolicMachine, schedule: BlockSchedule, shape: Shape, copies: int = 1
) -> Feasibility:
    """The arithmetic check, before any timing (blocks clipped to the GEMM; `copies` arrays
    each holding their own tiles)."""
    s = schedule.clipped(shape)
    over = tuple(
        (store, need - cap, cap)
        for store, need, cap in footprints(machine, s, shape, copies)
        if need > cap
    )
    return Feasibility(over)


def check_design(machine: SystolicMachine, design: SystolicDesign, lanes: int = 1) -> None:
    """The design runs on the machine's array, or on one of `lanes` groups of its arrays."""
    array = machine.lane_array(lanes)
    if design.array != array:
        raise ValueError(f"design array {design.array} is not the machine's {array}")
    if not design.hbm.on_chip:
        raise ValueError(
            "a block's operands are on chip when it computes: give the design no HBM link"
        )


def transfer(machine: SystolicMachine, what: str, elements: int) -> tuple[Fraction, Fraction]:
    """(link words, rate in link words per cycle) of moving `elements` of `what`: 'a' or 'b'
    into their buffer, 'c-back' (partial sums read back), 'c-partial' (partial sums spilled)
    or 'c-final' (outputs written). The rate is the link's, or the store port's when slower."""
    memory = machine.memory
    operand = what[0]
    store = memory.store_of(operand)
    if what == "c-final":
        per_element = machine.output_words
    elif operand == "c":
        per_element = machine.accumulator_words
    else:
        per_element = Fraction(1)
    if store is None:
        assert memory.accumulator is not None
        port, store_words = memory.accumulator, Fraction(1)
    else:
        port = store.buffer
        store_words = machine.accumulator_words if operand == "c" else Fraction(1)
    width = port.read_width if what in ("c-partial", "c-final") else port.write_width
    rate = min(memory.dram.words_per_cycle, width * per_element / store_words)
    return elements * per_element, rate
