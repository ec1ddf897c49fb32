"""Independent GEMMs of one shape timed as one run: the heads of an attention einsum, say.

A `Batch` of `runs` GEMMs under one block schedule is spread over `lanes` groups of the
machine's side-by-side arrays (`array.arrays`; one group of all of them is the whole array):
run g goes to lane g mod lanes, and each lane runs its GEMMs one after the other as one more
loop outside the schedule's, its tiles following one another on its array across GEMMs. The
lanes share the stores (each holds its own tiles: the footprint times the lanes) and the link,
which serves their requests in issue order: round by round, step by step, lane by lane. Both
engines time it (`reference`, `fast`), held equal by tests; the counts and the energy are the
runs' (every GEMM moves the same words), the bound is the batch's (`bounds.bound`).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

from simcore.shape import Shape
from simcore.systolic.blocked.bounds import Bound, bound
from simcore.systolic.blocked.counts import block_counts
from simcore.systolic.blocked.enumerate import candidates, distinct, most_candidates, own_bound
from simcore.systolic.blocked.evaluate import ENGINES, InfeasibleSchedule, MemoryRun
from simcore.systolic.blocked.fast import run_fast
from simcore.systolic.blocked.reference import run_reference
from simcore.systolic.blocked.schedule import Batch, BlockSchedule, check_design, feasibility
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign


@dataclass(frozen=True)
class BatchRun:
    """A batch under one block schedule: `one` is a single GEMM of it (its schedule, design,
    counts and energy; its cycles are the batch's), the batch's cycles and its bound."""

    one: MemoryRun
    batch: Batch
    cycles: int
    compute_cycles: int  # the same tile streams with every DRAM transfer instant
    bound: Bound

    @property
    def stall_cycles(self) -> int:
        return self.cycles - self.compute_cycles

    @property
    def stall_share(self) -> float:
        return self.stall_cycles / self.cycles

    @property
    def bound_ratio(self) -> float:
        return self.cycles / self.bound.cycles

    @property
    def seconds(self) -> Fraction:
        return self.cycles / self.one.machine.clock_hz

    @property
    def mac_utilization(self) -> float:
        machine = self.one.machine
        return self.batch.runs * self.one.shape.macs / (machine.array.pes * self.cycles)


def lane_design(machine: SystolicMachine, design: SystolicDesign, lanes: int) -> SystolicDesign:
    """The design on one lane's array: the same dataflow and assumptions, the whole lane."""
    return SystolicDesign(machine.lane_array(lanes), design.dataflow, None, design.assumptions)


def evaluate_batch(
    machine: SystolicMachine,
    design: SystolicDesign,
    schedule: BlockSchedule,
    shape: Shape,
    batch: Batch,
    engine: str = "fast",
) -> BatchRun:
    """Check the lanes' tiles fit (InfeasibleSchedule otherwise), then time and count the batch
    (`design`: a lane's)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    check_design(machine, design, batch.lanes)
    fit = feasibility(machine, schedule, shape, batch.lanes)
    if not fit.ok:
        raise InfeasibleSchedule(
            f"schedule {schedule.describe()} on {machine.name} in {batch.lanes} lanes: "
            f"{fit.describe()}"
        )
    if engine == "fast":
        fast = run_fast(machine, design, schedule, shape, batch)
        cycles, compute = fast.cycles, fast.compute_cycles
    else:
        timeline = run_reference(machine, design, schedule, shape, batch)
        cycles, compute = timeline.cycles, timeline.compute_cycles
    one = MemoryRun(
        machine,
        design,
        schedule.clipped(shape),
        shape,
        cycles,
        compute,
        block_counts(machine, design, schedule, shape),
        bound(machine, shape, design),
        engine,
    )
    return BatchRun(one, batch, cycles, compute, bound(machine, shape, design, batch))


def lane_counts(machine: SystolicMachine, runs: int) -> list[int]:
    """The lane counts a batch of `runs` can use: divisors of both the runs and the arrays."""
    common = math.gcd(runs, machine.arrays)
    return [lanes for lanes in range(1, common + 1) if common % lanes == 0]


def most_batch_candidates(machine: SystolicMachine, shape: Shape, runs: int = 1) -> int:
    """At most how many candidates `fastest_batch` (or, for one run, `fastest`) ranks."""
    return sum(most_candidates(machine, shape, lanes) for lanes in lane_counts(machine, runs))


def _ranked(
    machine: SystolicMachine, design: SystolicDesign, shape: Shape, runs: int
) -> Iterator[tuple[int, int, int, BlockSchedule]]:
    """Every lane count's candidates, each with its own bound (one of each run_key)."""
    for lanes in lane_counts(machine, runs):
        batch = Batch(runs, lanes)
        lane = lane_design(machine, design, lanes)
        floor = bound(machine, shape, lane, batch).cycles
        for n, s in enumerate(distinct(candidates(machine, shape, lanes), shape)):
            yield max(floor, own_bound(machine, lane, s, shape, batch)), lanes, n, s


def fastest_batch(
    machine: SystolicMachine, design: SystolicDesign, shape: Shape, runs: int, budget: int = 400
) -> tuple[BatchRun, int]:
    """The fastest batch found over the lane counts and the candidates (one of each run_key),
    in the order of their own bound until none left can beat the best, or `budget`
    evaluations; and how many were evaluated."""
    # At most `budget` are ever evaluated: only the first `budget` by their bound are kept.
    ranked = heapq.nsmallest(budget, _ranked(machine, design, shape, runs), key=lambda r: r[:3])
    best: BatchRun | None = None
    evaluated = 0
    for least, lanes, _n, schedule in ranked:
        if best is not None and (least >= best.cycles or evaluated >= budget):
            break
        run = evaluate_batch(
            machine, lane_design(machine, design, lanes), schedule, shape, Batch(runs, lanes)
        )
        evaluated += 1
        if best is None or run.cycles < best.cycles:
            best = run
    assert best is not None
    return best, evaluated
