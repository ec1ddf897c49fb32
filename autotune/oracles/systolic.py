"""The systolic oracle: an R x C array (ws, os or is) for one GEMM. Its machine is a budget,
most PEs and most HBM words per cycle; the design itself (array, dataflow, shadow registers,
HBM link, mapping) is the searched point. Or its machine is an architecture with its memory
(`arch=NAME|FILE`, autotune.oracles.systolic_memory): the array is fixed and the block schedule
above it (blocks that fit the buffers, loop order, spans, buffering) is the searched point.

Every dataflow is timed by its own closed form (`simcore.systolic.closed_form`) and verified by its
own cycle model (`simcore.systolic.cycle`, the event engine) on the design itself: `exact`. Only
a design too big for the verification budget is checked on a smaller problem with the same
array, mapping and tile kinds (at most three tiles per dimension, the stream cut short), and
that verdict says `scaled`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from autotune.oracles.base import Metrics
from autotune.oracles.capabilities import EnergyAndArea, Report
from autotune.oracles.fusion import FusedTime, Fusion
from autotune.oracles.measures import (
    AREA,
    CYCLES,
    EDP,
    ENERGY,
    ENERGY_BREAKDOWN,
    ENERGY_COLUMNS,
    ENERGY_PER_MAC,
    LOWER_BOUND,
    MACS,
    Measure,
    TableColumn,
)
from autotune.oracles.operations import Operations, OperationTime
from autotune.oracles.systolic_check import largest_counts, verify_design
from autotune.oracles.systolic_memory import memory
from autotune.oracles.systolic_memory.capabilities import ArchitectureSearch
from autotune.oracles.systolic_memory.machine import ArchMachine
from autotune.oracles.systolic_memory.measures import MEMORY_MEASURES
from autotune.oracles.systolic_memory.search import record_of
from search_spaces.base import Family, Verdict
from search_spaces.domains import Point
from search_spaces.systolic import (
    DEFAULT_MAX_HBM_WORDS,
    DEFAULT_PE_BUDGET,
    SPACE,
    SystolicFamily,
    systolic_family,
)
from search_spaces.systolic_blocked import FAMILY as BLOCKED
from search_spaces.systolic_blocked import BlockedFamily
from simcore.shape import COUNT_LIMIT, Shape, parse_int
from simcore.systolic.closed_form import cycles
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import (
    HbmLink,
    SystolicDesign,
    Traffic,
    design_traffic,
    hbm_words,
    tile_count,
)

if TYPE_CHECKING:
    from simcore.energy import Cost
    from simcore.fusion.groups import FusedGroup

# The machine field of a systolic study's identity: the GA-1 default key its studies have held.
_STUDY_MACHINE_KEY = (
    "T=8,slots=64,dma_setup=16,dma_words_per_cycle=16,mxu_cycles=8,mxu_fill=8,"
    "vpu_lanes=16,sfu_lanes=4"
)


@dataclass(frozen=True)
class SystolicBudget:
    """The systolic oracle's machine: what a design may use."""

    pe_budget: int = DEFAULT_PE_BUDGET
    max_hbm_words: int = DEFAULT_MAX_HBM_WORDS

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
            if value > COUNT_LIMIT:
                raise ValueError(
                    f"{name} must be at most {COUNT_LIMIT:.3g} (a 64-bit count), got {value}"
                )

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def key(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.as_dict().items())


# What a design's run reports, in the leaderboard's column order.
MEASURES: tuple[Measure, ...] = (
    CYCLES,
    ENERGY,
    ENERGY_PER_MAC,
    EDP,
    AREA,
    Measure("words_per_mac", unit="words", help="buffer words moved per multiply-accumulate"),
    Measure("mac_utilization", objective=False),
    LOWER_BOUND,
    MACS,
    *ENERGY_BREAKDOWN,
    Measure("tiles", objective=False, dtype="int"),
    Measure("pes", unit="PEs", dtype="int", help="the design's processing elements"),
    Measure("buffer_words", objective=False, dtype="int"),
    *MEMORY_MEASURES,
)


def parse_budget(text: str) -> SystolicBudget:
    """The budget of `pe_budget=N,max_hbm_words=N` (ValueError naming the key)."""
    values: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or key not in SystolicBudget.__dataclass_fields__:
            raise ValueError(
                f"systolic machine key {item!r}: expected pe_budget=N or max_hbm_words=N"
            )
        if key in values:
            raise ValueError(f"systolic machine key {key} is given twice")
        values[key] = parse_int(raw, f"systolic machine key {key}")
    return SystolicBudget(**values)


def _link(design: SystolicDesign, shape: Shape, run_cycles: int) -> Metrics:
    """What the design's HBM link adds: the cycles over the same design with its tiles on
    chip, and the words it moves."""
    on_chip = replace(design, hbm=HbmLink(None, design.hbm.buffers))
    return {
        "stall_cycles": run_cycles - cycles(on_chip, shape),
        "dram_words": float(hbm_words(design, shape)),
    }


