"""Schedules the engine runs: each generator emits its program in chunks of rows, and one of
three consumers takes them. `timing()` times each chunk as it comes (generation and timing in
one pass: memory for the slots, the tiles and one chunk, never for the whole program);
`program()` keeps the rows (a materialised Program, for show and export); `verify()` times,
executes and replays each chunk against the product of random integer operands (exact, and as
streamed as the timing).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from typing import Callable, Iterator

import numpy as np

from simcore.ga1.engine import chapter, compile_state, methods, stream
from simcore.ga1.engine import compile as compiler
from simcore.ga1.engine.functional import execute_rows
from simcore.ga1.engine.hazards import (
    EARLIEST,
    INDEX,
    KIND,
    KINDS,
    SLOT,
    START,
    new_history,
    replay_rows,
)
from simcore.ga1.engine.plan import general_plan
from simcore.ga1.engine.rows import COMMON, DONE, OUT_AT, Section, assemble, chunk
from simcore.ga1.engine.strip_order import strip_plan, strip_slots
from simcore.ga1.engine.timing import (
    FILL,
    NO_TIMES,
    new_clock,
    raise_if_bad,
    time_checked,
    timing_of,
)
from simcore.ga1.generator.order import GeneralParams, slots_needed
from simcore.ga1.generator.strips import StripParams
from simcore.ga1.hazards import Hazard
from simcore.ga1.machine import Machine
from simcore.ga1.program import WIDTH, Program
from simcore.ga1.schedules import ChapterSchedule, ScheduleError, check_blocked, check_kouter
from simcore.ga1.timing import Timing
from simcore.ga1.verify import Verification, random_operands
from simcore.shape import Shape

CHUNK = (
    1024  # rows per chunk (a chunk stays in cache), unless a generator needs more room to resume
)
KEEP_HAZARDS = 100  # hazards a verification keeps for its report; all are counted


class Generator(ABC):
    """One schedule of one shape on one machine, run by the engine."""

    STREAM: int  # a chapter generator's kind (stream.py)

    def __init__(self, shape: Shape, machine: Machine) -> None:
        self.shape = shape
        self.machine = machine

    @abstractmethod
    def _begin(self) -> np.ndarray:
        """Check the schedule (ScheduleError if it does not fit); return its state at the start."""

    def _check(self, st: np.ndarray) -> None:
        """Raise ScheduleError if the last chunk found that the schedule does not fit."""

    def _next_chunk(self, st: np.ndarray) -> None:
        stream.chapter_chunk(self.STREAM, st)

    def _generate_and_time(self, st: np.ndarray, clock: np.ndarray) -> int:
        return stream.time_chapter(self.STREAM, st, clock, NO_TIMES)

    def chunks(self) -> Iterator[np.ndarray]:
        """The program, chunk after chunk (each chunk is overwritten by the next)."""
        st = self._begin()
        while True:
            self._next_chunk(st)
            self._check(st)
            yield chunk(st)
            if st[DONE]:
                return

    @property
    def products(self) -> int:
        Mt, Kt, Nt = self.shape.tiles(self.machine.T)
        return Mt * Kt * Nt

    def timing(self, method: str = methods.PERIODIC, max_products: int | None = None) -> Timing:
        """The program's cycles, busy times and counts, without keeping the program. "periodic"
        detects the machine's steady state and jumps whole periods (exact; methods.py), "full"
        simulates every instruction (generated and timed in one compiled call); the result's
        `method` says which one timed it. With `max_products`, TimingLimitError instead of
        simulating more tile products than that."""
        methods.check_method(method)
        budget = max_products if max_products is not None else 1 << 62
        st = self._begin()
        family = methods.periodic_family(self, st) if method == methods.PERIODIC else None
        if family is not None:
            timing = methods.time_periodically(self, st, family, budget)
            if timing is not None:
                return timing
            st = self._begin()
        if self.products > budget:
            raise methods.TimingLimitError(
                f"timing {self.shape} in full would simulate {self.products:.3g} tile "
                f"products, more than {budget:.3g}"
            )
        clock = new_clock(self.machine)
        bad = self._generate_and_time(st, clock)
        self._check(st)
        raise_if_bad(self.machine, clock, chunk(st), bad)
        return dataclasses.replace(timing_of(clock), simulated=self.products)

    def program(self) -> Program:
        """The whole program (the same rows as the Python reference builds)."""
        parts = [rows.copy() for rows in self.chunks()]
        return Program(
            code=np.concatenate(parts) if parts else np.zeros((0, WIDTH), dtype=np.int64)
        )

    def verify(self, seed: int = 1) -> Verification:
        """verify_matmul, streamed: C equals numpy's product and the hazard replay is clean."""
        machine = self.machine
        a, b = random_operands(self.shape, seed)
        c = np.zeros((self.shape.m, self.shape.n))
        spad, scratch = (
            np.zeros((machine.slots, machine.T, machine.T)),
            np.zeros((machine.T, machine.T)),
        )
        history, found, found_count = (
            new_history(machine.slots),
            np.zeros((KEEP_HAZARDS, 5), dtype=np.int64),
            np.zeros(1, dtype=np.int64),
        )
        clock, times, first = new_clock(machine), np.zeros((0, 2), dtype=np.int64), 0
        scratch4 = np.zeros(4, dtype=np.int64)
        for rows in self.chunks():
            n = rows.shape[0]
            if times.shape[0] < n:
                times = np.zeros((n, 2), dtype=np.int64)
            time_checked(machine, clock, rows, times[:n])
            execute_rows(spad, scratch, a, b, c, rows, n)
            replay_rows(history, found, found_count, rows, times, n, first, clock[FILL], scratch4)
            first += n
        expected, count = a @ b, int(found_count[0])
        equal = bool(np.array_equal(c, expected))
        if not equal:  # the error in place: no more matrices than estimate.py prices
            np.abs(np.subtract(c, expected, out=expected), out=expected)
        return Verification(
            result_ok=equal,
            hazards=hazards_found(found, count),
            cycles=timing_of(clock).cycles,
            hazards_found=count,
            max_abs_error=float(np.max(expected)) if not equal and expected.size else 0.0,
        )


