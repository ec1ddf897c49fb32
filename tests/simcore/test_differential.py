"""Differential tests against the chapter's own listing (reference `Sim`): random programs on
random machines, and every chapter schedule on random shapes, must agree on cycles, counts, the
whole trace and DRAM contents.

Known, deliberate differences are kept out of the generated programs: negative tile coordinates
(we reject them; the listing would index from the end), and exp overflow (the listing raises
OverflowError; we return inf) is rejected as an example rather than compared.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from simcore import Machine, Program, ScheduleError, Shape, blocked, kouter, simulate
from tests.helpers.examples import examples
from tests.helpers.random_programs import DUMP, TENSORS, cases

# Beyond this magnitude the order of a product's sums (BLAS here, left to right in the listing)
# changes the rounding; examples whose values grow past it are not compared.
VALUE_LIMIT = 1e12
EXACT_LIMIT = 2.0**20  # integer-valued runs that stay below this are exact in any summation order


def run_reference(
    ga: Any, params: dict[str, int], dram: dict[str, np.ndarray], program: list[tuple[Any, ...]]
) -> tuple[Any, float] | None:
    """The listing, one instruction at a time (its state carries over), and the largest finite
    magnitude any slot held; None when the example cannot be compared (see VALUE_LIMIT)."""
    sim = ga.Sim(ga.Machine(**params), {name: value.tolist() for name, value in dram.items()})
    peak = 0.0
    for ins in program:
        try:
            sim.run([ins])
        except OverflowError:
            return None  # math.exp overflow: the listing stops, we give inf
        finite = [abs(x) for tile in sim.spad for row in tile for x in row if math.isfinite(x)]
        peak = max(peak, *finite) if finite else peak
        if peak > VALUE_LIMIT:
            return None
    return sim, peak


def inexact(program: list[tuple[Any, ...]]) -> bool:
    return any(
        ins[0] == "exp"
        or (ins[0] == "vop" and ins[1] == "div")
        or (ins[0] == "vscale" and ins[3] % 1)
        for ins in program
    )


def assert_same_dram(ours: np.ndarray, reference: list[list[float]], exact: bool) -> None:
    ref = np.array(reference, dtype=np.float64)
    assert ours.shape == ref.shape
    if exact:
        assert np.array_equal(ours, ref, equal_nan=True)
    else:  # exp and division round differently when summed in another order
        assert np.allclose(ours, ref, rtol=1e-9, atol=1e-9, equal_nan=True)


def assert_same_report(result: Any, sim: Any) -> None:
    ref = sim.report()
    assert result.cycles == ref["cycles"]
    assert (result.tiles_moved, result.loads, result.stores) == (
        ref["dma_tiles"],
        ref["loads"],
        ref["stores"],
    )
    assert (result.macs, result.instructions) == (ref["macs"], ref["instructions"])
    for ours, theirs in [
        (result.mxu_util, ref["mxu_utilization"]),
        (result.dma_busy, ref["dma_busy"]),
        (result.mxu_busy, ref["mxu_busy"]),
        (result.vpu_busy, ref["vpu_busy"]),
    ]:
        assert math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-15)
    assert dict(result.busy) == sim.busy


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf * 0 and friends, as in the listing
@settings(
    max_examples=examples(800),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(case=cases())
def test_random_programs_match_reference(reference_ga1: Any, case: Any) -> None:
    params, dram, program = case
    outcome = run_reference(reference_ga1.ga, params, dram, program)
    assume(outcome is not None)
    assert outcome is not None
    sim, peak = outcome
    compact = Program.from_tuples(program)
    assert compact.to_tuples() == [tuple(ins) for ins in program]  # the round trip is lossless
    result = simulate(Machine(**params), compact, inputs=dram, trace=True)
    assert result.trace == tuple(sim.trace)
    assert_same_report(result, sim)
    assert result.outputs is not None
    exact = not inexact(program) and peak < EXACT_LIMIT
    for name in (*TENSORS, DUMP):
        assert_same_dram(result.outputs[name], sim.dram[name], exact)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_python_semantics_of_max_and_masklen(reference_ga1: Any) -> None:
    # Regressions found against the listing: max(x, nan) is x in Python (np.maximum says nan), a
    # row max skips a nan that is not first, and a negative masklen count keeps nothing.
    program = [
        ("load", 0, "A", 0, 0),
        ("load", 1, "B", 0, 0),
        ("vop", "div", 2, 0, 1),
        ("vop", "max", 3, 0, 2),
        ("rowred", "max", 4, 2),
        ("masklen", 0, -1, 3),
        ("store", 3, "C", 0, 0),
        ("store", 4, "C", 0, 1),
        ("store", 0, "C", 1, 0),
    ]
    params = {"T": 2, "slots": 8}
    dram = {
        "A": np.array([[0.0, 1.0], [2.0, 0.0]]),
        "B": np.array([[0.0, 1.0], [0.0, 0.0]]),
        "C": np.full((4, 4), 9.0),
    }
    outcome = run_reference(reference_ga1.ga, params, dram, program)
    assert outcome is not None
    sim = outcome[0]
    result = simulate(Machine(**params), Program.from_tuples(program), inputs=dram, trace=True)
    assert result.outputs is not None
    assert_same_dram(result.outputs["C"], sim.dram["C"], exact=True)
    assert result.trace == tuple(sim.trace)


@st.composite
def schedule_cases(
    draw: st.DrawFn,
) -> tuple[dict[str, int], tuple[int, int, int], int | None, int | None, int]:
    params = {
        "T": draw(st.sampled_from([4, 8])),
        "slots": draw(st.integers(3, 40)),
        "dma_setup": draw(st.integers(0, 20)),
        "dma_words_per_cycle": draw(st.sampled_from([1, 4, 16, 64])),
        "mxu_cycles": draw(st.integers(1, 24)),
        "mxu_fill": draw(st.integers(0, 12)),
    }
    dims = (draw(st.integers(1, 40)), draw(st.integers(1, 40)), draw(st.integers(1, 40)))
    if draw(st.booleans()):
        bi, bj = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    else:
        bi = bj = None  # k outermost
    return params, dims, bi, bj, draw(st.sampled_from([1, 2]))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=schedule_cases())
def test_chapter_schedules_match_reference(reference_ga1: Any, case: Any) -> None:
    params, (M, K, N), bi, bj, buffers = case
    ga, schedules = reference_ga1
    ref_machine, machine = ga.Machine(**params), Machine(**params)
    shape = Shape(M, K, N)
    double = buffers == 2

    def build_reference() -> list[tuple[Any, ...]]:
        if bi is None:
            return schedules.kouter(M, K, N, ref_machine, double)
        return schedules.blocked(M, K, N, ref_machine, bi, bj, double)

    def build_ours() -> Program:
        return (
            kouter(shape, machine, buffers)
            if bi is None
            else blocked(shape, machine, bi, bj, buffers)
        )

    try:
        ref_program = build_reference()
    except ValueError:  # the scratchpad is too small: ours must refuse too
        with pytest.raises(ScheduleError):
            build_ours()
        return
    program = build_ours()
    assert program.to_tuples() == ref_program  # the same instructions, in the same order

    a, b = schedules.matrices(M, K, N, seed=M * K + N)
    sim, c = schedules.run(ref_program, a, b, ref_machine)
    dram = {
        "A": np.array(a, dtype=np.float64),
        "B": np.array(b, dtype=np.float64),
        "C": np.zeros((M, N)),
    }
    result = simulate(machine, program, inputs=dram, trace=True)
    assert result.cycles == sim.cycles
    assert result.trace == tuple(sim.trace)
    assert_same_report(result, sim)
    assert result.outputs is not None and np.array_equal(
        result.outputs["C"], np.array(c, dtype=np.float64)
    )
