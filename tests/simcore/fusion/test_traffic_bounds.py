"""The traffic lower bounds of products with a bounded fast memory: the segment bound for an
output consumed on chip is a valid bound on runs that exist (it never exceeds the traffic of a
blocked run, which forms its products in segments as the proof counts them), shrinks as the
memory grows, and is zero when everything fits."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from simcore.fusion.traffic import (
    consumed_product_traffic,
    segment_products,
    stored_product_traffic,
)


def blocked_traffic(m: int, n: int, k: int, b: int) -> int:
    """Words a b x b output-block run moves (A and B streamed per block, C stored once); its
    fast memory holds a b x b block of C, a row of A's block and a column of B's: b^2 + 2 b."""
    blocks = math.ceil(m / b) * math.ceil(n / b)
    return blocks * (b * k + k * b) + m * n


@given(
    m=st.integers(1, 400),
    n=st.integers(1, 400),
    k=st.integers(1, 400),
    b=st.integers(1, 40),
)
def test_bounds_never_exceed_a_real_runs_traffic(m: int, n: int, k: int, b: int) -> None:
    capacity = b * b + 2 * b
    real = blocked_traffic(m, n, k, b)
    assert consumed_product_traffic(m * n * k, k, capacity) <= real
    assert stored_product_traffic(m, n, k, capacity) <= real


@given(products=st.integers(1, 10**12), k=st.integers(1, 10**4), s=st.integers(1, 10**6))
def test_the_segment_bound_shrinks_as_the_memory_grows(products: int, k: int, s: int) -> None:
    assert (
        consumed_product_traffic(products, k, 2 * s)
        <= 2 * consumed_product_traffic(products, k, s) + 2 * s
    )
    assert segment_products(k, 2 * s) >= segment_products(k, s)


def test_nothing_is_forced_when_a_segment_holds_every_product() -> None:
    assert consumed_product_traffic(1000, 10, 1000) == 0
    assert consumed_product_traffic(0, 10, 5) == 0


def test_a_small_memory_forces_traffic() -> None:
    # 2048 x 4096 x 11008 with 16384 words: at least tens of millions of words move
    assert consumed_product_traffic(2048 * 4096 * 11008, 4096, 16384) > 10**8