def _system(machine: Any) -> SystolicMachine:
    if not isinstance(machine, ArchMachine):
        raise TypeError("a block schedule runs on an architecture (arch=NAME|FILE)")
    return machine.system


def _systolic(family: Family) -> SystolicFamily:
    if not isinstance(family, SystolicFamily):
        raise TypeError(f"family {family.name!r} is not a systolic design")
    return family


class SystolicOracle(ArchitectureSearch, EnergyAndArea, Report, Operations, Fusion):
    name = "systolic"
    description = "an R x C systolic array (ws, os, is) and its mapping under a PE budget"
    measures = MEASURES
    # An architecture's runs show their stall share (the array oracle reports none).
    table_columns = (*ENERGY_COLUMNS, TableColumn("stall_share", "stall", 6, ".1%"))
    default_objectives = ("cycles", "words_per_mac")
    default_spaces = ("systolic",)
    takes_workloads = True

    def parse_machine(self, text: str) -> SystolicBudget | ArchMachine:
        return memory.parse_arch_text(text) or parse_budget(text)

    def machine_record(self, machine: Any) -> dict[str, Any]:
        # The design is the point; an architecture is recorded whole, to rebuild the entry.
        if isinstance(machine, ArchMachine):
            return {**machine.as_dict(), **record_of(machine.system)}
        return {}

    def describe_machine(self, machine: Any) -> str:
        return machine.describe() if isinstance(machine, ArchMachine) else machine.key()

    def identity(self, machine: SystolicBudget | ArchMachine) -> dict[str, object]:
        if isinstance(machine, ArchMachine):
            return {"machine": machine.key()}
        # Every systolic study has recorded this machine key beside its budgets: resumable.
        return {"machine": _STUDY_MACHINE_KEY, **machine.as_dict()}

    def study_prefix(self, shape: Shape, machine: SystolicBudget | ArchMachine) -> str:
        if isinstance(machine, ArchMachine):
            return f"systolic-{shape}-{machine.label}"
        return f"systolic-{shape}-pe{machine.pe_budget}"

    def workload_prefix(self, workload: str, machine: SystolicBudget | ArchMachine) -> str:
        if isinstance(machine, ArchMachine):
            return f"workload-{workload}-{machine.label}"
        return f"workload-{workload}-pe{machine.pe_budget}"

    def plain_machine(self, machine: SystolicBudget | ArchMachine) -> SystolicBudget | ArchMachine:
        """A bundled architecture without overrides is named in full; with overrides its
        name has a digest. The others name themselves."""
        if isinstance(machine, ArchMachine) and machine.bundled:
            return self.arch_machine(machine.arch)
        return machine

    def upgrade_plan(self, stored: dict[str, Any]) -> dict[str, Any]:
        """Plans stored with a `target` held a GA-1 machine and the budgets beside it."""
        if "arch" in dict(stored.get("machine") or {}):
            return stored
        upgraded = {k: v for k, v in stored.items() if k not in ("target", "max_hbm_words")}
        if "pe_budget" not in dict(stored.get("machine") or {}):
            upgraded["machine"] = {
                "pe_budget": int(stored.get("pe_budget", DEFAULT_PE_BUDGET)),
                "max_hbm_words": int(stored.get("max_hbm_words") or DEFAULT_MAX_HBM_WORDS),
            }
            upgraded["spaces"] = ",".join(self.default_spaces)
        return upgraded

    def machine_from_record(self, record: Mapping[str, Any]) -> SystolicBudget | ArchMachine:
        if "arch" in record:
            return memory.from_record(record)
        return SystolicBudget(**record) if record else SystolicBudget()

    def families(
        self, spaces: tuple[str, ...], machine: SystolicBudget | ArchMachine
    ) -> tuple[Family, ...]:
        blocked = isinstance(machine, ArchMachine)
        if spaces and tuple(spaces) not in (self.default_spaces, (BLOCKED.name,) * blocked):
            raise ValueError(
                f"the systolic oracle searches the space 'systolic', not {','.join(spaces)}"
            )
        if isinstance(machine, ArchMachine):
            return (BlockedFamily(machine.system),)
        return (systolic_family(machine.pe_budget, machine.max_hbm_words),)

    def family(self, name: str) -> Family | None:
        return {f.name: f for f in (SPACE.families[0], BLOCKED)}.get(name)

    def evaluate(self, family: Family, point: Point, shape: Shape, machine: Any) -> Metrics:
        if isinstance(family, BlockedFamily):
            run = memory.run(_system(machine), point, shape)
            return memory.metrics(run, memory.cost_of(run, self.tech()))
        design = _systolic(family).design(point)
        run_cycles = cycles(design, shape)
        t = design_traffic(design, shape)
        return {
            "cycles": run_cycles,
            "words_per_mac": t.words_per_mac,
            "mac_utilization": t.macs / (design.array.pes * run_cycles),
            "tiles": tile_count(design, shape),
            "pes": design.array.pes,
            "macs": t.macs,
            "buffer_words": t.total,
            "lower_bound": self.bound(shape, machine),
            **self.energy_metrics(design, shape, run_cycles, t),
            **_link(design, shape, run_cycles),
        }

    def energy_metrics(
        self, design: SystolicDesign, shape: Shape, run_cycles: int, traffic: Traffic
    ) -> Metrics:
        """Energy and area from the run's exact counts, as the metrics every evaluation carries."""
        cost = self._cost(design, shape, run_cycles, traffic)
        found: Metrics = {k: float(v) for k, v in cost.metrics().items()}
        found["buffer_area_mm2"] = memory.buffer_area_mm2(cost)
        return found

    def _cost(
        self, design: SystolicDesign, shape: Shape, run_cycles: int, traffic: Traffic
    ) -> Cost:
        """Energy and area from the model's exact counts (simcore.energy.systolic)."""
        from simcore.energy import systolic_cost, systolic_counts

        tech = self.tech()
        return systolic_cost(
            design, systolic_counts(design, shape, run_cycles, tech, traffic), tech
        )

    def area_mm2(self, family: Family, point: Point, shape: Shape, machine: Any) -> float:
        from simcore.energy import systolic_area_mm2

        if isinstance(family, BlockedFamily):
            return memory.area_mm2(_system(machine), self.tech())
        return systolic_area_mm2(_systolic(family).design(point), shape, self.tech())

    def cost(self, family: Family, point: Point, shape: Shape, machine: Any) -> Cost:
        if isinstance(family, BlockedFamily):
            return memory.cost_of(memory.run(_system(machine), point, shape), self.tech())
        design = _systolic(family).design(point)
        return self._cost(design, shape, cycles(design, shape), design_traffic(design, shape))

    def verify(self, family: Family, point: Point, shape: Shape, machine: Any) -> Verdict:
        if isinstance(family, BlockedFamily):
            return memory.verify(_system(machine), point, shape)
        return verify_design(_systolic(family).design(point), shape)

    def largest_counts(
        self, shape: Shape, machine: SystolicBudget | ArchMachine
    ) -> list[tuple[int, str]]:
        if isinstance(machine, ArchMachine):
            return memory.largest_counts(machine.system, shape)
        return largest_counts(shape, machine.pe_budget, 1)

    def bound(self, shape: Shape, machine: SystolicBudget | ArchMachine) -> int:
        """A PE does at most one multiply-accumulate a cycle and a design has at most
        pe_budget PEs: no design takes fewer than MACs / pe_budget cycles. On an architecture:
        the bound of its memory system (simcore.systolic.blocked.bounds)."""
        if isinstance(machine, ArchMachine):
            return memory.machine_bound(machine.system, shape)
        return -(-shape.m * shape.k * shape.n // machine.pe_budget)

    # --- a network's other operations (autotune/oracles/systolic_memory/operations.py) ------
    def supports(self, operation: Any) -> bool:
        from autotune.oracles.systolic_memory import operations

        return operations.supports(operation)

    def time_operation(self, operation: Any, machine: Any) -> OperationTime:
        from autotune.errors import OracleError
        from autotune.oracles.systolic_memory import operations

        if not isinstance(machine, ArchMachine):
            raise OracleError(
                "the systolic oracle times a network's operations on an architecture with its "
                "memory and vector unit (arch=NAME|FILE)"
            )
        return operations.time_operation(operation, machine.system, self.tech())

    # --- fused groups (autotune/oracles/systolic_memory/fusion.py) -----------------------------
    fusion_kinds = ("epilogue", "mlp", "attention")  # attention groups are refused, one by one

    def time_fused(self, group: FusedGroup, machine: Any, objective: str = "cycles") -> FusedTime:
        from autotune.errors import OracleError
        from autotune.oracles.systolic_memory import fusion

        if not isinstance(machine, ArchMachine):
            raise OracleError(
                "the systolic oracle fuses groups on an architecture (arch=NAME|FILE)"
            )
        return fusion.time_fused(group, machine.system, self.tech(), objective)

    def report(
        self, family: Family, point: Point, shape: Shape, machine: Any, per_char: int | None = None
    ) -> str:
        if isinstance(family, BlockedFamily):
            system = _system(machine)
            run = memory.run(system, point, shape)
            return memory.report(run, memory.cost_of(run, self.tech()), run.design)
        design = _systolic(family).design(point)
        run_cycles = cycles(design, shape)
        t = design_traffic(design, shape)
        a, m = design.array, design.used
        return (
            f"{a} array ({a.pes} PEs), {design.dataflow}, mapped on {m.rows}x{m.cols} ({m.order}), "
            f"{design.assumptions.describe()}, {design.hbm.buffers} buffer(s), "
            f"{design.hbm.hbm_words_per_cycle} HBM words/cycle\n"
            f"{shape}: {tile_count(design, shape)} tiles, {run_cycles} cycles, "
            f"{t.macs / (a.pes * run_cycles):.0%} of MAC slots busy, {t.words_per_mac:.4g} buffer "
            f"words/MAC (A {t.a_reads}, B {t.b_reads}, partial sums {t.psum_writes} + "
            f"{t.psum_readbacks}, C {t.c_writes})"
        )


ORACLE = SystolicOracle()
