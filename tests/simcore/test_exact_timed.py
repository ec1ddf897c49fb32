"""The exhaustive search over programs (simcore/ga1/exact/timed.py): it reaches the optima CP-SAT
proves, it never misses a generated schedule, its programs run verified in the cycles it timed,
and it proves, inside solve_optimum and decide_below, what CP-SAT leaves open."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore import Machine, Shape
from simcore.ga1.exact.timed import search_below
from simcore.ga1.generator import general, slots_needed
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.verify import verify_matmul
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params


@pytest.mark.slow  # CP-SAT proves each optimum
@pytest.mark.parametrize(
    ("shape", "machine", "optimum"),
    [  # proven by CP-SAT (docs/benchmarks/optimum.md, tests/simcore/test_exact_proof.py)
        (Shape(16, 16, 16), Machine(slots=8), 240),
        (Shape(16, 16, 16), Machine(slots=6), 260),
        (Shape(16, 16, 16), Machine(slots=5), 280),
        (Shape(16, 16, 8), Machine(slots=4), 176),
    ],
)
def test_the_search_reaches_the_optima_cp_sat_proves(shape, machine, optimum):
    found = search_below(shape, machine, optimum + 1)
    assert found.complete and found.cycles == optimum and found.program is not None
    verification, _ = verify_matmul(machine, found.program, shape)
    assert verification.ok and verification.cycles == optimum
    below = search_below(shape, machine, optimum)
    assert below.complete and below.cycles is None and below.program is None


def test_a_limit_leaves_the_search_incomplete():
    shape, machine = Shape(16, 16, 16), Machine(slots=6)
    stopped = search_below(shape, machine, 10_000, max_nodes=5)
    assert not stopped.complete and stopped.nodes == 6


@settings(max_examples=examples(15), deadline=None)
@given(
    m=st.integers(1, 16),
    k=st.integers(1, 16),
    n=st.integers(1, 16),  # at most 2 x 2 x 2 tiles
    slots=st.integers(3, 8),
    setup=st.integers(0, 16),
    fill=st.integers(0, 8),
    mxu=st.integers(1, 16),
    params=general_params(block=2, tail=2, lookahead=8, ramp=2),
)
def test_the_search_never_misses_a_generated_schedule(m, k, n, slots, setup, fill, mxu, params):
    shape = Shape(m, k, n)
    machine = Machine(slots=slots, dma_setup=setup, mxu_fill=fill, mxu_cycles=mxu)
    Mt, Kt, Nt = shape.tiles(machine.T)
    if slots_needed(shape, machine, params) > slots or (slots <= 4 and Mt * Kt * Nt == 8):
        return  # 2 x 2 x 2 tiles on 4 slots take seconds
    program = general(shape, machine, params)
    known, _ = verify_matmul(machine, program, shape)
    found = search_below(shape, machine, known.cycles + 1)
    assert found.complete and found.program is not None and found.cycles is not None
    assert lower_bound(shape, machine) <= found.cycles <= known.cycles
    verification, _ = verify_matmul(machine, found.program, shape)
    assert verification.ok and verification.cycles == found.cycles


# CP-SAT stops at once and asks no question: what is proven, the search proves.
QUICK = dict(time_limit=None, work_limit=0.01, workers=1)


def test_solve_optimum_proves_by_search_what_cp_sat_leaves_open():
    pytest.importorskip("ortools", reason="the exact solver needs OR-Tools")
    from simcore.ga1.exact import OPTIMAL, ExactOptions, solve_optimum

    shape, machine = Shape(16, 16, 8), Machine(slots=4)  # 176 cycles
    alone = solve_optimum(shape, machine, ExactOptions(**QUICK, search_nodes=0))
    searched = solve_optimum(shape, machine, ExactOptions(**QUICK))
    assert not alone.proven and alone.cycles > 176
    assert searched.status == OPTIMAL and searched.proven and searched.cycles == 176
    assert searched.objective == searched.bound == searched.verification.cycles == 176
    larger = solve_optimum(shape, machine, ExactOptions(**QUICK, search_products=3))
    assert not larger.proven  # 2 x 2 x 1 tiles: 4 products, beyond the search's limit


def test_decide_below_asks_the_search_first():
    pytest.importorskip("ortools", reason="the exact solver needs OR-Tools")
    from simcore.ga1.exact import ExactOptions, decide_below

    shape, machine = Shape(16, 16, 8), Machine(slots=4)
    faster, bound, proved = decide_below(shape, machine, 200, ExactOptions(**QUICK))
    assert faster is not None and proved and bound == 176
    verification, _ = verify_matmul(machine, faster, shape)
    assert verification.ok and verification.cycles == 176
    assert decide_below(shape, machine, 176, ExactOptions(**QUICK)) == (None, 176, True)


def test_the_search_and_the_questions_get_what_cp_sat_leaves_of_the_time_limit(monkeypatch):
    pytest.importorskip("ortools", reason="the exact solver needs OR-Tools")
    from simcore.ga1.exact import ExactOptions, solve
    from simcore.ga1.exact.timed import search_below as real_search

    given_limits: list[float | None] = []

    def recorded(shape, machine, below, max_nodes, time_limit=None, stop=None):
        given_limits.append(time_limit)
        return real_search(shape, machine, below, max_nodes, time_limit, stop)

    monkeypatch.setattr(solve, "search_below", recorded)
    shape, machine = Shape(16, 16, 8), Machine(slots=4)
    options = ExactOptions(time_limit=30.0, work_limit=0.01, workers=1)
    result = solve.solve_optimum(shape, machine, options)
    assert result.proven and len(given_limits) == 1
    assert given_limits[0] is not None and 0 < given_limits[0] < 30.0
    # a limit already spent runs neither the search nor a question
    spent = solve._deadline(options, started=-1e9)
    assert solve._search(shape, machine, options, 200, spent) is None
    assert solve._prove(shape, machine, options, 200, 0, 0, spent) == (None, 0, False)
    assert solve._search(shape, machine, options, 200, None) is not None


@pytest.mark.slow  # CP-SAT on every example
@settings(max_examples=examples(10), deadline=None)
@given(
    m=st.integers(1, 16),
    k=st.integers(1, 16),
    n=st.integers(1, 8),  # at most 2 x 2 x 1 tiles: CP-SAT proves these within its limit
    slots=st.integers(3, 6),
    setup=st.integers(0, 16),
    fill=st.integers(0, 8),
    mxu=st.integers(1, 16),
)
def test_the_search_and_cp_sat_agree_where_cp_sat_proves(m, k, n, slots, setup, fill, mxu):
    pytest.importorskip("ortools", reason="the exact solver needs OR-Tools")
    from simcore.ga1.exact import ExactOptions, solve_optimum

    shape = Shape(m, k, n)
    machine = Machine(slots=slots, dma_setup=setup, mxu_fill=fill, mxu_cycles=mxu)
    options = ExactOptions(time_limit=None, work_limit=5.0, proof_limit=5.0, search_nodes=0)
    solved = solve_optimum(shape, machine, options)
    if not solved.proven:
        return
    found = search_below(shape, machine, solved.cycles + 1)
    assert found.complete and found.cycles == solved.cycles
