"""The extension point: a schedule family is a small object behind one interface, and a space is
a named group of families. A new family or space is one module plus a registry entry.

A family declares its parameters as data, grades how far a point is over the machine's limits
(before anything is simulated), evaluates a feasible point with its oracle, and verifies it.
It also answers what callers would otherwise ask by type: what it measures (its objectives),
which machine it carries with a result, whether it has a GA-1 program (timeline, export), its
hand-written reference and lower bound, its notes on a shape, and how it describes a point.
`GA1Family` implements the oracle side once for every family that builds a GA-1 program.
"""
from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Mapping

from simcore.ga1.estimate import Work, estimate
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.schedules import chapter_sweep
from simcore.shape import Shape
from simcore.ga1.engine import Generator, Materialised, chapter_generator, time_program
from simcore.ga1.engine.methods import PERIODIC
from simcore.ga1.reduced import reduced_generator
from simcore.ga1.timeline import draw, engine_rows_of_arrays
from simcore.ga1.timing import engines_of

from search_spaces.domains import Param, Point

Metrics = dict[str, object]

# How a verification was done, strongest first. Only EXACT makes an entry `verified`.
EXACT = "exact"    # the design itself was run: functional result equals numpy's, timing checks clean
SCALED = "scaled"  # a smaller design of the same kind was run in its place
MODEL = "model"    # nothing was run: the closed form (or estimate) alone
LEVELS: tuple[str, ...] = (EXACT, SCALED, MODEL)


@dataclass(frozen=True)
class Verdict:
    """What a family's verification found: whether the checks passed, how strong they were
    (EXACT, SCALED or MODEL) and a one-line explanation."""

    ok: bool
    level: str
    detail: str

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"verification level must be one of {', '.join(LEVELS)}, got {self.level!r}")

    @property
    def verified(self) -> bool:
        """Passed, on the design itself."""
        return self.ok and self.level == EXACT


class Family(ABC):
    """A schedule family: parameters, feasibility, evaluation and verification."""

    name: str = ""
    description: str = ""
    oracle: str = ""                                 # the simulator or model that times it
    measures: tuple[str, ...] = ("cycles",)          # what may be an objective
    default_objectives: tuple[str, ...] = ("cycles",)

    @abstractmethod
    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        """The family's searchable parameters; domains may depend on the shape's tile counts."""

    @abstractmethod
    def violation(self, point: Point, shape: Shape, machine: Machine) -> float:
        """0 when the point fits the machine; otherwise how far over the limit (graded)."""

    @abstractmethod
    def evaluate(self, point: Point, shape: Shape, machine: Machine) -> Metrics:
        """The oracle's verdict on a feasible point: at least `cycles`."""

    @abstractmethod
    def verify(self, point: Point, shape: Shape, machine: Machine) -> Verdict:
        """Re-run the point (functionally where the oracle can) and check it."""

    def estimate(self, point: Point, shape: Shape, machine: Machine) -> float | None:
        """A cheap analytic estimate of the cycles (the tile model), to rank points before
        simulating them; None when the family has none."""
        return None

    def canonical(self, point: Point, shape: Shape, T: int) -> Point:
        """The point with parameters that do not affect the schedule set to fixed values, so
        two points that build the same schedule are evaluated once and ranked once."""
        return point

    def describe(self, point: Point, shape: Shape, machine: Machine, per_char: int | None = None) -> str:
        """A human picture of the point (the engine timeline for GA-1, `per_char` cycles to a
        character)."""
        return ""

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        """Points every study starts from (the chapter's hand-written sweep, good defaults)."""
        return []

    def machine_record(self, machine: Machine) -> dict[str, int]:
        """The machine a result was measured on, as recorded with it; {} for a family whose
        own parameters are its machine."""
        return {}

    def machine_from_record(self, record: Mapping[str, int]) -> Machine:
        """The machine to re-run a recorded point on (inverse of machine_record)."""
        return Machine(**record) if record else Machine()

    def program(self, point: Point, shape: Shape, machine: Machine) -> Program | None:
        """The GA-1 program of the point (for timelines and export), or None for other oracles."""
        return None

    def work(self, shape: Shape, machine: Machine) -> Work | None:
        """What one program of the shape costs to build, run and verify (the size guard's
        estimate), or None for an oracle that builds no program."""
        return None

    def reference(self, shape: Shape, machine: Machine) -> tuple[int, str] | None:
        """The best hand-written schedule this oracle knows for the shape: (cycles, label)."""
        return None

    def bound(self, shape: Shape, machine: Machine) -> int | None:
        """A proven lower bound on the cycles of any point, or None."""
        return None

    def notes(self, shape: Shape, machine: Machine) -> list[str]:
        """What a user should know before tuning the shape on this machine, one line each."""
        return []


