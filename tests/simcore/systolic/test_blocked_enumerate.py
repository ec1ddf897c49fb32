"""The enumerative search times one schedule of each run_key: schedules with the same key (loops
of one block placed anywhere, spans that reach the same moving loops) run alike on the reference
engine, on random machines, designs, shapes and schedules; and the search finds the short
decode GEMMs' best schedule on the bundled TPUv4i-like machine within a few evaluations."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked import BlockSchedule, evaluate, feasibility
from simcore.systolic.blocked.enumerate import candidates, distinct, fastest, run_key
from simcore.systolic.blocked.schedule import LOOP_ORDERS
from simcore.systolic.model import SystolicDesign
from tests.helpers.memory_strategies import designs_on, machines, schedules_for, shapes


def _alike(schedule: BlockSchedule, shape: Shape) -> list[BlockSchedule]:
    """Every schedule of the same blocks and buffering with the same run_key, but itself."""
    key = run_key(schedule, shape)
    out = []
    spans = [(a, b, c) for a in range(4) for b in range(4) for c in range(4)]
    for order, span in itertools.product(LOOP_ORDERS, spans):
        other = BlockSchedule(
            schedule.bm, schedule.bk, schedule.bn, order, schedule.buffering, span
        )
        if other != schedule and run_key(other, shape) == key:
            out.append(other)
    return out


@st.composite
def pairs(draw: st.DrawFn) -> tuple:
    machine = draw(machines())
    shape = draw(shapes())
    schedule = draw(schedules_for(machine, shape))
    alike = _alike(schedule, shape)
    other = draw(st.sampled_from(alike)) if alike else schedule
    return machine, draw(designs_on(machine)), schedule, other, shape


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(pairs())
def test_schedules_with_one_run_key_run_alike(case: tuple) -> None:
    _run_alike(case)


def _run_alike(case: tuple) -> None:
    machine, design, schedule, other, shape = case
    assert feasibility(machine, other, shape).ok == feasibility(machine, schedule, shape).ok
    first = evaluate(machine, design, schedule, shape, engine="reference")
    second = evaluate(machine, design, other, shape, engine="reference")
    assert (second.cycles, second.compute_cycles) == (first.cycles, first.compute_cycles)
    assert second.counts.dram == first.counts.dram
    assert second.counts.stores == first.counts.stores


def test_distinct_keeps_one_schedule_of_each_key() -> None:
    machine = load_arch("tpuv4i")
    shape = Shape(1, 128, 2048)
    every = list(candidates(machine, shape))
    kept = list(distinct(iter(every), shape))
    assert len({run_key(s, shape) for s in every}) == len(kept) < len(every)


def test_short_decode_gemms_find_their_best_schedule_in_few_evaluations() -> None:
    machine = load_arch("tpuv4i")
    design = SystolicDesign(machine.array, machine.dataflow)
    run, evaluated = fastest(machine, design, Shape(1, 128, 2048), budget=400)
    # every distinct candidate is ranked; the search stops once none left can beat the best
    assert evaluated < 400
    assert run.cycles == min(
        evaluate(machine, design, s, Shape(1, 128, 2048)).cycles
        for s in distinct(candidates(machine, Shape(1, 128, 2048)), Shape(1, 128, 2048))
    )


@pytest.mark.slow
@settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(pairs())
def test_schedules_with_one_run_key_run_alike_on_many_cases(case: tuple) -> None:
    _run_alike(case)
