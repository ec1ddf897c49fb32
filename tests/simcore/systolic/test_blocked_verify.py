"""The verification of a block schedule: the program's data moves give numpy's product on random
cases, and a program with a move taken out or changed is refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked import BlockSchedule
from simcore.systolic.blocked.reference import build_program
from simcore.systolic.blocked.verify import ReplayError, replay, verify_blocked
from simcore.systolic.model import SystolicDesign
from tests.helpers.memory_strategies import designs_on, machines, schedules_for, shapes


@st.composite
def cases(draw: st.DrawFn) -> tuple:
    machine = draw(machines(max_side=3))
    shape = draw(shapes(9))
    return machine, draw(designs_on(machine)), draw(schedules_for(machine, shape)), shape


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(cases())
def test_every_schedule_verifies(case: tuple) -> None:
    verdict = verify_blocked(*case)
    assert verdict.ok, verdict.detail


def _program(order: str = "kmn", span: tuple[int, int, int] = (3, 3, 3)):  # type: ignore[no-untyped-def]
    machine = load_arch("gemmini")
    design = SystolicDesign(machine.array, "ws")
    shape = Shape(48, 64, 40)
    schedule = BlockSchedule(16, 16, 16, order, (2, 2, 2), span).clipped(shape)
    rng = np.random.default_rng(1)
    a = rng.integers(-9, 10, size=(shape.m, shape.k)).astype(np.float64)
    b = rng.integers(-9, 10, size=(shape.k, shape.n)).astype(np.float64)
    return build_program(machine, design, schedule, shape), schedule, a, b


def test_the_program_computes_the_product() -> None:
    ops, schedule, a, b = _program()
    assert np.array_equal(replay(ops, schedule, a, b), a @ b)


@pytest.mark.parametrize("kind", ["load-a", "load-b", "c-back"])
def test_a_missing_load_is_refused(kind: str) -> None:
    ops, schedule, a, b = _program()
    victim = next(n for n, op in enumerate(ops) if op.kind == kind and n > 10)
    with pytest.raises(ReplayError):
        replay(ops[:victim] + ops[victim + 1 :], schedule, a, b)


def test_outputs_drained_as_partial_sums_are_refused() -> None:
    ops, schedule, a, b = _program()
    last = max(n for n, op in enumerate(ops) if op.kind == "c-final")
    ops[last].kind = "c-partial"
    with pytest.raises(ReplayError, match="written exactly once"):
        replay(ops, schedule, a, b)


def test_a_resident_tile_is_reused_not_reloaded() -> None:
    ops, schedule, a, b = _program("nmk", (0, 3, 3))
    loads = [op for op in ops if op.kind == "load-a"]
    assert len(loads) == 3 * 4  # every A block once: A stays on chip
    assert np.array_equal(replay(ops, schedule, a, b), a @ b)
