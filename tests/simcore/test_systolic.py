"""Systolic tiling: tiles, the chapter's figures, closed form == both cycle models, traffic."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic import (
    SCALESIM,
    Assumptions,
    HbmLink,
    Mapping,
    SystolicArray,
    SystolicDesign,
    Traffic,
    cycles,
    design_traffic,
    schedule,
    simulate_systolic,
    simulate_systolic_reference,
    tiles,
    traffic,
)
from simcore.systolic.closed_form import OutputTiming
from simcore.systolic.model import hbm_words, tile_count
from tests.helpers.examples import examples
from tests.helpers.systolic_strategies import both, designs, operands, shapes

ARRAY = SystolicArray(3, 3)
IN_SEQUENCE = Assumptions(shadow=False, folds="sequence")  # the chapter's single weight registers
SIX = Shape(6, 6, 6)


def ws(
    array: SystolicArray = ARRAY,
    assume: Assumptions = Assumptions(),
    hbm: HbmLink = HbmLink(),
    mapping: Mapping | None = None,
) -> SystolicDesign:
    return SystolicDesign(array, "ws", mapping, assume, hbm)


# --- tiles ----------------------------------------------------------------------------------


def test_ws_tile_order_is_column_tiles_outer_k_tiles_inner() -> None:
    cut = tiles(ws(SystolicArray(3, 4)), Shape(2, 7, 6))
    assert [(t.col0, t.row0, t.rows, t.cols) for t in cut] == [
        (0, 0, 3, 4),
        (0, 3, 3, 4),
        (0, 6, 1, 4),
        (4, 0, 3, 2),
        (4, 3, 3, 2),
        (4, 6, 1, 2),
    ]
    assert [t.row_fold for t in cut] == [0, 1, 2, 0, 1, 2] and [t.index for t in cut] == list(
        range(6)
    )
    row_outer = tiles(ws(SystolicArray(3, 4), mapping=Mapping(3, 4, "row-outer")), Shape(2, 7, 6))
    assert [(t.row0, t.col0) for t in row_outer] == [(0, 0), (0, 4), (3, 0), (3, 4), (6, 0), (6, 4)]


@pytest.mark.parametrize(("dataflow", "rows", "cols"), [("ws", 7, 6), ("is", 7, 2), ("os", 2, 6)])
def test_each_dataflow_puts_its_own_dimensions_on_the_array(
    dataflow: str, rows: int, cols: int
) -> None:
    cut = tiles(SystolicDesign(SystolicArray(3, 4), dataflow), Shape(2, 7, 6))
    assert (
        sum(t.rows for t in cut if t.col0 == 0) == rows
        and sum(t.cols for t in cut if t.row0 == 0) == cols
    )
    assert tile_count(SystolicDesign(SystolicArray(3, 4), dataflow), Shape(2, 7, 6)) == len(cut)


def test_padding_times_edge_tiles_as_the_whole_sub_array() -> None:
    cut = tiles(
        ws(SystolicArray(4, 4), Assumptions(edges="pad"), mapping=Mapping(3, 4)), Shape(1, 5, 6)
    )
    assert {(t.span_rows, t.span_cols) for t in cut} == {(3, 4)}
    assert [(t.rows, t.cols) for t in cut] == [(3, 4), (2, 4), (3, 2), (2, 2)]


# --- the chapter's figures -----------------------------------------------------------------


def test_golden_back_to_back_31_cycles() -> None:
    run = schedule(ws(), SIX)
    assert run.cycles == 31 and run.entries == ((0, 3), (3, 9), (9, 15), (15, 21))
    assert round(run.utilisation * 100) == 77
    a, b = operands(SIX, 7)
    assert both(ws(), a, b)[1] == 31


def test_golden_in_sequence_52_cycles() -> None:
    run = schedule(ws(assume=IN_SEQUENCE), SIX)
    assert run.cycles == 52 and round(run.utilisation * 100) == 46
    a, b = operands(SIX, 7)
    assert both(ws(assume=IN_SEQUENCE), a, b)[1] == 52


@pytest.mark.parametrize(("words", "buffers", "expected"), [(1, 1, 64), (1, 2, 49), (2, 2, 36)])
def test_golden_weight_fetch(words: int, buffers: int, expected: int) -> None:
    design = ws(hbm=HbmLink(words, buffers))
    run = schedule(design, SIX)
    assert run.cycles == expected == cycles(design, SIX)
    a, b = operands(SIX, 7)
    result = simulate_systolic_reference(design, a, b)
    assert result.cycles == expected and result.hbm_words == 36
    assert result.hbm_ends == tuple(t.fetch_end for t in run.timings)
    assert both(design, a, b)[1] == expected


def test_fetch_at_1_5_words_per_cycle_hides_all_but_the_first() -> None:
    # The chapter: kn / max(M, k) = 9 / 6 = 1.5 words per cycle hides every fetch after the first.
    assert schedule(ws(hbm=HbmLink(1.5, 2)), SIX).cycles == 31 + HbmLink(1.5).cycles(9)


def test_decode_case_m1_back_to_back_beats_in_sequence() -> None:
    # Figures withheld by the chapter, produced by the model: 17 vs 32 cycles.
    one = Shape(1, 6, 6)
    b2b, seq = schedule(ws(), one), schedule(ws(assume=IN_SEQUENCE), one)
    assert (b2b.cycles, seq.cycles) == (17, 32)
    assert [t.stream for t in b2b.timings] == [3, 6, 9, 12]  # the gap between tiles is k, not M


def test_weights_on_chip_and_m_at_least_k_costs_m_per_tile() -> None:
    starts = [t.stream for t in schedule(ws(SystolicArray(4, 4)), Shape(10, 16, 8)).timings]
    assert all(later - earlier == 10 for earlier, later in zip(starts, starts[1:]))


def test_total_is_the_latest_tile_end_not_always_the_last_tiles() -> None:
    run = schedule(ws(SystolicArray(4, 4)), Shape(1, 5, 4))  # a short edge tile after a full one
    assert [t.end for t in run.timings] == [11, 9] and run.cycles == 11


@pytest.mark.parametrize(("dataflow", "per_tile"), [("ws", 6), ("is", 6), ("os", 6)])
def test_every_dataflow_streams_back_to_back_on_the_chapter_example(
    dataflow: str, per_tile: int
) -> None:
    run = schedule(SystolicDesign(ARRAY, dataflow), SIX)
    starts = [t.stream for t in run.timings]
    assert all(b - a == per_tile for a, b in zip(starts, starts[1:]))


def test_os_drain_shadow_and_folds() -> None:
    """os per tile: max(K, m) with shadow registers, K + m - 1 without, K without a drain."""
    shape = Shape(8, 5, 4)  # two row tiles of m = 4 on a 4 x 4 array, K = 5
    per_tile = {}
    for name, assume in {
        "shadow": Assumptions(),
        "no shadow": Assumptions(shadow=False),
        "free drain": Assumptions(drain=False),
        "scalesim": SCALESIM,
    }.items():
        run = schedule(SystolicDesign(SystolicArray(4, 4), "os", None, assume), shape)
        per_tile[name] = run.timings[1].stream - run.timings[0].stream
    assert per_tile == {"shadow": 5, "no shadow": 8, "free drain": 5, "scalesim": 5 + 4 + 4 - 2}
    drained = schedule(SystolicDesign(SystolicArray(4, 4), "os"), shape).timings[0]
    assert (
        isinstance(drained, OutputTiming)
        and drained.drain == 0 + 5 + 4 - 1
        and drained.end == drained.drain + 4 + 4 - 1
    )


def test_os_writes_each_result_tile_back_after_computing_it() -> None:
    """The os HBM link carries results out: a tile's write-back starts once all its results have
    left the array, never before the tile is computed, and the run ends with the last one."""
    design = SystolicDesign(ARRAY, "os", None, Assumptions(), HbmLink(1, 2))
    run = schedule(design, SIX)
    for t in run.timings:
        assert (
            isinstance(t, OutputTiming)
            and t.writeback_start is not None
            and t.writeback_end is not None
        )
        assert t.stream < t.complete <= t.ready <= t.writeback_start < t.writeback_end == t.end
    assert run.cycles == run.timings[-1].writeback_end == 9 * 4 + run.timings[0].ready
    a, b = operands(SIX)
    assert both(design, a, b)[3] == tuple(t.writeback_end for t in run.timings)


# --- closed form == cycle models ------------------------------------------------------------


@settings(max_examples=examples(250), deadline=None)
@given(design=designs(), shape=shapes(), seed=st.integers(0, 2**16))
def test_closed_form_equals_both_cycle_models(
    design: SystolicDesign, shape: Shape, seed: int
) -> None:
    a, b = operands(shape, seed)
    run = schedule(design, shape)
    status, measured, moved, hbm_ends, hbm, product = both(design, a, b)
    assert status == "ok" and measured == run.cycles == cycles(design, shape)
    np.testing.assert_array_equal(np.array(product), a @ b)
    assert moved == design_traffic(design, shape) and hbm == hbm_words(design, shape)
    if not design.hbm.on_chip:
        attr = "writeback_end" if design.dataflow == "os" else "fetch_end"
        assert hbm_ends == tuple(getattr(t, attr) for t in run.timings)


@settings(max_examples=examples(300), deadline=None)
@given(design=designs(max_side=6), shape=shapes(40, 60, 60))
def test_the_fast_cycle_count_equals_the_tile_by_tile_walk(
    design: SystolicDesign, shape: Shape
) -> None:
    assert cycles(design, shape) == schedule(design, shape).cycles


@pytest.mark.parametrize("dataflow", ["ws", "os", "is"])
@pytest.mark.parametrize(
    "shape",
    [Shape(1, 9, 10), Shape(10, 9, 1), Shape(3, 2, 5), Shape(9, 1, 9)],
    ids=["M=1", "N=1", "K,M,N-below-the-array", "K=1"],
)
@pytest.mark.parametrize(
    "hbm", [HbmLink(), HbmLink(1, 1), HbmLink(2, 2)], ids=["on-chip", "1-buffer", "2-buffers"]
)
@pytest.mark.parametrize("edges", ["bypass", "pad"])
def test_dimensions_below_the_array_and_edge_tiles(
    dataflow: str, shape: Shape, hbm: HbmLink, edges: str
) -> None:
    design = SystolicDesign(SystolicArray(4, 4), dataflow, None, Assumptions(edges=edges), hbm)
    a, b = operands(shape, 5)
    status, measured, moved, *_ = both(design, a, b)
    assert (status, measured, moved) == (
        "ok",
        schedule(design, shape).cycles,
        design_traffic(design, shape),
    )


def test_large_array_matches_numpy() -> None:
    shape = Shape(64, 64, 64)
    a, b = operands(shape, 3)
    for dataflow in ("ws", "os", "is"):
        design = SystolicDesign(SystolicArray(32, 32), dataflow)
        result = simulate_systolic_reference(design, a, b)
        np.testing.assert_array_equal(result.c, a @ b)
        assert result.cycles == cycles(design, shape) == simulate_systolic(design, a, b).cycles


def test_float_operands_match_numpy() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 4))
    for dataflow in ("ws", "os", "is"):
        design = SystolicDesign(SystolicArray(2, 3), dataflow)
        np.testing.assert_allclose(simulate_systolic_reference(design, a, b).c, a @ b)
        np.testing.assert_allclose(simulate_systolic(design, a, b).c, a @ b)


# --- traffic --------------------------------------------------------------------------------


@pytest.mark.parametrize(("r", "c", "m", "k", "n"), [(8, 8, 512, 1024, 1024), (4, 2, 8, 8, 4)])
def test_traffic_formulas_when_dividing_evenly(r: int, c: int, m: int, k: int, n: int) -> None:
    array = SystolicArray(r, c)
    w = traffic(array, m, k, n, "ws")
    assert (w.a_reads, w.b_reads) == (m * k * n // c, k * n)
    assert w.psum_writes + w.c_writes == m * n * k // r and w.psum_readbacks == m * n * (k // r - 1)
    assert w.words_per_mac_exact == Fraction(1, c) + Fraction(1, m) + Fraction(2, r) - Fraction(
        1, k
    )
    o = traffic(array, m, k, n, "os")
    assert (o.a_reads, o.b_reads, o.c_writes) == (m * k * n // c, k * n * m // r, m * n)
    assert o.psum_writes == o.psum_readbacks == 0
    i = traffic(array, m, k, n, "is")
    assert (i.a_reads, i.b_reads) == (m * k, k * n * m // c) and i.psum_writes == w.psum_writes


def test_traffic_rounds_edge_tiles_up() -> None:
    array = SystolicArray(4, 3)
    assert traffic(array, 5, 9, 7, "ws") == Traffic("ws", 315, 5 * 9 * 3, 63, 70, 70, 35)
    assert traffic(array, 5, 9, 7, "os") == Traffic("os", 315, 5 * 9 * 3, 63 * 2, 0, 0, 35)
    assert traffic(array, 5, 9, 7, "is") == Traffic("is", 315, 45, 63 * 2, 70, 70, 35)
    assert traffic(Mapping(4, 3), 5, 9, 7, "ws") == traffic(array, 5, 9, 7, "ws")


def test_withheld_words_per_mac_figures() -> None:
    small, big = SystolicArray(8, 8), SystolicArray(256, 256)
    figures = {
        (name, df): traffic(arr, 512, 1024, 1024, df).words_per_mac_exact
        for name, arr in (("8x8", small), ("256x256", big))
        for df in ("ws", "os")
    }
    assert figures == {
        ("8x8", "ws"): Fraction(385, 1024),  # 0.376
        ("8x8", "os"): Fraction(257, 1024),  # 0.251
        ("256x256", "ws"): Fraction(13, 1024),  # 0.0127
        ("256x256", "os"): Fraction(9, 1024),  # 0.00879
    }
    # Decode-like M = 8: every weight serves only 8 rows.
    assert traffic(big, 8, 1024, 1024, "ws").words_per_mac_exact == Fraction(139, 1024)  # 0.136


def test_padding_moves_no_extra_words() -> None:
    shape = Shape(5, 9, 7)
    for dataflow in ("ws", "os", "is"):
        padded = SystolicDesign(SystolicArray(4, 3), dataflow, None, Assumptions(edges="pad"))
        a, b = operands(shape)
        assert simulate_systolic_reference(padded, a, b).traffic == design_traffic(padded, shape)


# --- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(("rows", "cols"), [(0, 3), (3, -1), (2.0, 2), (True, 2)])
def test_array_rejects_bad_sizes(rows: object, cols: object) -> None:
    with pytest.raises(ValueError, match="array (rows|cols)"):
        SystolicArray(rows, cols)  # type: ignore[arg-type]


@pytest.mark.parametrize(("w", "buffers"), [(0, 1), (-1.5, 2), (float("inf"), 2), (1, 3), ("1", 2)])
def test_hbm_link_rejects_bad_settings(w: object, buffers: int) -> None:
    with pytest.raises(ValueError):
        HbmLink(w, buffers)  # type: ignore[arg-type]


def test_bad_designs_are_rejected() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        SystolicDesign(ARRAY, "ws", Mapping(4, 3))
    with pytest.raises(ValueError, match="dataflow"):
        SystolicDesign(ARRAY, "rs")
    with pytest.raises(ValueError, match="tile order"):
        Mapping(2, 2, "diagonal")
    with pytest.raises(ValueError, match="edges"):
        Assumptions(edges="crop")
    with pytest.raises(ValueError, match="folds"):
        Assumptions(folds="parallel")
    with pytest.raises(ValueError, match="shadow"):
        Assumptions(shadow=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dataflow"):
        traffic(ARRAY, 3, 3, 3, "rs")


def test_bad_operands_and_schedules_are_rejected() -> None:
    design = ws()
    with pytest.raises(ValueError, match="inner dimensions"):
        simulate_systolic(design, np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="2-D"):
        simulate_systolic(design, np.ones(3), np.ones((3, 2)))
    with pytest.raises(ValueError, match="4 tiles"):
        simulate_systolic(design, np.ones((6, 6)), np.ones((6, 6)), [(0, 3)])
    with pytest.raises(ValueError, match="another design or shape"):
        simulate_systolic(design, np.ones((5, 6)), np.ones((6, 6)), schedule(design, SIX))
    with pytest.raises(ValueError, match="must not be negative"):
        simulate_systolic_reference(
            design, np.ones((6, 6)), np.ones((6, 6)), [(0, -1), (3, 9), (9, 15), (15, 21)]
        )
    with pytest.raises(ValueError, match="tile order"):
        simulate_systolic(
            design, np.ones((6, 6)), np.ones((6, 6)), [(3, 9), (0, 3), (9, 15), (15, 21)]
        )
    with pytest.raises(ValueError, match=r"\(A stream, B stream, drain\)"):
        simulate_systolic(
            SystolicDesign(ARRAY, "os"), np.ones((6, 6)), np.ones((6, 6)), [(0, 0)] * 4
        )
    with pytest.raises(TypeError, match="SystolicDesign"):
        simulate_systolic(ARRAY, np.ones((6, 6)), np.ones((6, 6)))  # type: ignore[arg-type]
