"""No fused program, and no unfused sequence of programs, beats the group's bound; decode, bound
by the DMA, reaches it; feasibility is arithmetic that names the slots over."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from simcore.fusion.groups import EpilogueGemm, FusedMlp, decode
from simcore.ga1.fused import AttentionParams, GemmParams, fused_program, slots_needed
from simcore.ga1.fused.bounds import bound
from simcore.ga1.fused.params import FusedParamsError, params_from
from simcore.ga1.fused.search import best_schedule, feasible_points
from simcore.ga1.fused.unfused import unfused
from simcore.ga1.machine import Machine
from simcore.ga1.schedules import ScheduleError
from tests.helpers.fused_strategies import fused_cases

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=80, **SETTINGS)
@given(case=fused_cases())
def test_no_fused_program_beats_its_bound(case) -> None:
    group, params, machine = case
    timing = fused_program(group, machine, params).timing()
    b = bound(group, machine)
    assert timing.cycles >= b.cycles
    assert timing.tiles_moved >= b.tiles
    assert timing.products >= b.products


@pytest.mark.parametrize(
    "group",
    [EpilogueGemm(40, 24, 33, ("bias", "relu")), FusedMlp(20, 16, 40, 16), decode(2, 50, 16)],
    ids=lambda g: g.describe(),
)
def test_the_unfused_programs_do_not_beat_it_either(group) -> None:
    machine = Machine(slots=32)
    apart = unfused(group, machine)
    b = bound(group, machine)
    assert apart.cycles >= b.cycles and apart.tiles >= b.tiles
    assert len(apart.parts) >= 2


def test_decode_is_bound_by_the_dma_and_reaches_it() -> None:
    machine = Machine(slots=64)
    group = decode(4, 128, 32)
    best = best_schedule(group, machine)
    b = bound(group, machine)
    assert b.bound_by == "memory"
    assert (best.timing.cycles, best.timing.tiles_moved) == (b.cycles, b.tiles)


def test_a_schedule_over_the_scratchpad_is_refused_naming_the_slots() -> None:
    group = EpilogueGemm(64, 64, 64, ("gelu",))
    params = GemmParams(bm=8, bn=8, buffers=3, c_buffers=2)
    need = slots_needed(group, Machine(), params)
    assert need == 2 + 2 * 64 + 3 * 16
    with pytest.raises(
        ScheduleError, match=rf"needs {need} slots, the scratchpad has 16 \({need - 16} over"
    ):
        fused_program(group, Machine(), params)
    assert params not in feasible_points(group, Machine())


def test_parameters_are_checked_against_their_domains() -> None:
    group = decode(1, 16, 8)
    with pytest.raises(FusedParamsError, match="bk must be one of"):
        params_from(group, {"bk": 5})
    with pytest.raises(FusedParamsError, match="unknown parameter"):
        params_from(group, {"bm": 1})
    assert params_from(group, {"bq": 2}) == AttentionParams(bq=2)
