"""The systolic target's family: domains, graded violation, metrics, verification."""
from __future__ import annotations

from dataclasses import astuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.ga1.machine import Machine
from simcore.shape import Shape
from simcore.systolic.model import SystolicArray, WeightFetch, stream_schedule, traffic
from simcore.systolic.cycle import simulate_systolic

from search_spaces import registry
from search_spaces.domains import Choice, IntRange
from search_spaces.systolic import (
    SystolicFamily,
    closed_form_cycles,
    run_plan,
    systolic_family,
    verify_plan,
)

MACHINE = Machine()
FAMILY = systolic_family(64, 16)


def point(rows: int = 4, cols: int = 4, dataflow: str = "ws", shadow: bool = True,
          weight_buffers: int = 2, hbm_words: int = 4) -> dict[str, object]:
    return {"rows": rows, "cols": cols, "dataflow": dataflow, "shadow": shadow,
            "weight_buffers": weight_buffers, "hbm_words": hbm_words}


def test_params() -> None:
    params = {p.name: p.domain for p in FAMILY.params(Shape(8, 8, 8), 8)}
    assert params["rows"] == IntRange(1, 64, log=True) == params["cols"]
    assert params["dataflow"] == Choice(("ws", "os"))
    assert params["shadow"] == Choice((True, False))
    assert params["weight_buffers"] == Choice((1, 2))
    assert params["hbm_words"] == IntRange(1, 16, log=True)
    assert isinstance(FAMILY, SystolicFamily) and FAMILY.name == "systolic"


def test_not_a_default_space() -> None:
    assert "systolic" not in registry.DEFAULT_SPACES


@pytest.mark.parametrize("budget", [0, -1, True, 2.5])
def test_bad_budgets(budget: object) -> None:
    with pytest.raises(ValueError):
        systolic_family(budget, 4)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        systolic_family(4, budget)  # type: ignore[arg-type]


def test_violation_is_graded() -> None:
    shape = Shape(8, 8, 8)
    assert FAMILY.violation(point(8, 8), shape, MACHINE) == 0
    assert FAMILY.violation(point(1, 1), shape, MACHINE) == 0
    assert FAMILY.violation(point(8, 16), shape, MACHINE) == pytest.approx(1.0)
    assert FAMILY.violation(point(16, 16), shape, MACHINE) == pytest.approx(3.0)
    assert 0 < FAMILY.violation(point(9, 8), shape, MACHINE) < FAMILY.violation(point(10, 8), shape, MACHINE)


def test_evaluate_metrics_match_the_model() -> None:
    shape = Shape(6, 6, 6)
    ws = FAMILY.evaluate(point(3, 3, hbm_words=1, weight_buffers=1), shape, MACHINE)
    assert ws["cycles"] == 64  # the chapter: one buffer, one word per cycle
    assert ws["tiles"] == 4 and ws["pes"] == 9
    assert ws["mac_utilization"] == pytest.approx(216 / (9 * 64))
    assert ws["words_per_mac"] == traffic(SystolicArray(3, 3), 6, 6, 6, "ws").words_per_mac
    assert FAMILY.evaluate(point(3, 3, hbm_words=1), shape, MACHINE)["cycles"] == 49
    assert FAMILY.evaluate(point(3, 3, hbm_words=2), shape, MACHINE)["cycles"] == 36
    os_ = FAMILY.evaluate(point(3, 3, dataflow="os"), shape, MACHINE)
    assert os_["words_per_mac"] == traffic(SystolicArray(3, 3), 6, 6, 6, "os").words_per_mac
    assert set(ws) >= {"cycles", "words_per_mac", "mac_utilization", "tiles", "pes"}


def test_os_is_timed_with_m_and_k_swapped() -> None:
    shape = Shape(5, 12, 7)
    metrics = FAMILY.evaluate(point(4, 4, dataflow="os", hbm_words=3), shape, MACHINE)
    expected = stream_schedule(SystolicArray(4, 4), 12, 5, 7, WeightFetch(3, 2))
    assert metrics["cycles"] == expected.cycles
    assert metrics["tiles"] == len(expected.tiles) == 2 * 2


def test_bigger_array_fewer_cycles_and_words() -> None:
    shape = Shape(64, 64, 64)
    small = FAMILY.evaluate(point(2, 2), shape, MACHINE)
    big = FAMILY.evaluate(point(8, 8), shape, MACHINE)
    assert big["cycles"] < small["cycles"] and big["words_per_mac"] < small["words_per_mac"]


