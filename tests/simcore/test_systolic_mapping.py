"""The mapping is a choice: the best sub-array and tile order, so a bigger array is never slower."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic import Mapping, SystolicArray, SystolicDesign, cycles
from simcore.systolic.mapping import MAX_SUBARRAYS, best_mapping, lower_bounds
from simcore.systolic.model import ORDERS
from tests.helpers.examples import examples
from tests.helpers.systolic_strategies import assumptions, links, shapes


def design(rows: int, cols: int, dataflow: str = "ws", assume=None, hbm=None) -> SystolicDesign:  # type: ignore[no-untyped-def]
    kwargs = {k: v for k, v in (("assumptions", assume), ("hbm", hbm)) if v is not None}
    return SystolicDesign(SystolicArray(rows, cols), dataflow, **kwargs)


@pytest.mark.parametrize(
    ("shape", "small", "big"),
    [
        (Shape(1, 6, 6), (4, 4), (6, 6)),  # the whole 6x6 array: 17 cycles, the 4x4: 15
        (
            Shape(128, 256, 64),
            (128, 128),
            (256, 256),
        ),  # the whole 256x256 array: 702, the 128x128: 574
    ],
)
def test_the_issue_examples_no_longer_get_slower(
    shape: Shape, small: tuple[int, int], big: tuple[int, int]
) -> None:
    whole_small, whole_big = cycles(design(*small), shape), cycles(design(*big), shape)
    assert whole_big > whole_small  # mapping the whole array is the slower choice here
    assert (
        best_mapping(design(*big), shape).cycles
        <= best_mapping(design(*small), shape).cycles
        <= whole_small
    )


@settings(max_examples=examples(120), deadline=None)
@given(
    shape=shapes(12, 20, 20),
    rows=st.integers(1, 8),
    cols=st.integers(1, 8),
    grow_r=st.integers(0, 6),
    grow_c=st.integers(0, 6),
    dataflow=st.sampled_from(["ws", "os", "is"]),
    assume=assumptions,
    hbm=links,
)
def test_a_bigger_array_is_never_slower(
    shape: Shape, rows: int, cols: int, grow_r: int, grow_c: int, dataflow: str, assume, hbm
) -> None:  # type: ignore[no-untyped-def]
    small = best_mapping(design(rows, cols, dataflow, assume, hbm), shape)
    big = best_mapping(design(rows + grow_r, cols + grow_c, dataflow, assume, hbm), shape)
    assert big.cycles <= small.cycles


@settings(max_examples=examples(80), deadline=None)
@given(
    shape=shapes(10, 14, 14),
    rows=st.integers(1, 6),
    cols=st.integers(1, 6),
    dataflow=st.sampled_from(["ws", "os", "is"]),
    assume=assumptions,
    hbm=links,
)
def test_the_pruned_search_finds_the_exhaustive_best(
    shape: Shape, rows: int, cols: int, dataflow: str, assume, hbm
) -> None:  # type: ignore[no-untyped-def]
    base = design(rows, cols, dataflow, assume, hbm)
    every = {
        Mapping(r, c, o): cycles(base.with_mapping(Mapping(r, c, o)), shape)
        for r, c, o in itertools.product(range(1, rows + 1), range(1, cols + 1), ORDERS)
    }
    choice = best_mapping(base, shape)
    assert choice.cycles == min(every.values()) == every[choice.mapping]
    rs, cs, bounds = lower_bounds(base, shape)
    for r, c, bound in zip(rs, cs, bounds):  # the bound never exceeds a real schedule
        assert bound <= min(every[Mapping(int(r), int(c), o)] for o in ORDERS)


def test_restricted_searches_and_ties() -> None:
    shape = Shape(128, 256, 64)
    base = design(256, 256)
    assert best_mapping(base, shape, rows=256, cols=64).mapping.rows == 256
    assert best_mapping(base, shape, orders=("row-outer",)).mapping.order == "row-outer"
    # Same cycles and words: the larger sub-array wins, deterministically.
    first, again = best_mapping(base, shape), best_mapping(base, shape)
    assert first == again and first.mapping.rows * first.mapping.cols >= 128 * 64


def test_too_many_sub_arrays_is_an_error() -> None:
    side = 4 * int(MAX_SUBARRAYS**0.5)
    with pytest.raises(ValueError, match="too many to search"):
        best_mapping(design(side, side), Shape(side, side, side))
    with pytest.raises(ValueError, match="exceeds"):
        best_mapping(design(4, 4), Shape(8, 8, 8), rows=5)
