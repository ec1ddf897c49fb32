"""The reduced stand-in of a vector operation: the same edges, every kind of visit the full
program makes, small enough to run; verify() falls back to it past its limit and says so."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from simcore.ga1.machine import Machine
from simcore.ga1.vector import VectorOp, VectorParams, vector_program
from simcore.ga1.vector.emit import tree_rows
from simcore.ga1.vector.plan import Plan
from simcore.ga1.vector.reduced import MOST_VERIFIED, reduced_op
from tests.helpers.vector_strategies import vector_cases


def _visit_kinds(plan: Plan) -> set[tuple[object, ...]]:
    found = set()
    for h in range(plan.matrices):
        for k in range(plan.G):
            for p in range(len(plan.passes)):
                for i in range(plan.pass_visits(k, p)):
                    v = plan.visit(h, k, p, i)
                    found.add((v.p, v.b, v.first, v.last, v.masked, v.pad, v.diag, v.param_load))
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=vector_cases(most_rows=200, most_cols=300))
def test_the_stand_in_keeps_the_edges_and_every_kind_of_visit(case) -> None:
    op, params, machine = case
    small = reduced_op(op, params, machine.T)
    full_rows = op.rows if op.per_matrix else op.batch * op.rows
    small_rows = small.rows if small.per_matrix else small.batch * small.rows
    assert (small_rows % machine.T, small.cols % machine.T) == (
        full_rows % machine.T, op.cols % machine.T,
    )  # fmt: skip
    assert (small.kind, small.scale, small.causal, small.causal_offset, small.eps, small.gelu) == (
        op.kind, op.scale, op.causal, op.causal_offset, op.eps, op.gelu,
    )  # fmt: skip
    full, reduced = (vector_program(o, machine, params).plan for o in (op, small))
    assert _visit_kinds(full) == _visit_kinds(reduced)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=vector_cases(most_rows=200, most_cols=300))
def test_a_verification_on_the_stand_in_passes_and_is_labelled(case) -> None:
    op, params, machine = case
    verification = vector_program(op, machine, params).verify(seed=2, most=0)
    assert verification.ok and verification.label == "verified-reduced"
    assert verification.reduced == reduced_op(op, params, machine.T)


def test_an_attention_sized_softmax_is_verified_on_its_stand_in() -> None:
    machine = Machine()
    for op in (
        VectorOp("softmax", 2048, 2048, batch=32, scale=0.125, causal=True),
        VectorOp("layernorm", 4096, 4096),
    ):
        generator = vector_program(op, machine, VectorParams())
        assert tree_rows(generator.tree()) > MOST_VERIFIED
        verification = generator.verify()
        assert verification.label == "verified-reduced", verification.describe()
        assert verification.describe().startswith("verified-reduced on its stand-in")
    small = vector_program(VectorOp("relu", 40, 40), machine).verify()
    assert small.label == "verified" and small.reduced is None
