"""Fused groups on the systolic array with its memory system and vector unit (the `Fusion`
capability of the systolic oracle on an architecture): each group one event schedule of the
systolic fused engine (simcore.systolic.fused), its schedule the best of every point of its
kind's domain (search_spaces.fusion_systolic) whose blocks fit the buffers (checked by
arithmetic before anything is timed), each timed exactly by the fast engine, the best by the
objective (cycles, energy or DRAM words; the others break ties, then the first point in domain
order). `batch` products run one after another, each at the same schedule.

Kinds: epilogue and mlp. An attention group, and an epilogue with a gate multiply, are refused
(FusionRefused, the reason in the report): the engine schedules neither, so they stay apart.

The best is verified by `simcore.systolic.fused.verify.verify_fused` (outputs replayed with
numpy, hazard replay and timeline audit clean, fast engine equal to the reference, the array's
cycle model on every block shape): `exact` on the group itself up to VERIFY_MACS multiply-adds,
else `scaled` on a stand-in of at most two blocks (and STAND_IN_SIDE) a dimension with the same
machine, order, buffering and residency. Results are cached per group, machine and technology.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

from autotune.oracles.fusion import FusedTime, FusionRefused, rank
from search_spaces.fusion_systolic import (
    SystolicGroup,
    point_count,
    systolic_points,
    systolic_schedule,
    violation,
)
from simcore.fusion.groups import EpilogueGemm, FusedAttention, FusedGroup, FusedMlp
from simcore.systolic.fused.bounds import FusedBound
from simcore.systolic.fused.evaluate import FusedRun, evaluate_fused
from simcore.systolic.fused.schedule import GemmSchedule, MlpSchedule
from simcore.systolic.fused.slots import Costs
from simcore.systolic.machine import SystolicMachine

KINDS: tuple[str, ...] = ("epilogue", "mlp", "attention")  # attention: listed, then refused
VERIFY_MACS = 1 << 24
STAND_IN_SIDE = 256


def refusal(group: FusedGroup) -> str:
    """Why the systolic fused engine cannot time `group` ('' when it can)."""
    if isinstance(group, FusedAttention):
        return (
            "the systolic fused engine has no attention schedule (softmax over key blocks "
            "with a running maximum and sum); the group stays apart"
        )
    if isinstance(group, EpilogueGemm) and "gate" in group.epilogue:
        return "the systolic fused engine has no gate step (a multiply by another product's output); the group stays apart"
    return ""


@functools.lru_cache(maxsize=1024)
def time_fused(
    group: FusedGroup, system: SystolicMachine, technology: Any, objective: str = "cycles"
) -> FusedTime:
    """The group's best schedule on `system` by `objective` (module doc)."""
    from search_spaces.systolic_blocked import design as design_of
    from simcore.energy.fused import fused_cost

    reason = refusal(group)
    if reason:
        raise FusionRefused(reason)
    assert isinstance(group, (EpilogueGemm, FusedMlp))
    runs = group.batch if isinstance(group, EpilogueGemm) else 1
    one: SystolicGroup = dataclasses.replace(group, batch=1) if runs > 1 else group  # type: ignore[arg-type]
    design, vector = design_of(system, {}), system.vector_unit
    costs = Costs(system, design, vector)
    best: tuple[tuple[float, ...], FusedRun, GemmSchedule | MlpSchedule] | None = None
    feasible, least_over = 0, None
    for point in systolic_points(one, system):
        over = violation(costs, one, point)
        if over:
            least_over = over if least_over is None else min(least_over, over)
            continue
        feasible += 1
        schedule = systolic_schedule(one, point)
        run = evaluate_fused(system, design, one, schedule, vector)
        energy = fused_cost(run, technology).energy_pj if objective == "energy" else 0.0
        key = rank(objective, run.cycles, energy, float(run.dram_words))
        if best is None or key < best[0]:
            best = (key, run, schedule)
    if best is None:
        raise FusionRefused(
            f"no schedule of {one.describe()} fits the buffers: the smallest blocks need "
            f"{float(least_over or 0):.6g} words more than they hold"
        )
    _key, run, schedule = best
    ok, detail = verify(system, design, one, schedule, vector)
    many = f", {runs} products one after another" if runs > 1 else ""
    return FusedTime(
        cycles=runs * run.cycles,
        energy_pj=runs * fused_cost(run, technology).energy_pj,
        dram_words=runs * math.ceil(run.dram_words),
        schedule=schedule.describe() + many,
        bound_cycles=batch_bound(run.bound, system, runs),
        bound_words=math.ceil(runs * run.bound.link_words),
        verified=ok,
        verification=detail if ok else f"failed: {detail}",
        points=point_count(one, system),
        feasible=feasible,
    )


def batch_bound(bound: FusedBound, system: SystolicMachine, runs: int) -> int:
    """No schedule of `runs` such products beats this: their work, vector passes and traffic
    add up, the link's latency is paid at least once."""
    link = system.memory.dram
    words = runs * bound.link_words
    link_cycles = math.ceil(words / link.words_per_cycle) + link.latency
    return max(runs * bound.compute_cycles, runs * bound.vector_cycles, link_cycles)


def stand_in(group: SystolicGroup, schedule: GemmSchedule | MlpSchedule) -> SystolicGroup:
    """The group cut to at most two blocks and STAND_IN_SIDE elements a dimension."""

    def cut(dim: int, block: int) -> int:
        return min(dim, 2 * block, STAND_IN_SIDE)

    if isinstance(group, FusedMlp):
        assert isinstance(schedule, MlpSchedule)
        s = schedule
        return dataclasses.replace(
            group,
            m=cut(group.m, s.bm),
            d=cut(group.d, s.bk),
            hidden=cut(group.hidden, s.bh),
            d_out=cut(group.d_out, s.bn),
        )
    assert isinstance(schedule, GemmSchedule)
    g, t = group, schedule
    return dataclasses.replace(g, m=cut(g.m, t.bm), k=cut(g.k, t.bk), n=cut(g.n, t.bn))


def verify(
    system: SystolicMachine,
    design: Any,
    group: SystolicGroup,
    schedule: GemmSchedule | MlpSchedule,
    vector: Any,
) -> tuple[bool, str]:
    """`exact` on the group itself when small enough, else `scaled` on its stand-in."""
    from simcore.systolic.fused.verify import verify_fused

    if group.macs <= VERIFY_MACS:
        verdict = verify_fused(system, design, group, schedule, vector, seed=1)
        return verdict.ok, f"exact: {verdict.detail}"
    small = stand_in(group, schedule)
    verdict = verify_fused(system, design, small, schedule, vector, seed=1)
    return verdict.ok, f"scaled: on {small.describe()} (blocks clipped to it): {verdict.detail}"
