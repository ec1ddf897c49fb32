"""The exact solver (OR-Tools CP-SAT): proven optima, verified schedules, the model against the
ordinary simulator, determinism. Each solve runs a fraction of a second to a few seconds."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "ortools", reason="the exact solver needs OR-Tools (pip install 'autotune[exact]')"
)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from simcore import Machine, ProgramBuilder, Shape, blocked, kouter, simulate  # noqa: E402
from simcore.ga1.exact import (  # noqa: E402
    MAX_PRODUCTS,
    OPTIMAL,
    START,
    ExactError,
    ExactOptions,
    check_instance,
    plan_of,
    proven_bounds,
    solve_optimum,
)
from simcore.ga1.exact.model import makespan_of_plan  # noqa: E402
from simcore.ga1.generator import general, slots_needed, strip_slots_needed, strips  # noqa: E402
from simcore.ga1.lower_bounds import compute_pipeline_bound, lower_bound  # noqa: E402
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params, strip_params  # noqa: E402

# CP-SAT alone: the exhaustive search has its own tests (test_exact_timed.py).
QUICK = ExactOptions(time_limit=None, work_limit=0.3, workers=1, search_nodes=0)


def test_one_product_is_proven():
    shape, machine = Shape(8, 8, 8), Machine()
    result = solve_optimum(shape, machine, QUICK)
    # two loads, the product, the fill, the store: 20 + 20 + 8 + 8 + 20
    assert result.status == OPTIMAL and result.proven
    assert (
        result.cycles
        == result.objective
        == result.bound
        == 76
        == compute_pipeline_bound(shape, machine)
    )
    assert result.verification.ok


def test_roomy_scratchpad_is_proven_at_the_dma_bound():
    shape, machine = Shape(16, 16, 16), Machine(slots=8)
    result = solve_optimum(shape, machine, QUICK)
    assert result.proven and result.cycles == 12 * machine.dma_cycles  # every tile moved once
    assert result.verification.ok


@pytest.mark.slow  # CP-SAT
def test_the_solver_improves_a_poor_start_and_says_what_is_proven():
    shape, machine = Shape(16, 16, 24), Machine(slots=6)
    start = kouter(shape, machine, 1)
    result = solve_optimum(shape, machine, QUICK, start=start)
    assert result.verification.ok
    assert result.start_cycles == simulate(machine, start).cycles
    assert result.cycles < result.start_cycles
    assert lower_bound(shape, machine) <= result.bound <= result.cycles
    assert result.objective is None or result.cycles <= result.objective
    if result.status == OPTIMAL:
        assert result.cycles == result.objective == result.bound


@pytest.mark.slow  # CP-SAT, twice
def test_same_seed_same_schedule():
    shape, machine = Shape(24, 16, 16), Machine(slots=5)
    options = ExactOptions(
        time_limit=None, work_limit=0.1, workers=4, interleave=True, seed=3, search_nodes=0
    )
    first, second = solve_optimum(shape, machine, options), solve_optimum(shape, machine, options)
    assert (first.status, first.cycles, first.bound) == (second.status, second.cycles, second.bound)
    assert first.program.code.tolist() == second.program.code.tolist()


def test_a_cap_on_copies_is_not_a_proof():
    shape, machine = Shape(16, 16, 16), Machine(slots=4)
    result = solve_optimum(shape, machine, ExactOptions(time_limit=None, work_limit=0.2, copies=1))
    assert not result.complete and not result.proven
    assert result.bound == proven_bounds(shape, machine)[0] > lower_bound(shape, machine)
    assert result.verification.ok


def test_errors():
    with pytest.raises(ExactError, match="3 slots"):
        solve_optimum(Shape(8, 8, 8), Machine(slots=2), QUICK)
    with pytest.raises(ExactError, match="positive"):
        ExactOptions(time_limit=0)
    b = ProgramBuilder()
    b.load(0, "A", 0, 0)
    b.load(1, "B", 0, 0)
    b.zero(2)
    b.mxu(2, 0, 1)
    b.add_tuple(("vop", "relu", 2, 2, None))
    b.store(2, "C", 0, 0)
    with pytest.raises(ExactError, match="outside the exact model"):
        solve_optimum(Shape(8, 8, 8), Machine(), QUICK, start=b.build())


def test_an_instance_past_the_model_is_refused_before_it_is_built():
    check_instance(Shape(64, 64, 64), Machine(slots=16))  # 8 x 8 x 8 tiles: taken
    with pytest.raises(
        ExactError, match=f"576 tile products: the exact model takes at most {MAX_PRODUCTS}"
    ):
        solve_optimum(Shape(72, 64, 64), Machine(slots=16), QUICK)


@pytest.mark.slow  # CP-SAT
def test_progress_reports_the_start_then_each_better_schedule():
    shape, machine = Shape(16, 16, 24), Machine(slots=6)
    seen: list[tuple[int, int, float]] = []
    result = solve_optimum(shape, machine, QUICK, progress=lambda *found: seen.append(found))
    assert seen[0][:2] == (result.start_cycles, lower_bound(shape, machine))
    assert all(lower_bound(shape, machine) <= bound <= cycles for cycles, bound, _ in seen)
    assert [t for _, _, t in seen] == sorted(t for _, _, t in seen)
    assert seen[-1][0] == (result.start_cycles if result.status == START else result.objective)


def _programs():
    shape, machine = Shape(24, 16, 32), Machine(slots=8)
    yield shape, machine, kouter(shape, machine, 1)
    yield shape, machine, kouter(shape, machine, 2)
    yield shape, Machine(slots=16), blocked(shape, Machine(slots=16), 2, 2, 2)


@pytest.mark.parametrize("shape,machine,program", list(_programs()))
def test_chapter_programs_are_model_solutions(shape, machine, program):
    # The model admits the chapter's schedules as they run (a partial-sum reload included).
    assert (
        makespan_of_plan(shape, machine, plan_of(program, machine, shape))
        == simulate(machine, program).cycles
    )


small = st.integers(1, 32)


@settings(max_examples=examples(15), deadline=None)
@given(
    m=small,
    k=small,
    n=small,
    slots=st.integers(3, 12),
    params=general_params(block=3, tail=2, lookahead=8, ramp=2),
    setup=st.integers(0, 20),
    fill=st.integers(0, 10),
    mxu=st.integers(1, 12),
)
def test_generated_programs_are_model_solutions(m, k, n, slots, params, setup, fill, mxu):
    shape, machine = (
        Shape(m, k, n),
        Machine(slots=slots, dma_setup=setup, mxu_fill=fill, mxu_cycles=mxu),
    )
    if slots_needed(shape, machine, params) > slots:
        return
    program = general(shape, machine, params)
    assert (
        makespan_of_plan(shape, machine, plan_of(program, machine, shape))
        == simulate(machine, program).cycles
    )


@settings(max_examples=examples(10), deadline=None)
@given(
    m=small,
    k=small,
    n=small,
    slots=st.integers(4, 12),
    params=strip_params(reserve=3, split=2, tail=2, lookahead=8, protect=8),
)
def test_strip_programs_are_model_solutions(m, k, n, slots, params):
    shape, machine = Shape(m, k, n), Machine(slots=slots)
    if strip_slots_needed(shape, machine, params) > slots:
        return
    program = strips(shape, machine, params)
    assert (
        makespan_of_plan(shape, machine, plan_of(program, machine, shape))
        == simulate(machine, program).cycles
    )


@pytest.mark.slow  # CP-SAT on every example
@settings(max_examples=examples(8), deadline=None)
@given(
    m=st.integers(1, 24),
    k=st.integers(1, 24),
    n=st.integers(1, 24),
    slots=st.integers(3, 8),
    setup=st.integers(0, 16),
    fill=st.integers(0, 8),
    mxu=st.integers(1, 16),
    seed=st.integers(0, 5),
)
def test_every_returned_schedule_is_verified_and_bracketed(m, k, n, slots, setup, fill, mxu, seed):
    shape, machine = (
        Shape(m, k, n),
        Machine(slots=slots, dma_setup=setup, mxu_fill=fill, mxu_cycles=mxu),
    )
    options = ExactOptions(time_limit=None, work_limit=0.1, seed=seed, search_nodes=0)
    result = solve_optimum(shape, machine, options)
    assert result.verification.ok
    assert simulate(machine, result.program).cycles == result.cycles <= result.start_cycles
    assert lower_bound(shape, machine) <= result.bound <= result.cycles
    if result.status == OPTIMAL:
        assert result.cycles == result.objective == result.bound


@pytest.mark.slow  # CP-SAT
def test_the_record_is_plain_data_and_its_program_runs_as_recorded():
    import json

    from simcore.ga1.asm import from_text

    shape, machine = Shape(16, 24, 16), Machine(slots=7)
    result = solve_optimum(shape, machine, QUICK)
    record = json.loads(json.dumps(result.record()))
    assert (
        record["cycles"] == result.cycles and record["bound"] == result.bound and record["verified"]
    )
    assert (
        record["machine"] == machine.as_dict()
        and record["options"]["work_limit"] == QUICK.work_limit
    )
    assert simulate(machine, from_text(str(record["program"]))).cycles == result.cycles


@pytest.mark.parametrize(
    "shape,slots", [(Shape(16, 16, 16), 8), (Shape(8, 16, 24), 6), (Shape(24, 8, 8), 5)]
)
def test_optima_proven_without_the_bounds_are_above_them(shape, slots):
    # The solver's proof here uses none of lower_bounds.py, so it checks the bounds.
    machine = Machine(slots=slots)
    result = solve_optimum(
        shape,
        machine,
        ExactOptions(time_limit=None, work_limit=0.5, use_lower_bound=False, search_nodes=0),
    )
    assert result.status == OPTIMAL, result.status
    assert lower_bound(shape, machine) <= result.cycles
