"""Fused groups on GA-1 (the `Fusion` capability): each group one program
(simcore.ga1.fused), its schedule the best of every point of its kind's domain that fits the
scratchpad (search_spaces.fusion: slots counted before anything is built), each timed exactly
from its compact tree, the best by the objective (cycles, energy or DRAM words; the others break
ties, then the first point in domain order). The
best is verified (numpy, hazard replay, engines equal; on its reduced stand-in past 300,000
instructions) and held to the fused bound (simcore.ga1.fused.bounds). Results are cached per
group, machine and technology."""

from __future__ import annotations

import functools
from typing import Any

from autotune.oracles.fusion import FusedTime, FusionRefused, rank
from search_spaces.fusion import feasible_points, ga1_schedule
from simcore.fusion.groups import FusedGroup
from simcore.ga1.machine import Machine

KINDS: tuple[str, ...] = ("epilogue", "mlp", "attention")


@functools.lru_cache(maxsize=1024)
def time_fused(
    group: FusedGroup, machine: Machine, technology: Any = None, objective: str = "cycles"
) -> FusedTime:
    """The group's best schedule on `machine` by `objective` (module doc)."""
    from simcore.ga1.fused.bounds import bound
    from simcore.ga1.fused.params import describe_params, param_domains
    from simcore.ga1.fused.program import FusedProgram

    points, fewest = feasible_points(group, machine)
    total = 1
    for domain in param_domains(group):
        total *= len(domain.values)
    if not points:
        raise FusionRefused(
            f"no schedule of {group.describe()} fits: it needs at least {fewest} slots, "
            f"the scratchpad has {machine.slots}"
        )
    best = None
    for point in points:
        program = FusedProgram(group, machine, ga1_schedule(group, point))
        timing = program.timing()
        energy = program.cost(technology, timing).energy_pj if objective == "energy" else 0.0
        key = rank(objective, timing.cycles, energy, timing.tiles_moved)
        if best is None or key < best[0]:
            best = (key, program, timing)
    assert best is not None
    _key, program, timing = best
    cost = program.cost(technology, timing)
    check = program.verify(seed=1)
    floor = bound(group, machine)
    words = machine.T * machine.T
    return FusedTime(
        cycles=timing.cycles,
        energy_pj=cost.energy_pj,
        dram_words=timing.tiles_moved * words,
        schedule=describe_params(program.params),
        bound_cycles=floor.cycles,
        bound_words=floor.tiles * words,
        verified=check.ok,
        verification=check.describe() if check.ok else f"failed: {check.describe()}",
        points=total,
        feasible=len(points),
    )
