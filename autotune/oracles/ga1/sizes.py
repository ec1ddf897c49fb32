"""GA-1's sizes: what an evaluation costs before anything is generated (the size guard, from
simcore.ga1.estimate), the bounds on what a run counts (64-bit), the note on a padded shape, and
the chapter's best schedule, the reference every study is compared with."""

from __future__ import annotations

import functools

from autotune.oracles.capabilities import SizeGuard, Work, duration
from simcore.ga1.estimate import (
    FULL_SIMULATION_PRODUCTS,
    ROWS_PER_PRODUCT,
    SEARCH_FULL_PRODUCTS,
    estimate,
)
from simcore.ga1.machine import Machine
from simcore.shape import Shape

# Headroom over the bound on a schedule's cycles: for the engine's intermediate sums and for
# programs with more rows per product than the generators emit.
COUNT_MARGIN = 4
ANNOUNCE_SECONDS = 2.0  # an evaluation this long is announced before the first one
ANNOUNCE_ROWS = 1_000_000  # a program this long takes seconds to build and to draw
_compile_announced = False  # the compile notice is given once per process


class GA1SizeGuard(SizeGuard):
    """The work of a GA-1 evaluation is its tile products (simcore.ga1.estimate)."""

    most_work = FULL_SIMULATION_PRODUCTS  # 2**27 tile products take about 20 s in full
    work_unit = "tile products"

    def work(self, shape: Shape, machine: Machine) -> Work:
        return estimate(shape, machine)

    def describe_work(self, shape: Shape, machine: Machine) -> str:
        return f"{shape} on {machine.slots} slots (T={machine.T})"

    def notices(self, shape: Shape, work: Work, program: bool = False) -> list[str]:
        """How an evaluation of `shape` is timed when it will take a while, and the engine's
        compilation the first time it runs in this process."""
        found = []
        full = self.full_limit or SEARCH_FULL_PRODUCTS  # what a search simulates in full
        if not program and work.products > full:
            found.append(
                f"{shape}: {work.products:.3g} tile products, timed periodically (about "
                f"{duration(work.periodic_seconds)} each); a schedule that does not settle into a "
                f"period is refused (in full it would take {duration(work.evaluation_seconds)})"
            )
        elif not program and work.evaluation_seconds >= ANNOUNCE_SECONDS:
            found.append(
                f"{shape}: {work.products:.3g} tile products per evaluation, timed "
                f"periodically (about {duration(work.periodic_seconds)} each); a schedule that does "
                f"not settle into a period is timed in full, about "
                f"{duration(work.evaluation_seconds)}"
            )
        if program and work.instructions >= ANNOUNCE_ROWS:
            found.append(
                f"{shape}: building the program (up to {work.instructions:.3g} instructions) and "
                f"its picture takes a while at this size"
            )
        return found + compile_notice()


def compile_notice() -> list[str]:
    """Once per process, when the GA-1 engine is about to be compiled."""
    from simcore.ga1.engine import cache_is_warm  # numba: loaded by what runs the engine

    global _compile_announced
    if _compile_announced or cache_is_warm():
        return []
    _compile_announced = True
    return ["compiling the GA-1 engine (numba; once per machine, about 16 s)"]


def padding_note(shape: Shape, machine: Machine) -> str | None:
    """One line when the shape is not a multiple of the tile: how it is padded, what it costs."""
    T = machine.T
    if shape.m % T == 0 and shape.k % T == 0 and shape.n % T == 0:
        return None
    mt, kt, nt = shape.tiles(T)
    padded = Shape(mt * T, kt * T, nt * T)
    extra = (padded.m * padded.k * padded.n) / (shape.m * shape.k * shape.n) - 1
    return (
        f"note: {shape} is not a multiple of the {T}x{T} tile: it runs zero-padded as "
        f"{padded} ({mt}x{kt}x{nt} tiles), {extra:.1%} more matrix-unit work than the "
        f"product needs"
    )


def slowest_row(machine: Machine) -> int:
    """The most cycles one instruction adds to a program's end: a tile transfer, a product with
    its fill, or a vector instruction."""
    from simcore.ga1.program import OPCODE_NAMES
    from simcore.ga1.timing import vector_duration

    vector = max(vector_duration(machine, op) for op in range(len(OPCODE_NAMES)))
    return max(machine.dma_cycles, machine.mxu_cycles + machine.mxu_fill, vector)


def largest_counts(shape: Shape, machine: Machine) -> list[tuple[int, str]]:
    """Bounds on what a run of `shape` counts. An instruction starts by the time every earlier
    one has finished (simcore.ga1.timing), so a program ends within the sum of its rows'
    durations: at most ROWS_PER_PRODUCT rows per tile product, each at most `slowest_row`."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    products = Mt * Kt * Nt
    per_product = COUNT_MARGIN * ROWS_PER_PRODUCT * slowest_row(machine)
    return [
        (products * machine.T**3, "its multiply-accumulates (tiles zero-padded)"),
        (products * ROWS_PER_PRODUCT * machine.tile_words, "the words it moves"),
        (
            products * per_product,
            f"the cycles of a schedule on this machine (allowing {per_product} per tile product)",
        ),
    ]


@functools.lru_cache(maxsize=256)
def chapter_best(shape: Shape, machine: Machine) -> tuple[int, str] | None:
    """The chapter's best hand-written schedule on this machine: (cycles, label), or None when
    none of its schedules fits."""
    from simcore.ga1.engine import chapter_generator  # numba: loaded by what runs the engine
    from simcore.ga1.schedules import chapter_sweep

    best: tuple[int, str] | None = None
    for schedule in chapter_sweep():
        if schedule.slots_needed(shape, machine) > machine.slots:
            continue
        cycles = chapter_generator(schedule, shape, machine).timing().cycles
        if best is None or cycles < best[0]:
            best = (cycles, schedule.label(shape, machine))
    return best
