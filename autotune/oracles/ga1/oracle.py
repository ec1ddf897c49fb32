"""The GA-1 oracle: simcore's cycle simulator. Every GA-1 family decodes a point into a
generator of the compiled engine (`GA1Family.generator`); this oracle times it, verifies it
streamed (functional result against numpy's product, and the independent hazard replay), draws
its engine timeline, and knows the chapter's best schedule and the lower bound.

Its module loads no numerical library: the engine, the energy model and the schedules' programs
are imported by the methods that use them, so that naming the oracle (the command line's help,
its registry) stays light."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from autotune.errors import EvaluationRefused, Infeasible, OracleError
from autotune.oracles.base import Metrics, Oracle
from autotune.oracles.capabilities import (
    EnergyAndArea,
    ImportedSchedules,
    MachineSearch,
    MachineSettings,
    MachineSpace,
    Notes,
    Programs,
    Reference,
    Report,
    Timeline,
    TimingMethods,
)
from autotune.oracles.fusion import FusedTime, Fusion
from autotune.oracles.ga1 import machines
from autotune.oracles.ga1.measures import MEASURES, TABLE_COLUMNS
from autotune.oracles.ga1.sizes import GA1SizeGuard, chapter_best, largest_counts, padding_note
from autotune.oracles.operations import Operations, OperationTime
from search_spaces.base import EXACT, MODEL, SCALED, Family, GA1Family, Verdict
from search_spaces.domains import Point
from search_spaces.registry import DEFAULT_SPACES, find_family
from search_spaces.registry import families as space_families
from search_spaces.stored import STORED, ProgramStore, StoredFamily, StoredProgramError
from simcore.ga1.estimate import FULL_SIMULATION_PRODUCTS, SEARCH_FULL_PRODUCTS, estimate
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import Machine, machine_from, parse_overrides
from simcore.shape import Shape

if TYPE_CHECKING:
    from simcore.energy import Cost
    from simcore.fusion.groups import FusedGroup
    from simcore.ga1.program import Program
    from simcore.ga1.timing import Timing
    from workloads.graph import Operation as GraphOperation

DEFAULT_SLOTS = 64  # the scratchpad of the main job (the chapter's larger machine)
TIMELINE_SPANS = 4096  # per row of a timeline: a picture shows no more


def _ga1(family: Family) -> GA1Family:
    if not isinstance(family, GA1Family):
        raise TypeError(f"family {family.name!r} does not build GA-1 programs")
    return family


class GA1Oracle(
    Oracle,
    GA1SizeGuard,
    EnergyAndArea,
    TimingMethods,
    Report,
    Programs,
    Reference,
    Notes,
    MachineSearch,
    ImportedSchedules,
    Operations,
    Fusion,
):
    name = "ga1"
    description = "the GA-1 cycle simulator: DMA, scratchpad slots and a tile matrix unit"
    measures = MEASURES
    table_columns = TABLE_COLUMNS
    default_spaces = DEFAULT_SPACES
    timing_methods = ("periodic", "full")
    # A co-design study's identity has always named this oracle so: resumable.
    codesign_oracle = "ga1-codesign"
    front_columns = machines.FRONT_COLUMNS

    # --- the machine and the study --------------------------------------------------------------

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

    def describe_machine(self, machine: Machine) -> str:
        """slots and the parameters that differ from the chapter's machine."""
        default = Machine().as_dict()
        return ",".join(
            f"{k}={v}" for k, v in machine.as_dict().items() if k == "slots" or default.get(k) != v
        )

    # --- the search spaces ----------------------------------------------------------------------

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

    # --- cost -----------------------------------------------------------------------------------

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
        from simcore.ga1.schedules import ScheduleError

        ga1 = _ga1(family)
        try:
            timing = self.timing(family, point, shape, machine)
        except ScheduleError as exc:
            # The cheap slot count was optimistic: the compiler found the working set too big.
            raise Infeasible(str(exc), limit="slots", over_by=1.0, unit="slots") from None
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
            **self.energy_metrics(machine, timing),
        }

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

    def largest_counts(self, shape: Shape, machine: Machine) -> list[tuple[int, str]]:
        return largest_counts(shape, machine)

    # --- energy and area ------------------------------------------------------------------------

    def energy_metrics(self, machine: Machine, timing: Timing) -> Metrics:
        """Energy and area from the run's exact counts (simcore.energy.ga1)."""
        from simcore.energy import ga1_cost_of_timing

        cost = ga1_cost_of_timing(machine, timing, self.tech())
        return {"macs": cost.macs, **{k: float(v) for k, v in cost.metrics().items()}}

    def machine_area_mm2(self, machine: Machine) -> float:
        from simcore.energy import ga1_area_mm2

        return ga1_area_mm2(machine, self.tech())

    def cost(self, family: Family, point: Point, shape: Shape, machine: Machine) -> Cost:
        from simcore.energy import ga1_cost_of_timing

        timing = self.timing(family, point, shape, machine)
        return ga1_cost_of_timing(machine, timing, self.tech())

    # --- pictures, programs, references, notes --------------------------------------------------

    def program(self, family: Family, point: Point, shape: Shape, machine: Machine) -> Program:
        try:
            return _ga1(family).generator(point, shape, machine).program()
        except StoredProgramError as exc:
            raise OracleError(str(exc)) from None

    def program_text(self, program: Program) -> str:
        from simcore.ga1.asm import to_text

        return to_text(program)

    def timeline(self, program: Program, machine: Machine, zoom: int) -> Timeline:
        """Busy spans merged to about TIMELINE_SPANS a row: the picture shows no more."""
        from simcore.ga1.engine import time_program  # numba: loaded by what runs the engine
        from simcore.ga1.engine.spans import busy_spans, first_instructions

        run = time_program(machine, program, record=True)  # starts and finishes, no trace
        assert run.starts is not None and run.finishes is not None
        return Timeline(
            run.cycles,
            ("DMA load", "DMA store", "matrix unit"),
            tuple(busy_spans(program, run.starts, run.finishes, most=TIMELINE_SPANS)),
            tuple(first_instructions(program, run.starts, run.finishes, zoom)),
            zoom,
            run.mxu_util(machine),
        )

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
        from simcore.ga1.timelines import draw, engine_rows_of_arrays
        from simcore.ga1.timing import engines_of

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

    def reference(self, shape: Shape, machine: Machine) -> tuple[int, str] | None:
        return chapter_best(shape, machine)

    # --- a network's other operations (autotune/oracles/ga1/operations.py) ----------------------

    def supports(self, operation: GraphOperation) -> bool:
        from autotune.oracles.ga1 import operations

        return operations.supports(operation)

    def time_operation(self, operation: GraphOperation, machine: Machine) -> OperationTime:
        from autotune.oracles.ga1 import operations

        return operations.time_operation(operation, machine, self.tech())

    # --- fused groups (autotune/oracles/ga1/fusion.py) -------------------------------------------

    fusion_kinds = ("epilogue", "mlp", "attention")

    def time_fused(
        self, group: FusedGroup, machine: Machine, objective: str = "cycles"
    ) -> FusedTime:
        from autotune.oracles.ga1 import fusion

        return fusion.time_fused(group, machine, self.tech(), objective)

    def notes(self, shape: Shape, machine: Machine) -> list[str]:
        note = padding_note(shape, machine)
        return [note] if note else []

    # --- machines searched ------------------------------------------------------------------------

    def machine_space(self, base: Machine, settings: MachineSettings) -> MachineSpace:
        return machines.machine_space(base, settings)

    def machine_limits(self, machine: Machine, settings: MachineSettings) -> dict[str, float]:
        return machines.machine_limits(machine, settings)

    def machine_columns(self, machine: Machine) -> dict[str, object]:
        return machines.machine_columns(machine)

    def best_schedules(
        self, families: Sequence[Family], shape: Shape, machine: Machine
    ) -> tuple[tuple[str, Point, Metrics] | None, tuple[str, Point, Metrics] | None]:
        return machines.best_schedules(self, families, shape, machine)


ORACLE = GA1Oracle()
