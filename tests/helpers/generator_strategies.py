"""Hypothesis strategies shared by the generators', the engine's and the bounds' property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from simcore.ga1.generator import (
    BLOCK_ORDERS,
    INNER_ORDERS,
    K_DIRECTIONS,
    PARTITIONS,
    GeneralParams,
)
from simcore.ga1.generator.order import STRUCTURES
from simcore.ga1.generator.strips import STRIP_AXES, STRIP_ORDERS, StripParams


def general_params(
    block: int, tail: int, lookahead: int, ramp: int
) -> st.SearchStrategy[GeneralParams]:
    """Every field of GeneralParams, with block sizes, tail, lookahead and ramp up to the limits."""
    return st.builds(
        GeneralParams,
        bi=st.integers(1, block),
        bj=st.integers(1, block),
        partition=st.sampled_from(PARTITIONS),
        block_order=st.sampled_from(BLOCK_ORDERS),
        serpentine=st.booleans(),
        k_direction=st.sampled_from(K_DIRECTIONS),
        inner=st.sampled_from(INNER_ORDERS),
        tail=st.integers(0, tail),
        lookahead=st.integers(0, lookahead),
        store_first=st.booleans(),
        store_delay=st.integers(0, 3),
        structure=st.sampled_from(STRUCTURES),
        ramp=st.integers(0, ramp),
    )


def strip_params(
    reserve: int = 5, split: int = 6, tail: int = 4, lookahead: int = 40, protect: int = 40
) -> st.SearchStrategy[StripParams]:
    """Every field of StripParams, with reserve, split, tail, lookahead and protect up to the limits."""
    return st.builds(
        StripParams,
        axis=st.sampled_from(STRIP_AXES),
        reserve=st.integers(1, reserve),
        strip_order=st.sampled_from(STRIP_ORDERS),
        first_reverse=st.booleans(),
        partition=st.sampled_from(PARTITIONS),
        split=st.integers(0, split),
        flip=st.booleans(),
        tail=st.integers(0, tail),
        lookahead=st.integers(0, lookahead),
        store_first=st.booleans(),
        protect=st.integers(0, protect),
        store_delay=st.integers(0, 3),
    )


# Machines for the generators' tests: T and the timing constants (slots are chosen per test).
machine_params = st.fixed_dictionaries(
    {
        "T": st.sampled_from([4, 8]),
        "dma_setup": st.integers(0, 20),
        "dma_words_per_cycle": st.sampled_from([1, 4, 16, 64]),
        "mxu_cycles": st.integers(1, 16),
        "mxu_fill": st.integers(0, 12),
    }
)
