"""The exact solver's decision proofs ("a schedule of at most best - 1 cycles?"): they prove
optima the optimisation alone leaves open, and the bound they prove is never above a verified
schedule's cycles. Each solve runs a fraction of a second to a few seconds."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "ortools", reason="the exact solver needs OR-Tools (pip install 'autotune[exact]')"
)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from simcore import Machine, Shape, blocked, kouter, simulate  # noqa: E402
from simcore.ga1.exact import (  # noqa: E402
    OPTIMAL,
    ExactError,
    ExactOptions,
    decide_below,
    proven_bounds,
    solve_optimum,
)
from simcore.ga1.generator import general, slots_needed  # noqa: E402
from simcore.ga1.lower_bounds import lower_bound  # noqa: E402
from simcore.ga1.verify import verify_matmul  # noqa: E402
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params  # noqa: E402

# The optimisation stops at once; the proof has the work (CP-SAT's: the exhaustive search is off).
PROVE = ExactOptions(time_limit=None, work_limit=0.01, workers=1, proof_limit=1.0, search_nodes=0)


def test_a_decision_proves_what_the_optimisation_leaves_open():
    shape, machine = Shape(16, 16, 8), Machine(slots=4)  # 176 cycles; lower_bound 160
    alone = solve_optimum(
        shape, machine, ExactOptions(time_limit=None, work_limit=0.01, search_nodes=0)
    )
    proved = solve_optimum(shape, machine, PROVE)
    assert alone.status != OPTIMAL and alone.bound < alone.cycles
    assert proved.status == OPTIMAL and proved.proven and proved.bound == proved.cycles
    assert proved.cycles == simulate(machine, proved.program).cycles <= alone.cycles
    assert proved.verification.ok and lower_bound(shape, machine) <= proved.bound


@pytest.mark.slow  # CP-SAT proves on every example
@settings(max_examples=examples(10), deadline=None)
@given(
    m=st.integers(1, 16),
    k=st.integers(1, 16),
    n=st.integers(1, 24),  # at most 2 x 2 x 3 tiles
    slots=st.integers(3, 8),
    setup=st.integers(0, 16),
    fill=st.integers(0, 8),
    mxu=st.integers(1, 16),
    params=general_params(block=3, tail=2, lookahead=8, ramp=2),
)
def test_the_proven_bound_is_never_above_a_verified_schedule(
    m, k, n, slots, setup, fill, mxu, params
):
    shape = Shape(m, k, n)
    machine = Machine(slots=slots, dma_setup=setup, mxu_fill=fill, mxu_cycles=mxu)
    if slots_needed(shape, machine, params) > slots:
        return
    program = general(shape, machine, params)
    verification, _ = verify_matmul(machine, program, shape)
    assert verification.ok
    result = solve_optimum(shape, machine, PROVE, start=program)
    assert result.verification.ok
    assert result.bound <= result.cycles <= verification.cycles
    others = [kouter(shape, machine, 1)] + ([blocked(shape, machine, 1, 1)] if slots >= 6 else [])
    for other in others:
        assert result.bound <= simulate(machine, other).cycles
    if result.status == OPTIMAL:
        assert result.cycles == result.objective == result.bound


def test_a_proof_from_an_optimal_start_keeps_the_start():
    shape, machine = Shape(16, 16, 16), Machine(slots=8)
    first = solve_optimum(shape, machine, PROVE)
    again = solve_optimum(shape, machine, PROVE, start=first.program)
    assert first.proven and again.proven and again.cycles == first.cycles == 12 * 20


def test_the_decisions_alone_reach_the_optimum_from_a_slower_schedule():
    shape, machine = Shape(16, 16, 8), Machine(slots=4)  # 176 cycles, proven above
    faster, bound, proved = decide_below(shape, machine, 200, PROVE)
    assert faster is not None
    verification, _ = verify_matmul(machine, faster, shape)
    assert verification.ok and bound <= verification.cycles < 200
    assert proved and verification.cycles == bound == 176


@pytest.mark.slow  # CP-SAT
def test_a_schedule_at_the_proven_bound_needs_no_question():
    shape, machine = Shape(16, 16, 16), Machine(slots=5)
    cycles, transfers = proven_bounds(shape, machine)
    assert (cycles, transfers) == (260, 13) and cycles >= lower_bound(shape, machine)
    assert decide_below(shape, machine, cycles, PROVE) == (None, cycles, True)
    with pytest.raises(ExactError, match="259 cycles: 260 is proven"):
        decide_below(shape, machine, cycles - 1, PROVE)


def test_the_pebbling_bound_lifts_the_cycles_bound_on_a_tight_scratchpad():
    shape, machine = Shape(16, 16, 16), Machine(slots=4)
    assert proven_bounds(shape, machine) == (280, 14)
    assert proven_bounds(shape, machine, pebble_products=0) == (lower_bound(shape, machine), 13)
