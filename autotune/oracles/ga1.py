"""The GA-1 oracle: simcore's cycle simulator. Every GA-1 family decodes a point into a
generator of the compiled engine (`GA1Family.generator`); this oracle times it, verifies it
streamed (functional result against numpy's product, and the independent hazard replay), draws
its engine timeline, and knows the chapter's best schedule and the lower bound."""

from __future__ import annotations

import functools
from typing import Any, Mapping

from autotune.errors import OracleError
from autotune.oracles.base import EvaluationRefused, Metrics, Oracle
from search_spaces.base import EXACT, MODEL, SCALED, Family, GA1Family, Verdict
from search_spaces.domains import Point
from search_spaces.portfolio import CHAPTER_FAMILIES, portfolio
from search_spaces.registry import DEFAULT_SPACES, find_family
from search_spaces.registry import families as space_families
from search_spaces.stored import STORED, ProgramStore, StoredFamily, StoredProgramError
from simcore.energy import Cost, ga1_area_mm2, ga1_cost_of_timing
from simcore.ga1.estimate import (
    FULL_SIMULATION_PRODUCTS,
    ROWS_PER_PRODUCT,
    SEARCH_FULL_PRODUCTS,
    Work,
    estimate,
)
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import Machine, machine_from, parse_overrides
from simcore.ga1.program import OPCODE_NAMES, Program
from simcore.ga1.schedules import ScheduleError, chapter_sweep
from simcore.ga1.timelines import draw, engine_rows_of_arrays
from simcore.ga1.timing import Timing, engines_of, vector_duration
from simcore.shape import Shape

DEFAULT_SLOTS = 64  # the scratchpad of the main job (the chapter's larger machine)
# Headroom over the bound on a schedule's cycles: for the engine's intermediate sums and for
# programs with more rows per product than the generators emit.
COUNT_MARGIN = 4


def _ga1(family: Family) -> GA1Family:
    if not isinstance(family, GA1Family):
        raise TypeError(f"family {family.name!r} does not build GA-1 programs")
    return family


