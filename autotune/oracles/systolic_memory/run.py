"""A block schedule on a systolic machine with its memory, for the systolic oracle: its figures
(simcore.systolic.blocked.evaluate, the fast engine), its energy and area
(simcore.energy.memory), its verification (verify_blocked, on the shape itself or on a smaller
one) and the bounds that every schedule of the machine is held to.

A point over the buffers is refused by arithmetic before any timing (`Infeasible` by the
`buffer` limit, the words over the capacities)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from autotune.errors import Infeasible
from search_spaces.base import EXACT, SCALED, Verdict
from search_spaces.domains import Point
from search_spaces.systolic_blocked import design, schedule
from simcore.shape import Shape
from simcore.systolic.blocked.bounds import bound
from simcore.systolic.blocked.evaluate import MemoryRun, evaluate
from simcore.systolic.blocked.schedule import BlockSchedule, feasibility
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign

if TYPE_CHECKING:
    from simcore.energy import Cost, Technology

# What verify_blocked costs, in seconds, measured on a shared laptop-class core: per tile of
# every block (the reference engine and the audit) and per multiply-accumulate (numpy's product
# and the replay's). A shape past VERIFY_SECONDS is verified on a smaller one with the same blocks.
COST_PER_TILE, COST_PER_MAC = 2e-4, 3e-10
VERIFY_SECONDS = 1.0
# Blocks kept along a dimension of the smaller shape: the first, an inner one and the edge.
VERIFY_BLOCKS = (3, 2, 1)


# The DRAM traffic per operand, as trials record it (in link words).
DRAM_PARTS = ("a_reads", "b_reads", "c_reads", "c_writes")


def run(machine: SystolicMachine, point: Point, shape: Shape) -> MemoryRun:
    """The point's run (Infeasible by `buffer`, the words over, when its tiles do not fit)."""
    blocks = schedule(point)
    fit = feasibility(machine, blocks, shape)
    if not fit.ok:
        over = float(sum(words for _store, words, _capacity in fit.over))
        raise Infeasible(fit.describe(), limit="buffer", over_by=over, unit="words")
    return evaluate(machine, design(machine, point), blocks, shape, "fast")


def metrics(memory: MemoryRun, cost: Cost) -> dict[str, object]:
    """What a trial records: the run's figures in the oracle's measures' names."""
    machine, dram = memory.machine, memory.counts.dram
    per_byte = 8 / machine.word_bits
    by_bytes = dram.bytes(machine)
    found: dict[str, object] = {
        "cycles": memory.cycles,
        "stall_cycles": memory.stall_cycles,
        "compute_cycles": memory.compute_cycles,
        "stall_share": memory.stall_share,
        "dram_words": float(dram.link_words(machine)),
        **{part: float(by_bytes[part] * per_byte) for part in DRAM_PARTS},
        "dram_requests": dram.requests,
        "mac_utilization": memory.mac_utilization,
        "words_per_mac": memory.counts.array.words_per_mac,
        "buffer_words": memory.counts.array.total,
        "lower_bound": memory.bound.cycles,
        "macs": memory.shape.macs,
        "blocks": memory.counts.blocks,
        "pes": machine.array.pes,
        "buffer_area_mm2": buffer_area_mm2(cost),
    }
    found.update({k: float(v) for k, v in cost.metrics().items()})
    return found


def buffer_area_mm2(cost: Cost) -> float:
    """The area of every on-chip store (the SRAM lines of the cost's area)."""
    return sum(item.total for item in cost.area if "SRAM" in item.name) / 1e6


def cost_of(memory: MemoryRun, technology: Technology) -> Cost:
    from simcore.energy.memory import memory_cost

    return memory_cost(memory, technology)


def area_mm2(machine: SystolicMachine, technology: Technology) -> float:
    """The machine's area: its PEs, their shadow registers, every store and the link's lanes."""
    from simcore.energy.memory import memory_area

    shadow = design(machine, {}).assumptions.shadow
    return sum(item.total for item in memory_area(machine, shadow, technology)) / 1e6


def machine_bound(machine: SystolicMachine, shape: Shape) -> int:
    """No schedule of the family beats this: every one runs the machine's dataflow on the whole
    array (simcore.systolic.blocked.bounds)."""
    return bound(machine, shape, design(machine, {})).cycles


def slowest_rate(machine: SystolicMachine) -> Fraction:
    """The slowest of the link and every store port, in words a cycle."""
    memory = machine.memory
    ports = [s.buffer for s in memory.stores] + [memory.accumulator] * (
        memory.accumulator is not None
    )
    widths = [w for p in ports if p is not None for w in (p.read_width, p.write_width)]
    return min([memory.dram.words_per_cycle, *widths])


