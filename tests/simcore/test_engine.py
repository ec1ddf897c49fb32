"""The compiled engine (simcore.ga1.engine) held to the Python reference, kernel by kernel.

Differential and property tests: the same program, instruction for instruction, from the general
generator (random parameters, shapes and machines), and from the chapter's families; the same
cycles, busy times, counts, starts and finishes from the timing rule on random programs that use
every opcode; the same arithmetic; the same hazards from the replay, planted ones included; and
the same verdict from the streamed verification, for good programs and broken ones.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore import (
    Machine,
    Program,
    ProgramError,
    ScheduleError,
    Shape,
    blocked,
    kouter,
    replay,
    simulate,
    verify_matmul,
)
from simcore.ga1 import engine
from simcore.ga1.engine import generators
from simcore.ga1.engine.hazards import new_history, replay_rows
from simcore.ga1.functional import execute
from simcore.ga1.generator import general, slots_needed
from simcore.ga1.timing import run_timing
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params, machine_params
from tests.helpers.random_programs import cases
from tests.helpers.schedule_checks import same_timing

dims = st.integers(1, 52)
SLOW = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SLOW
@given(
    m=dims,
    k=dims,
    n=dims,
    params=general_params(block=6, tail=5, lookahead=40, ramp=6),
    machine=machine_params,
    extra=st.integers(0, 30),
)
def test_general_program_is_the_reference_program(m, k, n, params, machine, extra) -> None:
    shape = Shape(m, k, n)
    base = Machine(**machine)
    target = Machine(**machine, slots=slots_needed(shape, base, params) + extra)
    reference = general(shape, target, params)
    generator = engine.General(shape, target, params)
    program = generator.program()
    assert np.array_equal(program.code, reference.code)
    assert program.tensors == reference.tensors
    same_timing(generator.timing(), run_timing(target, reference))


@settings(max_examples=examples(60), deadline=None)
@given(m=dims, k=dims, n=dims, params=general_params(block=4, tail=3, lookahead=12, ramp=4))
def test_chunk_boundaries_change_nothing(m, k, n, params) -> None:
    # The smallest chunks (a resumption at nearly every product) emit the same program.
    shape = Shape(m, k, n)
    machine = Machine(slots=slots_needed(shape, Machine(), params) + 3)
    with mock.patch.object(generators, "CHUNK", 1):
        assert np.array_equal(
            engine.General(shape, machine, params).program().code,
            general(shape, machine, params).code,
        )
        wide = Machine(slots=40)
        assert np.array_equal(
            engine.Blocked(shape, wide, 2, 3, 2).program().code, blocked(shape, wide, 2, 3, 2).code
        )
        assert np.array_equal(
            engine.KOuter(shape, wide, 3).program().code, kouter(shape, wide, 3).code
        )


@SLOW
@given(
    m=dims,
    k=dims,
    n=dims,
    bi=st.integers(1, 5),
    bj=st.integers(1, 5),
    buffers=st.integers(1, 3),
    order=st.sampled_from(["row", "col"]),
    machine=machine_params,
)
def test_chapter_programs_are_the_reference_programs(
    m, k, n, bi, bj, buffers, order, machine
) -> None:
    shape = Shape(m, k, n)
    target = Machine(**machine, slots=bi * bj + buffers * (bi + bj))
    reference = blocked(shape, target, bi, bj, buffers, order)
    ours = engine.Blocked(shape, target, bi, bj, buffers, order)
    assert np.array_equal(ours.program().code, reference.code)
    same_timing(ours.timing(), run_timing(target, reference))
    reference = kouter(shape, target, min(buffers, target.slots // 3))
    ours = engine.KOuter(shape, target, min(buffers, target.slots // 3))
    assert np.array_equal(ours.program().code, reference.code)
    same_timing(ours.timing(), run_timing(target, reference))


def test_schedules_that_do_not_fit_fail_as_the_reference_does() -> None:
    shape = Shape(64, 64, 64)
    params = generators.GeneralParams(bi=4, bj=4)
    small = Machine(slots=slots_needed(shape, Machine(), params) - 1)
    for build, ours in (
        (lambda: general(shape, small, params), engine.General(shape, small, params)),
        (lambda: blocked(shape, small, 4, 4, 2), engine.Blocked(shape, small, 4, 4, 2)),
        (lambda: kouter(shape, Machine(slots=5), 2), engine.KOuter(shape, Machine(slots=5), 2)),
    ):
        with pytest.raises(ScheduleError) as expected:
            build()
        for run in (ours.timing, ours.program, ours.verify):
            with pytest.raises(ScheduleError) as got:
                run()
            assert str(got.value) == str(expected.value)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_timing_of_random_programs_with_every_opcode(case) -> None:
    params, _dram, program = case
    machine, compact = Machine(**params), Program.from_tuples(program)
    ours, reference = (
        engine.time_program(machine, compact, record=True),
        run_timing(machine, compact, record=True),
    )
    same_timing(ours, reference)
    assert np.array_equal(ours.starts, reference.starts) and np.array_equal(
        ours.finishes, reference.finishes
    )
    assert (
        engine.simulate(machine, compact, trace=True).trace
        == simulate(machine, compact, trace=True).trace
    )


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), seed=st.integers(0, 2**32 - 1))
def test_arithmetic_and_replay_of_random_programs(case, seed) -> None:
    params, dram, program = case
    machine, compact = Machine(**params), Program.from_tuples(program)
    ours, reference = engine.execute(machine, compact, dram), execute(machine, compact, dram)
    assert set(ours) == set(reference)
    for name in reference:
        assert np.array_equal(ours[name], reference[name], equal_nan=True)  # integer data: exact
    # The replay on the real trace, and on the trace with starts moved at random (planted hazards).
    trace = list(simulate(machine, compact, trace=True).trace or ())
    rng = np.random.default_rng(seed)
    moved = [
        (i, e, max(0, s + int(rng.integers(-30, 5))), f, r, w, fill)
        for i, e, s, f, r, w, fill in trace
    ]
    for records in (trace, moved):
        assert engine.replay(records) == replay(records)


def test_arithmetic_of_generated_programs_with_real_values() -> None:
    shape, machine = Shape(40, 56, 24), Machine(T=8, slots=40)
    program = engine.General(shape, machine, generators.GeneralParams(bi=3, bj=2, tail=2)).program()
    rng = np.random.default_rng(3)
    dram = {
        "A": rng.standard_normal((40, 56)),
        "B": rng.standard_normal((56, 24)),
        "C": np.zeros((40, 24)),
    }
    ours, reference = (
        engine.execute(machine, program, dram)["C"],
        execute(machine, program, dram)["C"],
    )
    np.testing.assert_allclose(
        ours, reference, rtol=1e-12, atol=1e-12
    )  # summation order may differ
    np.testing.assert_allclose(ours, dram["A"] @ dram["B"], rtol=1e-10, atol=1e-10)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=dims,
    k=dims,
    n=dims,
    params=general_params(block=4, tail=3, lookahead=20, ramp=4),
    seed=st.integers(0, 99),
)
def test_streamed_verification_agrees_with_the_reference(m, k, n, params, seed) -> None:
    shape = Shape(m, k, n)
    machine = Machine(slots=slots_needed(shape, Machine(), params) + 2)
    generator = engine.General(shape, machine, params)
    ours, reference = (
        generator.verify(seed),
        verify_matmul(machine, general(shape, machine, params), shape, seed)[0],
    )
    assert ours.ok and reference.ok
    assert (ours.cycles, ours.hazards, ours.result_ok) == (
        reference.cycles,
        reference.hazards,
        reference.result_ok,
    )


@pytest.mark.parametrize("breakage", ["swap", "slot", "drop_store"])
def test_streamed_verification_catches_what_the_reference_catches(breakage: str) -> None:
    shape, machine = Shape(48, 32, 40), Machine(slots=24)
    code = (
        engine.General(shape, machine, generators.GeneralParams(bi=2, bj=3, lookahead=6))
        .program()
        .code.copy()
    )
    mxu = np.flatnonzero(code[:, 0] == 3)
    if breakage == "swap":  # a product moved before the loads it needs
        first = mxu[0]
        code[[0, first]] = code[[first, 0]]
    elif breakage == "slot":  # a product reads the wrong slot
        code[mxu[5], 3] = (
            code[mxu[6], 3] if code[mxu[6], 3] != code[mxu[5], 3] else (code[mxu[5], 3] + 1) % 24
        )
    else:
        code = code[code[:, 0] != 1]
    broken = Program(code=code)
    ours, reference = (
        engine.verify_program(machine, broken, shape),
        verify_matmul(machine, broken, shape)[0],
    )
    assert not reference.ok
    assert (ours.ok, ours.result_ok, ours.hazards, ours.cycles) == (
        reference.ok,
        reference.result_ok,
        reference.hazards,
        reference.cycles,
    )
    assert ours.max_abs_error == reference.max_abs_error


def test_streamed_replay_counts_every_hazard_but_keeps_the_first() -> None:
    # The timing rule never makes hazards; a trace with every start at 0 has many.
    shape, machine = Shape(64, 64, 64), Machine(slots=40)
    program = blocked(shape, machine, 2, 2, 2)
    trace = [
        (i, e, 0, f, r, w, fill)
        for i, e, _s, f, r, w, fill in simulate(machine, program, trace=True).trace or ()
    ]
    expected = replay(trace)
    times = np.array([[0, record[3]] for record in trace], dtype=np.int64)
    keep = generators.KEEP_HAZARDS
    found, count = np.zeros((keep, 5), dtype=np.int64), np.zeros(1, dtype=np.int64)
    replay_rows(
        new_history(machine.slots),
        found,
        count,
        program.code,
        times,
        len(program),
        0,
        machine.mxu_fill,
        np.zeros(4, dtype=np.int64),
    )
    assert int(count[0]) == len(expected) > keep
    assert list(generators.hazards_found(found, int(count[0]))) == expected[:keep]


def test_malformed_programs_are_refused_not_run() -> None:
    machine = Machine(slots=4)
    for bad in (
        [3, -1, 2, 9, 1, -1, -1, -1],
        [11, -1, 0, -1, -1, -1, -1, -1],
        [0, -1, 7, -1, -1, 0, 0, 0],
    ):
        with pytest.raises(ProgramError):
            engine.time_program(machine, Program(code=np.array([bad])))


def test_materialised_programs_run_through_the_same_consumers() -> None:
    shape, machine = Shape(40, 40, 40), Machine(slots=64)
    program = blocked(shape, machine, 2, 4, 2)
    wrapped = engine.Materialised(shape, machine, lambda: program)
    same_timing(wrapped.timing(), run_timing(machine, program))
    assert np.array_equal(wrapped.program().code, program.code)
    assert wrapped.verify().ok
