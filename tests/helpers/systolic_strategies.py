"""Hypothesis strategies and helpers shared by the systolic model's tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic import (
    DATAFLOWS,
    Assumptions,
    HbmLink,
    Mapping,
    SystolicArray,
    SystolicDesign,
    SystolicTimingError,
    simulate_systolic,
    simulate_systolic_reference,
)
from simcore.systolic.model import EDGES, FOLDS, ORDERS

assumptions = st.builds(
    Assumptions, st.booleans(), st.sampled_from(EDGES), st.booleans(), st.sampled_from(FOLDS)
)
links = st.one_of(
    st.just(HbmLink()),
    st.builds(HbmLink, st.sampled_from([1, 2, 3, 1.5, 0.5]), st.sampled_from([1, 2])),
)


@st.composite
def designs(
    draw: st.DrawFn, max_side: int = 5, dataflows: tuple[str, ...] = DATAFLOWS
) -> SystolicDesign:
    """Any design on an array of at most max_side x max_side: mapping, assumptions, HBM link."""
    array = SystolicArray(draw(st.integers(1, max_side)), draw(st.integers(1, max_side)))
    mapping = Mapping(
        draw(st.integers(1, array.rows)),
        draw(st.integers(1, array.cols)),
        draw(st.sampled_from(ORDERS)),
    )
    return SystolicDesign(
        array, draw(st.sampled_from(dataflows)), mapping, draw(assumptions), draw(links)
    )


def shapes(m: int = 7, k: int = 8, n: int = 8) -> st.SearchStrategy[Shape]:
    return st.builds(Shape, st.integers(1, m), st.integers(1, k), st.integers(1, n))


def operands(shape: Shape, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (
        rng.integers(-9, 10, size=(shape.m, shape.k), dtype=np.int64),
        rng.integers(-9, 10, size=(shape.k, shape.n), dtype=np.int64),
    )


def outcome(
    engine: object, design: SystolicDesign, a: np.ndarray, b: np.ndarray, entries: object = None
) -> tuple:
    """What an engine says about a run: its figures, or where and why it stopped."""
    try:
        r = engine(design, a, b, entries)  # type: ignore[operator]
    except SystolicTimingError as exc:
        return ("error", exc.pe, exc.cycle, exc.kind, str(exc))
    return ("ok", r.cycles, r.traffic, r.hbm_ends, r.hbm_words, r.c.tolist())


def both(design: SystolicDesign, a: np.ndarray, b: np.ndarray, entries: object = None) -> tuple:
    """The event engine's outcome, asserted equal to the reference engine's."""
    fast = outcome(simulate_systolic, design, a, b, entries)
    slow = outcome(simulate_systolic_reference, design, a, b, entries)
    assert fast == slow, (design, entries, fast[:5], slow[:5])
    return fast
