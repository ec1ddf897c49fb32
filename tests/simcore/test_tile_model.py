"""Analytic matmul tile model: the reference's golden value and one test per member family."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.tile_model import DERIVED_MEMBERS, MatmulTile
from tests.helpers.examples import examples


def _fp16(size: int = 4096, tile: int = 128, double_buffered: bool = False) -> MatmulTile:
    return MatmulTile(size, size, size, tile, tile, tile, 2, 4, double_buffered)


def test_golden_4096_fp16_tile_128_has_intensity_64() -> None:
    assert _fp16().tile_intensity == pytest.approx(64)


def test_work() -> None:
    t = MatmulTile(
        m=3, n=5, k=7, tile_m=2, tile_n=2, tile_k=4, operand_bytes=2, accumulator_bytes=4
    )
    assert t.macs == 105
    assert t.flops == 210


def test_tile_counts_round_edges_up() -> None:
    t = MatmulTile(
        m=5, n=9, k=10, tile_m=2, tile_n=4, tile_k=3, operand_bytes=1, accumulator_bytes=4
    )
    assert (t.tiles_m, t.tiles_n, t.tiles_k) == (3, 3, 4)
    assert t.output_tiles == 9
    assert t.tile_products == 36


def test_tile_product_counts_padding_as_work() -> None:
    t = MatmulTile(
        m=5, n=9, k=10, tile_m=2, tile_n=4, tile_k=3, operand_bytes=2, accumulator_bytes=4
    )
    assert t.tile_product_flops == 2 * 2 * 4 * 3
    assert t.tile_product_bytes == (2 * 3 + 3 * 4) * 2
    assert t.tile_products * t.tile_product_flops >= t.flops


def test_intensities() -> None:
    t = _fp16()
    assert t.unblocked_intensity == pytest.approx(0.5)
    assert t.compulsory_intensity == pytest.approx(2 * 4096**3 / (3 * 4096**2 * 2))
    # (2 / b) T_M T_N / (T_M + T_N), independent of T_K.
    rect = MatmulTile(64, 64, 64, 16, 48, 7, 4, 4)
    assert rect.tile_intensity == pytest.approx((2 / 4) * 16 * 48 / (16 + 48))


@pytest.mark.parametrize("double_buffered", [False, True])
def test_footprint_and_fits(double_buffered: bool) -> None:
    t = _fp16(double_buffered=double_buffered)
    copies = 2 if double_buffered else 1
    assert t.buffer_copies == copies
    assert t.a_tile_bytes == t.b_tile_bytes == copies * 128 * 128 * 2
    assert t.accumulator_tile_bytes == 128 * 128 * 4
    assert t.operand_tile_bytes == t.a_tile_bytes + t.b_tile_bytes
    assert t.live_bytes == t.operand_tile_bytes + t.accumulator_tile_bytes
    assert t.fits(t.live_bytes)  # equality is feasible
    assert not t.fits(t.live_bytes - 1)
    if not double_buffered:  # 2 T_M T_K + 2 T_K T_N + 4 T_M T_N for fp16 operands, fp32 sums
        assert t.live_bytes == 2 * 128 * 128 + 2 * 128 * 128 + 4 * 128 * 128


def test_matrix_sizes() -> None:
    t = MatmulTile(
        m=3, n=5, k=7, tile_m=2, tile_n=2, tile_k=4, operand_bytes=2, accumulator_bytes=4
    )
    assert (t.a_elements, t.b_elements, t.c_elements) == (21, 35, 15)
    assert t.a_bytes == 42


def test_tiled_moves() -> None:
    t = MatmulTile(
        m=5, n=9, k=10, tile_m=2, tile_n=4, tile_k=3, operand_bytes=2, accumulator_bytes=4
    )
    assert t.a_moves == 50 * 3
    assert t.b_moves == 90 * 3
    assert t.tiled_moves == 150 + 270 + 45
    assert t.global_loads_per_mac == pytest.approx(1 / 4 + 1 / 2)


def test_single_cell_loop_orders() -> None:
    t = MatmulTile(
        m=3, n=5, k=7, tile_m=1, tile_n=1, tile_k=1, operand_bytes=2, accumulator_bytes=4
    )
    assert t.partial_sum_moves == 210
    assert t.a_stationary_moves == 21 + 105 + 210
    assert t.b_stationary_moves == 35 + 105 + 210
    assert t.output_stationary_moves == 210 + 15


def test_row_b_reads() -> None:
    t = MatmulTile(
        m=4, n=4, k=4, tile_m=2, tile_n=2, tile_k=2, operand_bytes=1, accumulator_bytes=4
    )
    assert t.row_b_reads(4) == 16
    assert t.row_b_reads(3) == 21  # integer division, as in the reference
    with pytest.raises(ValueError, match="cells"):
        t.row_b_reads(0)


def test_as_dict_lists_every_member() -> None:
    t = _fp16(256, 64)
    properties = {name for name, v in vars(MatmulTile).items() if isinstance(v, property)}
    assert properties == set(DERIVED_MEMBERS)
    d = t.as_dict()
    assert set(d) == set(DERIVED_MEMBERS) | {
        "m",
        "n",
        "k",
        "tile_m",
        "tile_n",
        "tile_k",
        "operand_bytes",
        "accumulator_bytes",
        "double_buffered",
    }
    assert all(d[name] == getattr(t, name) for name in DERIVED_MEMBERS)
    full = t.as_dict(capacity=10**6, cells=8)
    assert full["fits"] is True and full["row_b_reads"] == t.macs // 8


@pytest.mark.parametrize(
    "bad",
    [{"m": 0}, {"tile_k": -2}, {"operand_bytes": 1.5}, {"n": True}, {"double_buffered": 1}],
)
def test_validation(bad: dict[str, object]) -> None:
    args: dict[str, object] = dict(
        m=4, n=4, k=4, tile_m=2, tile_n=2, tile_k=2, operand_bytes=2, accumulator_bytes=4
    )
    args.update(bad)
    with pytest.raises(ValueError, match=next(iter(bad))):
        MatmulTile(**args)  # type: ignore[arg-type]


@settings(max_examples=examples(100), deadline=None)
@given(
    m=st.integers(1, 300),
    n=st.integers(1, 300),
    k=st.integers(1, 300),
    tm=st.integers(1, 64),
    tn=st.integers(1, 64),
    tk=st.integers(1, 64),
    b=st.sampled_from([1, 2, 4]),
)
def test_tiling_never_beats_compulsory_traffic(
    m: int, n: int, k: int, tm: int, tn: int, tk: int, b: int
) -> None:
    t = MatmulTile(m, n, k, tm, tn, tk, b, 4)
    assert t.tiled_moves >= t.a_elements + t.b_elements + t.c_elements
    assert t.tile_intensity == pytest.approx(2 * tm * tn / (b * (tm + tn)))
    assert t.unblocked_intensity <= t.tile_intensity + 1e-12
