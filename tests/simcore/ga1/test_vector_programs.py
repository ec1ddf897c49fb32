"""Vector programs verified: on random operations, shapes, schedules and machines, the outputs
equal numpy's within the stated tolerance, the hazard replay is clean, and the compiled engine,
the tree timed periodically and the tree timed in full all equal the reference simulator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from simcore.ga1.engine.programs import time_program
from simcore.ga1.machine import Machine
from simcore.ga1.vector import VectorOp, VectorParams, all_params, slots_needed, vector_program
from simcore.ga1.vector.emit import expand, timing_fields
from simcore.ga1.vector.timing import FULL, PERIODIC
from tests.helpers.vector_strategies import vector_cases

FIT = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FIT
@given(case=vector_cases())
def test_random_vector_programs_are_verified(case) -> None:
    op, params, machine = case
    verification = vector_program(op, machine, params).verify(seed=len(op.describe()))
    assert verification.ok, f"{op.describe()} {params}: {verification.describe()}"


def _same_as_flat(op: VectorOp, params: VectorParams, machine: Machine) -> None:
    generator = vector_program(op, machine, params)
    program, tree = generator.program(), generator.tree()
    assert np.array_equal(
        timing_fields(np.concatenate(list(expand(tree)))), timing_fields(program.code)
    )
    want = time_program(machine, program)
    for method in (PERIODIC, FULL):
        got = generator.timing(method)
        assert (got.cycles, got.busy, got.loads, got.stores) == (
            want.cycles, want.busy, want.loads, want.stores,
        ), method  # fmt: skip


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=vector_cases(tiles=(2,), most_rows=70, most_cols=90))
def test_the_timing_tree_is_the_program_and_times_as_it_does(case) -> None:
    """Many tiles a row and many bands (T = 2), so every repeat of the tree is used."""
    _same_as_flat(*case)


@pytest.mark.parametrize("kind", ["softmax", "layernorm", "rmsnorm", "bias", "rowmax", "add"])
def test_every_schedule_of_a_long_row_times_as_its_program(kind: str) -> None:
    causal = kind == "softmax"
    op = VectorOp(kind, 37, 203, causal=causal, causal_offset=150 if causal else 0)
    for params in all_params(op):
        machine = Machine(slots=64)
        if slots_needed(op, machine, params) <= machine.slots:
            _same_as_flat(op, params, machine)
