"""Plans: a matmul program read back as residencies and timed products, and written again."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore import Machine, ProgramBuilder, Shape, blocked, kouter, simulate
from simcore.ga1.exact.plan import (
    PlanError,
    assign_slots,
    plan_of,
    program_of,
    relabel_by_first_use,
)
from simcore.ga1.generator import default_params, general, slots_needed
from simcore.ga1.verify import verify_matmul
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params


def _programs():
    shape, machine = Shape(24, 16, 32), Machine(slots=8)
    yield "kouter", shape, machine, kouter(shape, machine, 1)
    yield "kouter double-buffered", shape, machine, kouter(shape, machine, 2)
    yield "blocked 2x2", shape, Machine(slots=16), blocked(shape, Machine(slots=16), 2, 2, 2)


@pytest.mark.parametrize(
    "name,shape,machine,program", list(_programs()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_plan_keeps_the_schedule(name, shape, machine, program):
    plan = plan_of(program, machine, shape)
    cycles = simulate(machine, program).cycles
    assert plan.makespan == cycles
    assert len(plan.products) == 2 * 3 * 4
    rebuilt = program_of(plan, machine)
    verification, _ = verify_matmul(machine, rebuilt, shape)
    assert verification.ok, verification.describe()
    assert verification.cycles <= cycles  # the rule starts nothing later than the plan says


def test_kouter_reloads_partial_sums():
    shape, machine = Shape(16, 24, 16), Machine(slots=8)
    plan = plan_of(kouter(shape, machine, 1), machine, shape)
    reloaded = [r for r in plan.residencies if r.tile[0] == 2 and r.opened_by_load]
    assert len(reloaded) == 4 * 2  # every C tile reloaded for its k steps after the first


@settings(max_examples=examples(40), deadline=None)
@given(
    m=st.integers(1, 40),
    k=st.integers(1, 40),
    n=st.integers(1, 40),
    slots=st.integers(3, 20),
    params=general_params(block=4, tail=3, lookahead=12, ramp=3),
    setup=st.integers(0, 20),
    fill=st.integers(0, 10),
)
def test_generated_programs_round_trip(m, k, n, slots, params, setup, fill):
    shape, machine = Shape(m, k, n), Machine(slots=slots, dma_setup=setup, mxu_fill=fill)
    if slots_needed(shape, machine, params) > slots:
        return
    program = general(shape, machine, params)
    plan = relabel_by_first_use(plan_of(program, machine, shape))
    rebuilt = program_of(plan, machine)
    verification, _ = verify_matmul(machine, rebuilt, shape)
    assert verification.ok, verification.describe()
    assert verification.cycles <= simulate(machine, program).cycles


def test_overlapping_copies_are_merged():
    # A(0, 0) is loaded twice into two slots and both copies are read while both are resident:
    # the plan holds the first copy until the second one's read, and drops the second load.
    b = ProgramBuilder()
    b.zero(2)
    b.zero(5)
    b.load(0, "A", 0, 0)
    b.load(1, "B", 0, 0)
    b.load(3, "A", 0, 0)
    b.load(4, "B", 0, 1)
    b.mxu(2, 0, 1)
    b.mxu(5, 3, 4)
    b.store(2, "C", 0, 0)
    b.store(5, "C", 0, 1)
    shape, machine = Shape(8, 8, 16), Machine(slots=8)
    program = b.build()
    plan = plan_of(program, machine, shape)
    copies = [r for r in plan.residencies if r.tile == (0, 0, 0)]
    assert len(copies) == 1
    assert {t.a for t in plan.products} == {plan.residencies.index(copies[0])}
    verification, _ = verify_matmul(machine, program_of(plan, machine), shape)
    assert verification.ok and verification.cycles <= simulate(machine, program).cycles


def test_unread_loads_are_dropped():
    b = ProgramBuilder()
    b.zero(2)
    b.load(0, "A", 0, 0)
    b.load(1, "B", 0, 0)
    b.load(3, "A", 0, 0)
    b.mxu(2, 0, 1)
    b.store(2, "C", 0, 0)
    plan = plan_of(b.build(), Machine(slots=8), Shape(8, 8, 8))
    assert sum(r.tile == (0, 0, 0) for r in plan.residencies) == 1
    b = ProgramBuilder()
    b.zero(2)
    b.load(0, "A", 0, 0)
    b.load(1, "B", 0, 0)
    b.mxu(2, 0, 1)
    b.mxu(2, 0, 1)  # the product twice
    b.store(2, "C", 0, 0)
    with pytest.raises(PlanError, match="exactly once"):
        plan_of(b.build(), Machine(slots=8), Shape(8, 8, 8))


def test_outside_the_scope():
    b = ProgramBuilder()
    b.load(0, "A", 0, 0)
    b.load(1, "B", 0, 0)
    b.zero(2)
    b.mxu(2, 0, 1)
    b.add_tuple(("vop", "add", 2, 2, 2))
    b.store(2, "C", 0, 0)
    with pytest.raises(PlanError, match="loads, stores, zeros and products"):
        plan_of(b.build(), Machine(), Shape(8, 8, 8))
    b = ProgramBuilder()
    b.load(0, "B", 0, 0)
    b.load(1, "A", 0, 0)
    b.zero(2)
    b.mxu(2, 0, 1)  # operands swapped
    b.store(2, "C", 0, 0)
    with pytest.raises(PlanError, match="operands"):
        plan_of(b.build(), Machine(), Shape(8, 8, 8))


def test_slots_are_coloured_within_the_scratchpad():
    shape, machine = Shape(32, 32, 32), Machine(slots=6)
    plan = plan_of(general(shape, machine, default_params(shape, machine)), machine, shape)
    slots = assign_slots(plan.residencies, machine.slots)
    assert max(slots) < machine.slots
    with pytest.raises(PlanError, match="resident"):
        assign_slots(plan.residencies, 3)
