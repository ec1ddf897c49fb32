"""The cycle models stop at the first PE that would see the wrong data: every stream of the
closed-form schedule one cycle early fails, naming the PE and the cycle, and the event engine
finds the same first failure as the cycle-stepped reference engine for any schedule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic import (
    Assumptions,
    HbmLink,
    SystolicArray,
    SystolicDesign,
    SystolicTimingError,
    schedule,
    simulate_systolic,
    simulate_systolic_reference,
)
from tests.helpers.examples import examples
from tests.helpers.systolic_strategies import both, designs, operands, shapes

ARRAY = SystolicArray(3, 3)
SIX = Shape(6, 6, 6)
ENGINES = pytest.mark.parametrize(
    "engine", [simulate_systolic, simulate_systolic_reference], ids=["events", "reference"]
)


def early(
    design: SystolicDesign, shape: Shape, tile: int, stream: int, by: int = 1
) -> list[list[int]]:
    entries = [list(e) for e in schedule(design, shape).entries]
    entries[tile][stream] -= by
    return entries


# --- each stream one cycle early, by hand ----------------------------------------------------


@ENGINES
def test_ws_load_one_cycle_early_overwrites_a_shadow_before_its_swap(engine: object) -> None:
    design = SystolicDesign(ARRAY, "ws")
    a, b = operands(SIX, 7)
    with pytest.raises(
        SystolicTimingError, match=r"^PE \(0, 0\), cycle 9: the weight of tile 1 .* overwritten"
    ) as err:
        engine(design, a, b, early(design, SIX, 2, 0))  # type: ignore[operator]
    assert (err.value.pe, err.value.cycle, err.value.kind) == ((0, 0), 9, "operand")


@ENGINES
def test_ws_stream_one_cycle_early_collides_with_the_previous_tile(engine: object) -> None:
    design = SystolicDesign(ARRAY, "ws")
    a, b = operands(SIX, 7)
    with pytest.raises(SystolicTimingError, match=r"^PE \(0, 0\), cycle 14: two tiles feed row 0"):
        engine(design, a, b, early(design, SIX, 2, 1))  # type: ignore[operator]


@ENGINES
def test_ws_short_stream_one_cycle_early_beats_its_weights(engine: object) -> None:
    design, shape = SystolicDesign(ARRAY, "ws"), Shape(1, 6, 6)
    a, b = operands(shape)
    stream = schedule(design, shape).entries[1][1]
    with pytest.raises(
        SystolicTimingError,
        match=rf"^PE \(0, 0\), cycle {stream - 1}: the weight of tile 1 .* not arrived",
    ):
        engine(design, a, b, early(design, shape, 1, 1))  # type: ignore[operator]


@ENGINES
def test_ws_load_before_its_fetch_ends(engine: object) -> None:
    design = SystolicDesign(ARRAY, "ws", None, Assumptions(), HbmLink(1, 2))
    a, b = operands(SIX, 7)
    with pytest.raises(
        SystolicTimingError, match=r"^PE \(0, 0\), cycle 17: weights of tile 1 .*ends in cycle 18"
    ):
        engine(design, a, b, early(design, SIX, 1, 0))  # type: ignore[operator]


@ENGINES
def test_no_shadow_load_over_weights_in_use(engine: object) -> None:
    """Without shadow registers, folds overlapped: the load follows the last product at PE (0, 0)."""
    design = SystolicDesign(ARRAY, "ws", None, Assumptions(shadow=False))
    a, b = operands(SIX, 7)
    entries = schedule(design, SIX).entries
    assert entries[1][0] == entries[0][1] + 6 - 1
    with pytest.raises(
        SystolicTimingError, match=rf"^PE \(0, 0\), cycle {entries[1][0]}: .*overwritten"
    ):
        engine(design, a, b, early(design, SIX, 1, 0))  # type: ignore[operator]


@ENGINES
def test_folds_in_sequence_is_a_barrier(engine: object) -> None:
    design = SystolicDesign(ARRAY, "ws", None, Assumptions(shadow=False, folds="sequence"))
    a, b = operands(SIX, 7)
    with pytest.raises(
        SystolicTimingError,
        match=r"^PE \(0, 0\), cycle 12: tile 1 enters before tile 0 has finished",
    ):
        engine(design, a, b, early(design, SIX, 1, 0))  # type: ignore[operator]


@ENGINES
def test_is_streams_b_past_stationary_inputs(engine: object) -> None:
    design = SystolicDesign(ARRAY, "is")
    a, b = operands(SIX, 7)
    with pytest.raises(
        SystolicTimingError, match=r"^PE \(0, 0\), cycle 9: the input of tile 1 .* overwritten"
    ):
        engine(design, a, b, early(design, SIX, 2, 0))  # type: ignore[operator]


@ENGINES
@pytest.mark.parametrize(
    ("stream", "pattern"), [(0, "A of tile 1 .* meets no B"), (1, "B of tile 1 .* meets no A")]
)
def test_os_a_or_b_one_cycle_early_is_out_of_step(
    engine: object, stream: int, pattern: str
) -> None:
    """K = 2 below m = 3: tile 1 waits for tile 0's drain, so one early does not collide."""
    design, shape = SystolicDesign(ARRAY, "os", None, Assumptions(shadow=False)), Shape(6, 2, 3)
    a, b = operands(shape, 7)
    start = schedule(design, shape).entries[1][0]
    with pytest.raises(
        SystolicTimingError, match=rf"^PE \(0, 0\), cycle {start - 1}: {pattern}"
    ) as err:
        engine(design, a, b, early(design, shape, 1, stream))  # type: ignore[operator]
    assert err.value.kind == "step"