@pytest.mark.parametrize("dataflow", ["ws", "os"])
@pytest.mark.parametrize("shadow", [True, False])
def test_verify_full_shape(dataflow: str, shadow: bool) -> None:
    ok, _level, detail = astuple(FAMILY.verify(point(3, 4, dataflow, shadow, 1, 2), Shape(7, 9, 10), MACHINE))
    assert ok, detail
    assert "full shape" in detail


def test_verify_big_shape_is_scaled_down_and_says_so() -> None:
    family = systolic_family(1 << 16, 64)
    ok, _level, detail = astuple(family.verify(point(3, 5, hbm_words=1), Shape(512, 1024, 1024), MACHINE))
    assert ok and "scaled-down shape" in detail
    ok, _level, detail = astuple(family.verify(point(256, 256, "os", hbm_words=1), Shape(512, 1024, 1024), MACHINE))
    assert ok and "similar problem" in detail


def test_verify_plan_keeps_the_tile_structure() -> None:
    array = SystolicArray(3, 5)
    plan = verify_plan(array, 512, 1024, 1024, WeightFetch(1, 2))
    assert plan.array == array
    full, small = stream_schedule(array, 512, 1024, 1024), stream_schedule(array, plan.m, plan.k, plan.n)
    assert {(t.tile.k, t.tile.n) for t in small.tiles} == {(t.tile.k, t.tile.n) for t in full.tiles}
    assert run_plan(plan)[0]


def test_describe_and_seeds() -> None:
    shape = Shape(32, 32, 32)
    text = FAMILY.describe(point(), shape, MACHINE)
    assert "4x4 array" in text and "cycles" in text
    seeds = FAMILY.seed_points(shape, MACHINE)
    assert {"rows": 8, "cols": 8, "dataflow": "ws", "shadow": True, "weight_buffers": 2, "hbm_words": 16} in seeds
    for seed in seeds:
        assert seed["rows"] == seed["cols"] and FAMILY.violation(seed, shape, MACHINE) == 0
        assert all(p.domain.contains(seed[p.name]) for p in FAMILY.params(shape, 8))
    assert {s["dataflow"] for s in seeds} == {"ws", "os"}


def test_bad_point() -> None:
    with pytest.raises(ValueError, match="dataflow"):
        FAMILY.evaluate(point(dataflow="rs"), Shape(4, 4, 4), MACHINE)
    with pytest.raises(ValueError, match="lacks"):
        FAMILY.evaluate({"rows": 2}, Shape(4, 4, 4), MACHINE)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 5), cols=st.integers(1, 5), dataflow=st.sampled_from(["ws", "os"]),
    shadow=st.booleans(), buffers=st.sampled_from([1, 2]), words=st.integers(1, 12),
    m=st.integers(1, 9), k=st.integers(1, 11), n=st.integers(1, 11),
)
def test_evaluate_cycles_equal_the_cycle_model(
    rows: int, cols: int, dataflow: str, shadow: bool, buffers: int, words: int, m: int, k: int, n: int
) -> None:
    import numpy as np

    p = point(rows, cols, dataflow, shadow, buffers, words)
    cycles = FAMILY.evaluate(p, Shape(m, k, n), MACHINE)["cycles"]
    tm, tk = (m, k) if dataflow == "ws" else (k, m)
    rng = np.random.default_rng(0)
    a, b = rng.integers(-9, 10, (tm, tk)), rng.integers(-9, 10, (tk, n))
    result = simulate_systolic(SystolicArray(rows, cols, shadow), a, b, fetch=WeightFetch(words, buffers))
    assert result.cycles == cycles
    np.testing.assert_array_equal(result.c, a @ b)
    assert FAMILY.verify(p, Shape(m, k, n), MACHINE).ok


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 4), cols=st.integers(1, 4), shadow=st.booleans(), buffers=st.sampled_from([1, 2]),
    words=st.sampled_from([None, 1, 2, 3, 0.5, 64]),
    m=st.integers(1, 12), k=st.integers(1, 14), n=st.integers(1, 60),
)
def test_extrapolated_closed_form_equals_the_full_walk(
    rows: int, cols: int, shadow: bool, buffers: int, words: float | None, m: int, k: int, n: int
) -> None:
    array, fetch = SystolicArray(rows, cols, shadow), WeightFetch(words, buffers)
    assert closed_form_cycles(array, m, k, n, fetch) == stream_schedule(array, m, k, n, fetch).cycles