class GA1Oracle(Oracle):
    name = "ga1"
    description = "the GA-1 cycle simulator: DMA, scratchpad slots and a tile matrix unit"
    measures = (
        "cycles",
        "energy",
        "edp",
        "area",
        "scratchpad_words",
        "dma_words_per_cycle",
        "mxu_cycles",
        "tiles_moved",
    )
    machine_measures = ("area", "scratchpad_words", "dma_words_per_cycle", "mxu_cycles")
    default_spaces = DEFAULT_SPACES
    searches_machines = True

    def parse_machine(self, text: str) -> Machine:
        overrides = parse_overrides(text)
        slots = overrides.pop("slots", DEFAULT_SLOTS)
        return machine_from(overrides, slots)  # type: ignore[arg-type]

    def machine_from_record(self, record: Mapping[str, int]) -> Machine:
        return Machine(**record) if record else Machine(slots=DEFAULT_SLOTS)

    def tile_edge(self, machine: Machine) -> int:
        return machine.T

    def study_prefix(self, shape: Shape, machine: Machine) -> str:
        return f"ga1-{shape}-s{machine.slots}"

    def plain_machine(self, machine: Machine) -> Machine:
        return Machine(slots=machine.slots)

    def workload_prefix(self, workload: str, machine: Machine) -> str:
        return f"workload-{workload}-s{machine.slots}"

    def check_machine(self, machine: Machine) -> None:
        if machine.slots < 3:
            raise ValueError(
                f"a scratchpad of {machine.slots} slots is too small for any "
                f"schedule (a product needs 3: C, A and B)"
            )

    def upgrade_plan(self, stored: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in stored.items() if k not in ("target", "max_hbm_words")}

    def families(self, spaces: tuple[str, ...], machine: Any) -> tuple[Family, ...]:
        found = space_families(list(spaces or self.default_spaces))
        other = sorted({f.oracle for f in found} - {self.name})
        if other:
            raise ValueError(
                f"spaces {','.join(spaces)} hold {other[0]} families: use them with "
                f"the {other[0]} oracle"
            )
        return found

    def family(self, name: str) -> Family | None:
        if name == STORED:  # programs imported whole, kept in the study's folder
            return StoredFamily(ProgramStore.of_study(self.study_folder))
        try:
            found = find_family(name)
        except ValueError:
            return None
        return found if found.oracle == self.name else None

    timing_methods = ("periodic", "full")

    def timing(
        self, family: Family, point: Point, shape: Shape, machine: Machine, method: str = "periodic"
    ) -> Timing:
        """Periodically where the schedule settles, else in full within a search's limit
        (SEARCH_FULL_PRODUCTS, about a second); "full": every instruction, within
        FULL_SIMULATION_PRODUCTS. `full_limit` replaces either; EvaluationRefused past it."""
        from simcore.ga1.engine.methods import PERIODIC, TimingLimitError, check_method

        check_method(method)
        if method == PERIODIC:
            limit = self.full_limit or SEARCH_FULL_PRODUCTS
            budget = estimate(shape, machine).budget(limit)
        else:
            limit = budget = self.full_limit or FULL_SIMULATION_PRODUCTS
        try:
            return _ga1(family).generator(point, shape, machine).timing(method, max_products=budget)
        except TimingLimitError as exc:
            raise EvaluationRefused(
                f"{exc}; in full it would simulate more than the limit, {limit:.3g} products"
            ) from None

    def cycles_by(
        self, family: Family, point: Point, shape: Shape, machine: Machine, method: str
    ) -> int:
        return self.timing(family, point, shape, machine, method).cycles

    def evaluate(self, family: Family, point: Point, shape: Shape, machine: Machine) -> Metrics:
        ga1 = _ga1(family)
        timing = self.timing(family, point, shape, machine)
        return {
            "timing": timing.method,
            "cycles": timing.cycles,
            "tiles_moved": timing.tiles_moved,
            "loads": timing.loads,
            "stores": timing.stores,
            "mxu_util": timing.mxu_util(machine),
            "dma_busy": timing.dma_busy,
            "lower_bound": lower_bound(shape, machine),
            "slots_needed": ga1.slots_needed(point, shape, machine),
            **self._energy(machine, timing),
        }

    def _energy(self, machine: Machine, timing: Timing) -> Metrics:
        """Energy and area from the run's exact counts (simcore.energy.ga1)."""
        cost = ga1_cost_of_timing(machine, timing, self.tech())
        return {"macs": cost.macs, **{k: float(v) for k, v in cost.metrics().items()}}

    def machine_area_mm2(self, machine: Machine) -> float:
        return ga1_area_mm2(machine, self.tech())

    def cost(self, family: Family, point: Point, shape: Shape, machine: Machine) -> Cost:
        timing = self.timing(family, point, shape, machine)
        return ga1_cost_of_timing(machine, timing, self.tech())

    def verify(self, family: Family, point: Point, shape: Shape, machine: Machine) -> Verdict:
        """The whole program run and replayed (EXACT) up to FULL_VERIFICATION_PRODUCTS; past
        it, the same schedule on its reduced shape (SCALED: every kind of block, edge and k step
        it has, simcore.ga1.reduced); MODEL when even that is too large to run."""
        from simcore.ga1.reduced import verify_at_scale

        try:
            found = verify_at_scale(_ga1(family).generator(point, shape, machine))
        except StoredProgramError as exc:  # nothing to run: it cannot be verified
            return Verdict(False, EXACT, str(exc))
        if found.verification is None:
            return Verdict(True, MODEL, found.describe())
        level = EXACT if found.reduced is None else SCALED
        return Verdict(found.verification.ok, level, found.describe())

    def bound(self, shape: Shape, machine: Machine) -> int | None:
        return lower_bound(shape, machine)

    def reference(self, shape: Shape, machine: Machine) -> tuple[int, str] | None:
        return chapter_best(shape, machine)

    def notes(self, shape: Shape, machine: Machine) -> list[str]:
        note = padding_note(shape, machine)
        return [note] if note else []

    def work(self, shape: Shape, machine: Machine) -> Work:
        return estimate(shape, machine)

    def largest_counts(self, shape: Shape, machine: Machine) -> list[tuple[int, str]]:
        return largest_counts(shape, machine)

    def program(self, family: Family, point: Point, shape: Shape, machine: Machine) -> Program:
        try:
            return _ga1(family).generator(point, shape, machine).program()
        except StoredProgramError as exc:
            raise OracleError(str(exc)) from None

    def report(
        self,
        family: Family,
        point: Point,
        shape: Shape,
        machine: Machine,
        per_char: int | None = None,
        width: int = 120,
    ) -> str:
        from simcore.ga1.engine import time_program  # numba: loaded by what runs the engine

        program = self.program(family, point, shape, machine)
        result = time_program(machine, program, record=True)  # starts and finishes, no trace
        assert result.starts is not None and result.finishes is not None
        step = per_char or max(1, -(-result.cycles // width))
        header = (
            f"{result.cycles} cycles, {result.tiles_moved} tiles moved, matrix-unit "
            f"utilization {result.mxu_util(machine):.0%}   (one character = {step} cycles)"
        )
        rows = engine_rows_of_arrays(
            engines_of(program.code),
            result.starts,
            result.finishes,
            result.cycles,
            step,
            ("dma", "mxu"),
            most=width + 1,
        )
        return header + "\n" + draw(rows, width)

    def describe_machine(self, machine: Machine) -> str:
        """slots and the parameters that differ from the chapter's machine."""
        default = Machine().as_dict()
        return ",".join(
            f"{k}={v}" for k, v in machine.as_dict().items() if k == "slots" or default.get(k) != v
        )

    def best_schedules(
        self, families: tuple[Family, ...], shape: Shape, machine: Machine
    ) -> tuple[tuple[str, Point, Metrics] | None, tuple[str, Point, Metrics] | None]:
        """The best of the fixed portfolio (search_spaces.portfolio) and its best chapter
        schedule; ties by the canonical key, so equal runs choose the same schedule."""
        by_name = {f.name: f for f in families}
        found: list[tuple[tuple[float, str], tuple[str, Point, Metrics]]] = []
        for entry in portfolio(families, shape, machine):
            family = by_name[entry.family]
            if family.violation(entry.point, shape, machine) > 0:
                continue  # infeasible: never simulated
            try:
                metrics = self.evaluate(family, entry.point, shape, machine)
            except (
                ScheduleError,
                EvaluationRefused,
            ):  # the slot count was optimistic: does not fit after all
                continue
            found.append(
                (
                    (float(metrics["cycles"]), entry.key()),  # type: ignore[arg-type]
                    (entry.family, entry.point, metrics),
                )
            )
        top = min(found, key=lambda f: f[0], default=None)
        chapter = min(
            (f for f in found if f[1][0] in CHAPTER_FAMILIES), key=lambda f: f[0], default=None
        )
        return (top[1] if top else None), (chapter[1] if chapter else None)


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

    best: tuple[int, str] | None = None
    for schedule in chapter_sweep():
        if schedule.slots_needed(shape, machine) > machine.slots:
            continue
        cycles = chapter_generator(schedule, shape, machine).timing().cycles
        if best is None or cycles < best[0]:
            best = (cycles, schedule.label(shape, machine))
    return best


ORACLE = GA1Oracle()