def most_cycles(machine: SystolicMachine, shape: Shape) -> int:
    """A generous bound on the cycles of any block schedule, for the 64-bit check: at most one
    block per multiply-accumulate, each filling and draining the array (2 (R + C) + 4 cycles),
    at most four link requests per block (set-up, latency and a cycle each), and at most eight
    accumulator words per multiply-accumulate through the link or a store port at the slowest
    rate. Twice that, for headroom."""
    link, array = machine.memory.dram, machine.array
    words = math.ceil(8 * machine.accumulator_words / slowest_rate(machine))
    per_mac = 4 * (link.setup + link.latency + 1) + words + 2 * (array.rows + array.cols) + 4
    return 2 * shape.macs * per_mac


def largest_counts(machine: SystolicMachine, shape: Shape) -> list[tuple[int, str]]:
    """Bounds on what a run records: MACs, cycles and DRAM words (four per MAC at most, each at
    most an accumulator word)."""
    words = (
        4 * shape.macs * math.ceil(machine.accumulator_words) + 3 * (shape.m + shape.n) * shape.k
    )
    return [
        (shape.macs, "its multiply-accumulates"),
        (most_cycles(machine, shape), f"the cycles of a block schedule on {machine.name}"),
        (words, "its DRAM words"),
    ]


@dataclass(frozen=True)
class VerifyPlan:
    shape: Shape
    exact: bool


def _kept(dim: int, block: int, blocks: int) -> int:
    """At most `blocks` blocks of a dimension, the edge block among them when there is one."""
    count = -(-dim // block)
    if count <= blocks:
        return dim
    return (blocks - 1) * block + (dim - (count - 1) * block)


def verify_seconds(d: SystolicDesign, s: BlockSchedule, shape: Shape) -> float:
    """About how long verify_blocked takes on `shape`."""
    from simcore.systolic.model import tile_count

    s = s.clipped(shape)
    gm, gk, gn = s.grid(shape)
    tiles = gm * gk * gn * tile_count(d, Shape(s.bm, s.bk, s.bn))
    return tiles * COST_PER_TILE + 2 * shape.macs * COST_PER_MAC


def verify_plan(d: SystolicDesign, s: BlockSchedule, shape: Shape) -> VerifyPlan:
    """The shape itself when its check is quick, else the same blocks on fewer of them: three
    per dimension (the first, an inner one and the edge: every kind of step and step-to-step),
    or fewer while the check would be past VERIFY_SECONDS."""
    if verify_seconds(d, s, shape) <= VERIFY_SECONDS:
        return VerifyPlan(shape, True)
    c = s.clipped(shape)
    for blocks in VERIFY_BLOCKS:
        small = Shape(
            *(_kept(x, b, blocks) for x, b in zip((shape.m, shape.k, shape.n), (c.bm, c.bk, c.bn)))
        )
        if verify_seconds(d, s, small) <= VERIFY_SECONDS:
            break
    return VerifyPlan(small, small == shape)


def verify(machine: SystolicMachine, point: Point, shape: Shape, seed: int = 0) -> Verdict:
    """verify_blocked on the point (see simcore.systolic.blocked.verify): `exact` on the shape
    itself, `scaled` on a smaller one with the same machine and schedule."""
    from simcore.systolic.blocked.verify import verify_blocked

    s, d = schedule(point), design(machine, point)
    plan = verify_plan(d, s, shape)
    found = verify_blocked(machine, d, s, plan.shape, seed)
    where = (
        "full shape" if plan.exact else f"scaled-down shape {plan.shape} (same machine and blocks)"
    )
    return Verdict(
        found.ok, EXACT if plan.exact else SCALED, f"{s.describe()}, {where}: {found.detail}"
    )


def report(memory: MemoryRun, cost: Cost, design_: SystolicDesign) -> str:
    """A text picture of the run, for `show`."""
    m, dram = memory.machine, memory.counts.dram
    stores = ", ".join(
        f"{item.name.removesuffix(' SRAM KiB')} {item.amount:g} KiB ({item.total / 1e6:.3g} mm2)"
        for item in cost.area
        if "SRAM" in item.name
    )
    return (
        f"{m.name}: {m.array} {m.dataflow} array at {float(m.clock_hz) / 1e6:g} MHz, tiles "
        f"{design_.used.order}; {stores}; {m.memory.dram_kind} link "
        f"{float(m.memory.dram.words_per_cycle):.4g} words/cycle\n"
        f"schedule {memory.schedule.describe()}: {memory.counts.blocks} blocks\n"
        f"{memory.shape}: {memory.cycles} cycles ({memory.compute_cycles} computing, "
        f"{memory.stall_cycles} stalled, {memory.stall_share:.1%}), bound {memory.bound.cycles} "
        f"({memory.bound.bound_by}), {memory.cycles / memory.bound.cycles:.3f}x\n"
        f"DRAM elements: A {dram.a_reads}, B {dram.b_reads}, partial sums read {dram.c_reads}, "
        f"written {dram.c_partial_writes}, outputs {dram.c_final_writes}; "
        f"{dram.requests} requests"
    )