def hazards_found(found: np.ndarray, count: int) -> tuple[Hazard, ...]:
    """The hazards a replay kept (the first `len(found)` of `count`)."""
    return tuple(
        Hazard(int(r[INDEX]), KINDS[int(r[KIND])], int(r[SLOT]), int(r[START]), int(r[EARLIEST]))
        for r in found[: min(count, found.shape[0])]
    )


def _chunk_rows(most_rows: int) -> int:
    """A chunk holds the whole program when it is small (states add room to resume)."""
    return min(CHUNK, most_rows)


class _Compiled(Generator):
    """A product order compiled by the general generator's compiler (compile.py)."""

    def _next_chunk(self, st: np.ndarray) -> None:
        stream.compiled_chunk(st)

    def _generate_and_time(self, st: np.ndarray, clock: np.ndarray) -> int:
        return stream.time_compiled(st, clock, NO_TIMES)

    def _compiler_state(
        self, geo: dict[int, int], sections: list[Section], lookahead: int
    ) -> np.ndarray:
        Mt, Kt, Nt = self.shape.tiles(self.machine.T)
        return compiler.new_state(
            geo,
            sections,
            self.machine.slots,
            _chunk_rows(3 * Mt * Kt * Nt + 2 * Mt * Nt + lookahead),
        )

    def _check(self, st: np.ndarray) -> None:
        if st[compile_state.FAILED_AT] >= 0:
            i, j, k = compiler.failed_product(st)
            raise ScheduleError(
                f"{self.machine.slots} slots cannot hold the working set at product {st[compile_state.FAILED_AT]} "
                f"{(int(i), int(j), int(k))}: {st[compile_state.LIVE]} live accumulators plus the product's A and B tiles"
            )


class General(_Compiled):
    """The general generator (simcore/ga1/generator: product order, then its compiler)."""

    def __init__(self, shape: Shape, machine: Machine, params: GeneralParams) -> None:
        super().__init__(shape, machine)
        self.params = params

    def _begin(self) -> np.ndarray:
        shape, machine, params = self.shape, self.machine, self.params
        need = slots_needed(shape, machine, params)
        if need > machine.slots:
            raise ScheduleError(
                f"general schedule {params} needs {need} slots, the scratchpad has {machine.slots}"
            )
        geo, sections = general_plan(shape, machine, params)
        return self._compiler_state(geo, sections, params.lookahead)


class Strips(_Compiled):
    """The strip schedules for small scratchpads (simcore/ga1/generator/strips.py)."""

    def __init__(self, shape: Shape, machine: Machine, params: StripParams) -> None:
        super().__init__(shape, machine)
        self.params = params

    def _begin(self) -> np.ndarray:
        need = strip_slots(self.shape, self.machine, self.params)
        if need > self.machine.slots:
            raise ScheduleError(
                f"strip schedule {self.params} needs {need} slots, the scratchpad has {self.machine.slots}"
            )
        geo, sections = strip_plan(self.shape, self.machine, self.params)
        return self._compiler_state(geo, sections, self.params.lookahead)


class Blocked(Generator):
    """The chapter's blocked family (simcore.ga1.schedules.blocked)."""

    STREAM = stream.BLOCKED

    def __init__(
        self, shape: Shape, machine: Machine, bi: int, bj: int, buffers: int = 2, order: str = "row"
    ) -> None:
        super().__init__(shape, machine)
        self.bi, self.bj, self.buffers, self.order = bi, bj, buffers, order

    def _begin(self) -> np.ndarray:
        check_blocked(self.machine, self.bi, self.bj, self.buffers, self.order)
        Mt, Kt, Nt = tiles = self.shape.tiles(self.machine.T)
        rows = _chunk_rows(3 * Mt * Kt * Nt + 2 * Mt * Nt)
        return chapter.blocked_state(
            tiles, self.bi, self.bj, self.buffers, self.order == "col", rows
        )


class KOuter(Generator):
    """The chapter's k-outermost order (simcore.ga1.schedules.kouter)."""

    STREAM = stream.KOUTER

    def __init__(self, shape: Shape, machine: Machine, buffers: int = 2) -> None:
        super().__init__(shape, machine)
        self.buffers = buffers

    def _begin(self) -> np.ndarray:
        check_kouter(self.machine, self.buffers)
        Mt, Kt, Nt = tiles = self.shape.tiles(self.machine.T)
        return chapter.kouter_state(tiles, self.buffers, _chunk_rows(5 * Mt * Kt * Nt))


class Materialised(Generator):
    """A program that already exists (any family that only builds one): one chunk."""

    STREAM = stream.MATERIALISED

    def __init__(self, shape: Shape, machine: Machine, build: Callable[[], Program]) -> None:
        super().__init__(shape, machine)
        self.build = build

    def _begin(self) -> np.ndarray:
        code = self.build().code
        st = assemble(COMMON, {}, [], len(code))
        st[st[OUT_AT] :] = code.reshape(-1)
        return st


def chapter_generator(schedule: ChapterSchedule, shape: Shape, machine: Machine) -> Generator:
    """The generator of one row of the chapter's sweep."""
    block = schedule.block(shape, machine)
    if block is None:
        return KOuter(shape, machine, schedule.buffers)
    return Blocked(shape, machine, block[0], block[1], schedule.buffers)