class GA1Family(Family):
    """A family that compiles to a GA-1 program, timed and verified by simcore."""

    oracle = "ga1"
    measures = ("cycles", "scratchpad_words", "dma_words_per_cycle", "mxu_cycles", "tiles_moved")

    @abstractmethod
    def slots_needed(self, point: Point, shape: Shape, machine: Machine) -> int:
        """Slots the schedule needs, from slot arithmetic alone (no compilation)."""

    @abstractmethod
    def build(self, point: Point, shape: Shape, machine: Machine) -> Program:
        """The GA-1 program for this point; may raise ScheduleError if it does not fit."""

    def generator(self, point: Point, shape: Shape, machine: Machine) -> Generator:
        """The compiled engine's generator of this point's program (by default, the built
        program): it times the program as it emits it and verifies it streamed."""
        return Materialised(shape, machine, lambda: self.build(point, shape, machine))

    def violation(self, point: Point, shape: Shape, machine: Machine) -> float:
        return float(max(0, self.slots_needed(point, shape, machine) - machine.slots))

    def evaluate(self, point: Point, shape: Shape, machine: Machine, timing_method: str = PERIODIC,
                 max_products: int | None = None) -> Metrics:
        """The engine's timing of the point: by the periodic method unless `timing_method` is
        "full" (the same figures; `timing_method` in the result says which one timed it). With
        `max_products`, simcore's TimingLimitError rather than simulate more tile products."""
        timing = self.generator(point, shape, machine).timing(timing_method, max_products)
        return {
            "cycles": timing.cycles, "tiles_moved": timing.tiles_moved, "loads": timing.loads,
            "stores": timing.stores, "mxu_util": timing.mxu_util(machine), "dma_busy": timing.dma_busy,
            "lower_bound": lower_bound(shape, machine),
            "slots_needed": self.slots_needed(point, shape, machine),
            "timing_method": timing.method,
        }

    def verify(self, point: Point, shape: Shape, machine: Machine) -> Verdict:
        verification = self.generator(point, shape, machine).verify()
        return Verdict(verification.ok, EXACT, verification.describe())

    def verify_reduced(self, point: Point, shape: Shape, machine: Machine) -> Verdict:
        """verify() on the schedule's reduced shape (simcore/ga1/reduced.py: the same family,
        parameters and machine, and every kind of block, edge and k step the full schedule has):
        a SCALED verdict, for schedules too large to run in full."""
        small = reduced_generator(self.generator(point, shape, machine))
        verification = small.verify()
        return Verdict(verification.ok, SCALED, f"on the reduced shape {small.shape}: {verification.describe()}")

    def describe(self, point: Point, shape: Shape, machine: Machine, per_char: int | None = None, width: int = 120) -> str:
        program = self.build(point, shape, machine)
        result = time_program(machine, program, record=True)  # starts and finishes, no trace
        assert result.starts is not None and result.finishes is not None
        step = per_char or max(1, -(-result.cycles // width))
        header = (f"{result.cycles} cycles, {result.tiles_moved} tiles moved, matrix-unit utilization "
                  f"{result.mxu_util(machine):.0%}   (one character = {step} cycles)")
        rows = engine_rows_of_arrays(engines_of(program.code), result.starts, result.finishes, result.cycles, step,
                                     ("dma", "mxu"), most=width + 1)
        return header + "\n" + draw(rows, width)

    def machine_record(self, machine: Machine) -> dict[str, int]:
        return machine.as_dict()

    def program(self, point: Point, shape: Shape, machine: Machine) -> Program | None:
        return self.build(point, shape, machine)

    def work(self, shape: Shape, machine: Machine) -> Work | None:
        return estimate(shape, machine)

    def reference(self, shape: Shape, machine: Machine) -> tuple[int, str] | None:
        return chapter_best(shape, machine)

    def bound(self, shape: Shape, machine: Machine) -> int | None:
        return lower_bound(shape, machine)

    def notes(self, shape: Shape, machine: Machine) -> list[str]:
        note = padding_note(shape, machine)
        return [note] if note else []


def padding_note(shape: Shape, machine: Machine) -> str | None:
    """One line when the shape is not a multiple of the tile: how it is padded, what it costs."""
    T = machine.T
    if shape.m % T == 0 and shape.k % T == 0 and shape.n % T == 0:
        return None
    mt, kt, nt = shape.tiles(T)
    padded = Shape(mt * T, kt * T, nt * T)
    extra = (padded.m * padded.k * padded.n) / (shape.m * shape.k * shape.n) - 1
    return (f"note: {shape} is not a multiple of the {T}x{T} tile: it runs zero-padded as {padded} "
            f"({mt}x{kt}x{nt} tiles), {extra:.1%} more matrix-unit work than the product needs")


@functools.lru_cache(maxsize=256)
def chapter_best(shape: Shape, machine: Machine) -> tuple[int, str] | None:
    """The chapter's best hand-written schedule on this machine: (cycles, label), or None when
    none of its schedules fits."""
    best: tuple[int, str] | None = None
    for schedule in chapter_sweep():
        if schedule.slots_needed(shape, machine) > machine.slots:
            continue
        cycles = chapter_generator(schedule, shape, machine).timing().cycles
        if best is None or cycles < best[0]:
            best = (cycles, schedule.label(shape, machine))
    return best


@dataclass(frozen=True)
class Space:
    """A named group of families, e.g. the chapter's families or the general generator."""

    name: str
    description: str
    families: tuple[Family, ...]


def canonical_json(point: Point) -> str:
    """One canonical text for a point: caches, leaderboards and the reference file key on it."""
    return json.dumps(point, sort_keys=True, separators=(",", ":"))
