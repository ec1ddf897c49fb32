"""The systolic oracle and its family: domains, canonical mapping, graded violation, metrics, verification."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autotune.oracles.systolic_check as family_module
from autotune.oracles.systolic import ORACLE
from autotune.oracles.systolic_check import verify_design, verify_plan
from search_spaces import registry
from search_spaces.base import EXACT, SCALED
from search_spaces.domains import Choice, IntRange
from search_spaces.systolic import SystolicFamily, design_of, systolic_family
from simcore.shape import Shape
from simcore.systolic import Mapping, SystolicArray, SystolicDesign, cycles, tiles, traffic
from simcore.systolic.model import ORDERS, HbmLink
from tests.helpers.examples import examples

MACHINE = ORACLE.default_machine()
FAMILY = systolic_family(64, 16)


def point(
    rows: int = 4,
    cols: int = 4,
    dataflow: str = "ws",
    shadow: bool = True,
    buffers: int = 2,
    hbm_words: int = 4,
    map_rows: int | None = None,
    map_cols: int | None = None,
    tile_order: str = "col-outer",
) -> dict[str, object]:
    return {
        "rows": rows,
        "cols": cols,
        "dataflow": dataflow,
        "shadow": shadow,
        "hbm_buffers": buffers,
        "hbm_words": hbm_words,
        "map_rows": rows if map_rows is None else map_rows,
        "map_cols": cols if map_cols is None else map_cols,
        "tile_order": tile_order,
    }


def test_params() -> None:
    params = {p.name: p.domain for p in FAMILY.params(Shape(8, 8, 8), 8)}
    assert (
        params["rows"]
        == IntRange(1, 64, log=True)
        == params["cols"]
        == params["map_rows"]
        == params["map_cols"]
    )
    assert params["dataflow"] == Choice(("ws", "os", "is"))
    assert params["shadow"] == Choice((True, False)) and params["hbm_buffers"] == Choice((1, 2))
    assert params["hbm_words"] == IntRange(1, 16, log=True) and params["tile_order"] == Choice(
        ORDERS
    )
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
    assert (
        FAMILY.violation(point(8, 8), shape, MACHINE)
        == 0
        == FAMILY.violation(point(1, 1), shape, MACHINE)
    )
    assert FAMILY.violation(point(8, 16), shape, MACHINE) == pytest.approx(1.0)
    assert FAMILY.violation(point(16, 16), shape, MACHINE) == pytest.approx(3.0)
    assert (
        0
        < FAMILY.violation(point(9, 8), shape, MACHINE)
        < FAMILY.violation(point(10, 8), shape, MACHINE)
    )


def test_a_mapping_wider_than_the_array_is_clipped() -> None:
    shape = Shape(8, 8, 8)
    wide = point(4, 4, map_rows=64, map_cols=2)
    assert FAMILY.canonical(wide, shape, 8) == point(4, 4, map_rows=4, map_cols=2)
    assert ORACLE.evaluate(FAMILY, wide, shape, MACHINE) == ORACLE.evaluate(
        FAMILY, point(4, 4, map_rows=4, map_cols=2), shape, MACHINE
    )
    assert design_of(wide).used == Mapping(4, 2)


def test_evaluate_metrics_match_the_model() -> None:
    shape = Shape(6, 6, 6)
    ws = ORACLE.evaluate(FAMILY, point(3, 3, hbm_words=1, buffers=1), shape, MACHINE)
    assert (
        ws["cycles"] == 64 and ws["tiles"] == 4 and ws["pes"] == 9
    )  # the chapter: one buffer, one word per cycle
    assert ws["mac_utilization"] == pytest.approx(216 / (9 * 64))
    assert ws["words_per_mac"] == traffic(SystolicArray(3, 3), 6, 6, 6, "ws").words_per_mac
    assert ORACLE.evaluate(FAMILY, point(3, 3, hbm_words=1), shape, MACHINE)["cycles"] == 49
    assert ORACLE.evaluate(FAMILY, point(3, 3, hbm_words=2), shape, MACHINE)["cycles"] == 36
    for dataflow in ("os", "is"):
        metrics = ORACLE.evaluate(FAMILY, point(3, 3, dataflow=dataflow), shape, MACHINE)
        assert (
            metrics["words_per_mac"]
            == traffic(SystolicArray(3, 3), 6, 6, 6, dataflow).words_per_mac
        )
    small = ORACLE.evaluate(FAMILY, point(3, 3, map_rows=2, map_cols=3), shape, MACHINE)
    assert small["tiles"] == 3 * 2 and small["pes"] == 9


def test_os_is_timed_by_its_own_recurrence() -> None:
    shape = Shape(5, 12, 7)
    metrics = ORACLE.evaluate(FAMILY, point(4, 4, dataflow="os", hbm_words=3), shape, MACHINE)
    design = SystolicDesign(SystolicArray(4, 4), "os", Mapping(4, 4), hbm=HbmLink(3, 2))
    assert metrics["cycles"] == cycles(design, shape) and metrics["tiles"] == 2 * 2


def test_bigger_array_fewer_cycles_and_words() -> None:
    shape = Shape(64, 64, 64)
    small, big = (
        ORACLE.evaluate(FAMILY, point(2, 2), shape, MACHINE),
        ORACLE.evaluate(FAMILY, point(8, 8), shape, MACHINE),
    )
    assert big["cycles"] < small["cycles"] and big["words_per_mac"] < small["words_per_mac"]


@pytest.mark.parametrize("dataflow", ["ws", "os", "is"])
@pytest.mark.parametrize("shadow", [True, False])
def test_verify_runs_the_design_itself(dataflow: str, shadow: bool) -> None:
    verdict = ORACLE.verify(
        FAMILY, point(3, 4, dataflow, shadow, 1, 2, map_rows=2), Shape(7, 9, 10), MACHINE
    )
    assert (
        verdict.ok
        and verdict.verified
        and verdict.level == EXACT
        and "full shape" in verdict.detail
    )


def test_verify_512x1024x1024_on_128x128_is_exact() -> None:
    family = systolic_family(1 << 16, 64)
    for dataflow in ("ws", "os", "is"):
        verdict = ORACLE.verify(
            family, point(128, 128, dataflow, hbm_words=64), Shape(512, 1024, 1024), MACHINE
        )
        assert verdict.verified, verdict.detail


def test_a_design_over_the_budget_is_checked_scaled_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(family_module, "VERIFY_SECONDS", 1e-9)
    design = SystolicDesign(SystolicArray(3, 5), "ws", hbm=HbmLink(1, 2))
    plan = verify_plan(design, Shape(512, 1024, 1024))
    assert not plan.exact and plan.design == design
    assert {t.kind for t in tiles(design, plan.shape)} == {
        t.kind for t in tiles(design, Shape(512, 1024, 1024))
    }
    for dataflow in ("ws", "os", "is"):
        verdict = verify_design(
            SystolicDesign(SystolicArray(3, 5), dataflow, hbm=HbmLink(1, 2)), Shape(512, 1024, 1024)
        )
        assert (
            verdict.ok
            and verdict.level == SCALED
            and not verdict.verified
            and "scaled-down shape" in verdict.detail
        )


def test_describe_and_seeds() -> None:
    shape = Shape(32, 32, 32)
    text = ORACLE.report(FAMILY, point(map_rows=2), shape, MACHINE)
    assert "4x4 array" in text and "mapped on 2x4" in text and "cycles" in text
    seeds = FAMILY.seed_points(shape, MACHINE)
    assert point(8, 8, hbm_words=16) in seeds and {s["dataflow"] for s in seeds} == {
        "ws",
        "os",
        "is",
    }
    for seed in seeds:
        assert seed["rows"] == seed["cols"] and FAMILY.violation(seed, shape, MACHINE) == 0
        assert all(p.domain.contains(seed[p.name]) for p in FAMILY.params(shape, 8))


def test_bad_point() -> None:
    with pytest.raises(ValueError, match="dataflow"):
        ORACLE.evaluate(FAMILY, point(dataflow="rs"), Shape(4, 4, 4), MACHINE)
    with pytest.raises(ValueError, match="lacks"):
        ORACLE.evaluate(FAMILY, {"rows": 2}, Shape(4, 4, 4), MACHINE)
    with pytest.raises(ValueError, match="shadow"):
        ORACLE.evaluate(FAMILY, point(shadow="yes"), Shape(4, 4, 4), MACHINE)  # type: ignore[arg-type]


@settings(max_examples=examples(40), deadline=None)
@given(
    rows=st.integers(1, 5),
    cols=st.integers(1, 5),
    dataflow=st.sampled_from(["ws", "os", "is"]),
    shadow=st.booleans(),
    buffers=st.sampled_from([1, 2]),
    words=st.integers(1, 12),
    map_rows=st.integers(1, 6),
    map_cols=st.integers(1, 6),
    order=st.sampled_from(ORDERS),
    m=st.integers(1, 9),
    k=st.integers(1, 11),
    n=st.integers(1, 11),
)
def test_evaluate_cycles_are_verified_exactly(
    rows: int,
    cols: int,
    dataflow: str,
    shadow: bool,
    buffers: int,
    words: int,
    map_rows: int,
    map_cols: int,
    order: str,
    m: int,
    k: int,
    n: int,
) -> None:
    p = point(rows, cols, dataflow, shadow, buffers, words, map_rows, map_cols, order)
    shape = Shape(m, k, n)
    verdict = ORACLE.verify(FAMILY, p, shape, MACHINE)
    assert verdict.verified, verdict.detail
    assert str(ORACLE.evaluate(FAMILY, p, shape, MACHINE)["cycles"]) in verdict.detail
