"""Candidate schedules of a fused group on a systolic machine, and the best of them by exact
evaluation (an enumeration for benchmarks and tests; a search tool samples the parameters of
schedule.py instead).

Block sides are the array's side times powers of two, and the whole dimension. Every candidate
is checked for fit by arithmetic before it is timed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

from simcore.energy.fused import fused_cost
from simcore.energy.technology import Technology
from simcore.fusion.groups import EpilogueGemm, FusedMlp
from simcore.systolic.blocked.schedule import LOOP_ORDERS
from simcore.systolic.fused.evaluate import (
    FusedRun,
    Group,
    evaluate_fused,
    evaluate_unfused,
    fused_build,
)
from simcore.systolic.fused.schedule import GemmSchedule, MlpSchedule
from simcore.systolic.fused.slots import Costs
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign
from simcore.systolic.vector_unit import VectorUnit, default_vector_unit

Objective = Callable[[FusedRun], tuple[float, ...]]


def by_cycles(run: FusedRun) -> tuple[float, ...]:
    return (run.cycles, float(run.dram_words))


def by_energy(tech: Technology) -> Objective:
    def key(run: FusedRun) -> tuple[float, ...]:
        return (fused_cost(run, tech).energy_pj, run.cycles)

    return key


def sides(dim: int, base: int) -> list[int]:
    """base, 2 base, 4 base, ... below dim, and dim."""
    found, side = [], max(1, base)
    while side < dim:
        found.append(side)
        side *= 2
    return found + [dim]


def gemm_candidates(machine: SystolicMachine, m: int, k: int, n: int) -> list[GemmSchedule]:
    r, c = machine.array.rows, machine.array.cols
    return [
        GemmSchedule(bm, bk, bn, order, buffering)
        for bm, bk, bn in itertools.product(sides(m, r), sides(k, r), sides(n, c))
        for order in LOOP_ORDERS
        for buffering in ((2, 2, 2), (1, 1, 1))
    ]


def mlp_candidates(machine: SystolicMachine, group: FusedMlp) -> list[MlpSchedule]:
    r, c = machine.array.rows, machine.array.cols
    g = group
    return [
        MlpSchedule(bm, bk, bh, bn, xr, yr, buffering, hb)
        for bm, bk, bh, bn in itertools.product(
            sides(g.m, r), sides(g.d, r), sides(g.hidden, c), sides(g.d_out, c)
        )
        for xr, yr in itertools.product((False, True), (False, True))
        for buffering, hb in itertools.product((1, 2), (1, 2))
    ]


@dataclass(frozen=True)
class Best:
    run: FusedRun
    schedules: tuple[GemmSchedule | MlpSchedule, ...]
    tried: int  # candidates that fit and were timed


def _fits(costs: Costs, group: Group, schedule: GemmSchedule | MlpSchedule) -> bool:
    return not fused_build(costs, group, schedule).slots.over()


def best_fused(
    machine: SystolicMachine,
    design: SystolicDesign,
    group: Group,
    objective: Objective = by_cycles,
    vector: VectorUnit | None = None,
) -> Best:
    """The best candidate of the group as one event schedule (ValueError when none fits)."""
    vector = vector or default_vector_unit(machine.array.cols)
    costs = Costs(machine, design, vector)
    if isinstance(group, FusedMlp):
        candidates: list[GemmSchedule | MlpSchedule] = list(mlp_candidates(machine, group))
    else:
        candidates = list(gemm_candidates(machine, group.m, group.k, group.n))
    best: tuple[tuple[float, ...], FusedRun, GemmSchedule | MlpSchedule] | None = None
    tried = 0
    for schedule in candidates:
        if not _fits(costs, group, schedule):
            continue
        run = evaluate_fused(machine, design, group, schedule, vector)
        tried += 1
        key = objective(run)
        if best is None or key < best[0]:
            best = (key, run, schedule)
    if best is None:
        raise ValueError(f"no candidate schedule of {group.describe()} fits {machine.name}")
    return Best(best[1], (best[2],), tried)


def best_unfused(
    machine: SystolicMachine,
    design: SystolicDesign,
    group: Group,
    objective: Objective = by_cycles,
    vector: VectorUnit | None = None,
    epilogues: bool = False,
) -> Best:
    """The group unfused, each product at its own best candidate (by the same objective)."""
    vector = vector or default_vector_unit(machine.array.cols)
    products: list[EpilogueGemm] = []
    if isinstance(group, EpilogueGemm):
        products.append(
            EpilogueGemm(group.m, group.k, group.n, group.epilogue if epilogues else ())
        )
    else:
        g = group
        act: tuple[str, ...] = ("bias", g.activation) if g.bias else (g.activation,)
        down: tuple[str, ...] = ("bias",) if g.bias else ()
        products.append(EpilogueGemm(g.m, g.d, g.hidden, act if epilogues else ()))
        products.append(EpilogueGemm(g.m, g.hidden, g.d_out, down if epilogues else ()))
    chosen, tried = [], 0
    for product in products:
        found = best_fused(machine, design, product, objective, vector)
        chosen.append(found.schedules[0])
        tried += found.tried
    schedules = tuple(s for s in chosen if isinstance(s, GemmSchedule))
    run = evaluate_unfused(machine, design, group, schedules, vector, epilogues=epilogues)
    return Best(run, tuple(chosen), tried)