@ENGINES
def test_os_drain_one_cycle_early_reaches_an_unfinished_result(engine: object) -> None:
    design = SystolicDesign(ARRAY, "os")
    a, b = operands(SIX, 7)
    drain = schedule(design, SIX).entries[0][2]
    with pytest.raises(
        SystolicTimingError, match=rf"^PE \(2, 0\), cycle {drain - 1}: the drain of tile 0 reaches"
    ):
        engine(design, a, b, early(design, SIX, 0, 2))  # type: ignore[operator]


@ENGINES
@pytest.mark.parametrize(
    ("shadow", "register"), [(False, "accumulator"), (True, "shadow register")]
)
def test_os_tile_one_cycle_early_finds_its_register_full(
    engine: object, shadow: bool, register: str
) -> None:
    """K = 2 below m = 3: the next tile waits for the drain, not for its stream."""
    design, shape = SystolicDesign(ARRAY, "os", None, Assumptions(shadow=shadow)), Shape(6, 2, 3)
    a, b = operands(shape, 1)
    entries = [list(e) for e in schedule(design, shape).entries]
    entries[1][0] -= 1
    entries[1][1] -= 1
    with pytest.raises(
        SystolicTimingError, match=rf"^PE \(0, 0\), cycle \d+: the {register} still holds tile 0's"
    ):
        engine(design, a, b, entries)  # type: ignore[operator]


@ENGINES
def test_os_write_back_needs_a_free_output_buffer(engine: object) -> None:
    design = SystolicDesign(ARRAY, "os", None, Assumptions(), HbmLink(1, 1))
    a, b = operands(SIX, 7)
    with pytest.raises(
        SystolicTimingError, match=r"the output buffer of tile 1 still holds tile 0's results"
    ):
        engine(design, a, b, early(design, SIX, 1, 2))  # type: ignore[operator]


# --- every stream one cycle early, any design -------------------------------------------------


@pytest.mark.parametrize("dataflow", ["ws", "os", "is"])
@settings(max_examples=examples(80), deadline=None)
@given(data=st.data(), shape=shapes(6, 7, 7))
def test_every_stream_one_cycle_early_names_pe_and_cycle(
    dataflow: str, data: st.DataObject, shape: Shape
) -> None:
    design = data.draw(designs(4, (dataflow,)))
    entries = schedule(design, shape).entries
    movable = [
        (j, s)
        for j, e in enumerate(entries)
        for s, v in enumerate(e)
        if v > 0 and (j == 0 or entries[j - 1][s] <= v - 1)
    ]
    if not movable:
        return
    j, s = data.draw(st.sampled_from(movable))
    a, b = operands(shape)
    status, pe, cycle, kind, message = both(design, a, b, early(design, shape, j, s))
    assert status == "error" and message.startswith(f"PE ({pe[0]}, {pe[1]}), cycle {cycle}: ")


# --- the event engine agrees with the reference engine on any schedule ---------------------------


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data(), design=designs(4), shape=shapes(6, 7, 7))
def test_event_engine_equals_reference_engine(
    data: st.DataObject, design: SystolicDesign, shape: Shape
) -> None:
    entries = [list(e) for e in schedule(design, shape).entries]
    for _ in range(data.draw(st.integers(1, 4))):  # move streams earlier or later, keep tile order
        j = data.draw(st.integers(0, len(entries) - 1))
        s = data.draw(st.integers(0, len(entries[0]) - 1))
        entries[j][s] = max(0, entries[j][s] + data.draw(st.integers(-4, 4)))
    for s in range(len(entries[0])):
        for j in range(1, len(entries)):
            entries[j][s] = max(entries[j][s], entries[j - 1][s])
    a, b = operands(shape, data.draw(st.integers(0, 99)))
    result = both(design, a, b, entries)
    if result[0] == "ok":
        np.testing.assert_array_equal(np.array(result[-1]), a @ b)
