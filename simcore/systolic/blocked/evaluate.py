"""One block schedule on one machine, in figures: cycles, stalls, the traffic of every store and
of the DRAM link, and the lower bound it is held to."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from simcore.shape import Shape
from simcore.systolic.blocked.bounds import Bound, bound
from simcore.systolic.blocked.counts import BlockCounts, block_counts
from simcore.systolic.blocked.fast import run_fast
from simcore.systolic.blocked.reference import run_reference
from simcore.systolic.blocked.schedule import BlockSchedule, check_design, feasibility
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign

ENGINES = ("fast", "reference")


class InfeasibleSchedule(ValueError):
    """The blocks do not fit the buffers; the message says which store and by how many words."""


@dataclass(frozen=True)
class MemoryRun:
    """A GEMM under a block schedule on a machine with its memory."""

    machine: SystolicMachine
    design: SystolicDesign
    schedule: BlockSchedule
    shape: Shape
    cycles: int
    compute_cycles: int  # the same tile stream with every DRAM transfer instant
    counts: BlockCounts
    bound: Bound
    engine: str

    @property
    def stall_cycles(self) -> int:
        """The cycles the array waits for DRAM."""
        return self.cycles - self.compute_cycles

    @property
    def stall_share(self) -> float:
        return self.stall_cycles / self.cycles

    @property
    def seconds(self) -> Fraction:
        return self.cycles / self.machine.clock_hz

    @property
    def mac_utilization(self) -> float:
        return self.shape.macs / (self.machine.array.pes * self.cycles)

    @property
    def bound_ratio(self) -> float:
        """Cycles over the lower bound (1.0: the bound is reached)."""
        return self.cycles / self.bound.cycles

    def metrics(self) -> dict[str, float | int]:
        """The flat figures a trial record carries."""
        dram = self.counts.dram
        by_bytes = dram.bytes(self.machine)
        return {
            "cycles": self.cycles,
            "compute_cycles": self.compute_cycles,
            "stall_cycles": self.stall_cycles,
            "mac_utilization": self.mac_utilization,
            "dram_a_reads": dram.a_reads,
            "dram_b_reads": dram.b_reads,
            "dram_c_reads": dram.c_reads,
            "dram_c_writes": dram.c_writes,
            "dram_words": float(dram.link_words(self.machine)),
            "dram_bytes": float(sum(by_bytes.values())),
            "lower_bound": self.bound.cycles,
            "bound_ratio": self.bound_ratio,
        }


def evaluate(
    machine: SystolicMachine,
    design: SystolicDesign,
    schedule: BlockSchedule,
    shape: Shape,
    engine: str = "fast",
) -> MemoryRun:
    """Check the blocks fit (InfeasibleSchedule otherwise), then time and count the run."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    check_design(machine, design)
    fit = feasibility(machine, schedule, shape)
    if not fit.ok:
        raise InfeasibleSchedule(
            f"schedule {schedule.describe()} on {machine.name}: {fit.describe()}"
        )
    if engine == "fast":
        fast = run_fast(machine, design, schedule, shape)
        cycles, compute = fast.cycles, fast.compute_cycles
    else:
        timeline = run_reference(machine, design, schedule, shape)
        cycles, compute = timeline.cycles, timeline.compute_cycles
    counts = block_counts(machine, design, schedule, shape)
    return MemoryRun(
        machine,
        design,
        schedule.clipped(shape),
        shape,
        cycles,
        compute,
        counts,
        bound(machine, shape, design),
        engine,
    )
