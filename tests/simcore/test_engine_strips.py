"""The compiled strip generator (engine.Strips) held to the reference (simcore/ga1/generator/strips.py):
the same program, instruction for instruction, for random strip parameters (protect included),
shapes and machines; the same refusals; chunk boundaries that change nothing; a streamed
verification that agrees; memory that does not grow with the products. And the engine's plan
arithmetic (band starts, the strips' slot need) against the reference's lists."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore import Machine, ScheduleError, Shape, verify_matmul
from simcore.ga1 import engine
from simcore.ga1.engine import generators
from simcore.ga1.engine.plan import band_lengths, band_sizes
from simcore.ga1.engine.strip_order import strip_slots
from simcore.ga1.generator import bands
from simcore.ga1.generator.order import PARTITIONS
from simcore.ga1.generator.strips import StripParams, strip_slots_needed, strips
from simcore.ga1.timing import run_timing
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import machine_params, strip_params
from tests.helpers.schedule_checks import same_timing

dims = st.integers(1, 60)
SLOW = settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _reference_or_error(shape: Shape, machine: Machine, params: StripParams) -> object:
    try:
        return strips(shape, machine, params)
    except ScheduleError as error:
        return error


@SLOW
@given(
    m=dims, k=dims, n=dims, params=strip_params(), machine=machine_params, slots=st.integers(3, 48)
)
def test_strip_program_is_the_reference_program(m, k, n, params, machine, slots) -> None:
    shape, target = Shape(m, k, n), Machine(**machine, slots=slots)
    reference = _reference_or_error(shape, target, params)
    generator = engine.Strips(shape, target, params)
    if isinstance(reference, ScheduleError):
        for run in (generator.timing, generator.program):
            with pytest.raises(ScheduleError) as got:
                run()
            assert str(got.value) == str(reference)
        return
    assert np.array_equal(generator.program().code, reference.code)
    same_timing(generator.timing(), run_timing(target, reference))


@settings(max_examples=examples(60), deadline=None)
@given(
    m=dims,
    k=dims,
    n=dims,
    params=strip_params(tail=3, lookahead=12, protect=16),
    slots=st.integers(4, 30),
)
def test_chunk_boundaries_change_nothing(m, k, n, params, slots) -> None:
    # The smallest chunks (a resumption at nearly every product) emit the same program.
    shape, machine = Shape(m, k, n), Machine(slots=slots)
    reference = _reference_or_error(shape, machine, params)
    if isinstance(reference, ScheduleError):
        return
    with mock.patch.object(generators, "CHUNK", 1):
        assert np.array_equal(engine.Strips(shape, machine, params).program().code, reference.code)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=dims,
    k=dims,
    n=dims,
    params=strip_params(tail=3, lookahead=20),
    slots=st.integers(6, 30),
    seed=st.integers(0, 99),
)
def test_streamed_verification_agrees_with_the_reference(m, k, n, params, slots, seed) -> None:
    shape, machine = Shape(m, k, n), Machine(slots=slots)
    reference = _reference_or_error(shape, machine, params)
    if isinstance(reference, ScheduleError):
        return
    ours, expected = (
        engine.Strips(shape, machine, params).verify(seed),
        verify_matmul(machine, reference, shape, seed)[0],
    )
    assert ours.ok and expected.ok
    assert (ours.cycles, ours.hazards, ours.result_ok) == (
        expected.cycles,
        expected.hazards,
        expected.result_ok,
    )


@settings(max_examples=examples(300), deadline=None)
@given(
    m=st.integers(1, 400),
    k=st.integers(1, 400),
    n=st.integers(1, 400),
    params=strip_params(reserve=6),
    slots=st.integers(1, 200),
    T=st.sampled_from([4, 8, 16]),
)
def test_slot_need_is_the_references(m, k, n, params, slots, T) -> None:
    shape, machine = Shape(m, k, n), Machine(T=T, slots=slots)
    assert strip_slots(shape, machine, params) == strip_slots_needed(shape, machine, params)


@settings(max_examples=examples(300), deadline=None)
@given(total=st.integers(1, 500), size=st.integers(1, 600), partition=st.sampled_from(PARTITIONS))
def test_band_lengths_are_the_references_bands(total, size, partition) -> None:
    cut = bands(total, size, partition)
    count, first, last, n_first = band_lengths(total, size, partition)
    lengths = [first] * n_first + [last] * (count - n_first)
    assert [band.start for band in cut] == [sum(lengths[:i]) for i in range(count)]
    assert [len(band) for band in cut] == lengths
    sizes = band_sizes((count, first, last, n_first))
    assert set(sizes) == set(lengths) and sizes[0] <= sizes[1]


def test_the_state_does_not_grow_with_the_products() -> None:
    # K eight times longer, 8x the products: the state grows by an entry per extra A and B tile
    # (where each tile is), nothing per product; 64x the products (16x the tiles): under 16x.
    machine, params = Machine(slots=16), StripParams(split=2, tail=2, protect=8)
    size = {k: engine.Strips(Shape(256, k, 256), machine, params)._begin().size for k in (64, 512)}
    Mt = Nt = 256 // machine.T
    assert size[512] - size[64] == (Mt + Nt) * (512 - 64) // machine.T
    small, large = (
        engine.Strips(Shape(n, n, n), machine, params)._begin().size for n in (256, 1024)
    )
    assert large < 16 * small


def test_protect_is_exact_where_it_matters() -> None:
    # The points that did best at 16 and 32 slots (test_strips.py) at 128^3: protected prefetch.
    shape = Shape(128, 128, 128)
    for slots, params in (
        (32, StripParams(split=2, tail=2, lookahead=16, protect=8)),
        (16, StripParams(strip_order="wide", split=0, lookahead=8, protect=32)),
    ):
        machine = Machine(slots=slots)
        reference = strips(shape, machine, params)
        ours = engine.Strips(shape, machine, params)
        assert np.array_equal(ours.program().code, reference.code)
        same_timing(ours.timing(), run_timing(machine, reference))
