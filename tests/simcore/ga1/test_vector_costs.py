"""The energy of vector programs: instructions counted from the timing tree equal the flat
program's, and a hand-counted tile of each arithmetic kind costs what the table says."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from simcore.energy import ga1_cost, ga1_counts_of_program, instruction_kinds, load_technology
from simcore.ga1.engine.programs import time_program
from simcore.ga1.machine import Machine
from simcore.ga1.vector import VectorOp, VectorParams, vector_program
from simcore.ga1.vector.costs import tree_kinds
from tests.helpers.vector_strategies import vector_cases

TECH = load_technology()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=vector_cases(tiles=(2, 8), most_rows=60, most_cols=60))
def test_the_tree_counts_the_programs_instructions(case) -> None:
    op, params, machine = case
    generator = vector_program(op, machine, params)
    program = generator.program()
    assert tree_kinds(generator.tree()) == instruction_kinds(program.code)
    from_program = ga1_cost(
        machine, ga1_counts_of_program(time_program(machine, program), program), TECH
    )
    assert generator.cost(TECH).energy_pj == pytest.approx(from_program.energy_pj, rel=1e-12)


def _compute(kind: str, **options: object) -> dict[str, float]:
    op = VectorOp(kind, 8, 8, **options)  # type: ignore[arg-type]
    cost = vector_program(op, Machine(), VectorParams(buffers=1)).cost(TECH)
    return {item.name.split(" (")[0]: item.amount for item in cost.category("compute").items}


def test_a_tile_of_each_kind_costs_its_lane_operations() -> None:
    words = 64
    assert _compute("relu")["vector adds"] == words
    assert _compute("scale", scale=2.0)["vector multiplies"] == words
    silu = _compute("silu")  # ones = zero + exp; then neg, exp, add, div
    assert (silu["special functions: exp, sfu"], silu["vector adds"]) == (2 * words, 2 * words)
    assert silu["vector divides"] == words
    softmax = _compute("softmax")  # resident or not, one tile: max, sub, exp, sum, div
    assert softmax["vector reduction steps"] == 2 * 8 * 7
    rms = _compute("rmsnorm")  # ones (an exp), eps; square, sum, scale, + eps, rsqrt; two muls
    assert rms["special functions: exp, sfu"] == 2 * words
    assert (rms["vector multiplies"], rms["vector adds"]) == (5 * words, words)
    assert _compute("copy") == {"MACs": 0}  # loads and stores only: no vector work
