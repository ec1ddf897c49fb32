"""The listing `autotune gemms` prints: one aligned line per GEMM, then the totals."""

from __future__ import annotations

from simcore.shape import Shape
from workloads.listing import format_listing
from workloads.model import Gemm, Workload


def test_a_long_source_keeps_the_layers_column_aligned() -> None:
    workload = Workload(
        "q",
        (
            Gemm("a", Shape(5, 32, 16), 2, "QLinearMatMul+MatMulInteger", ("a", "b")),
            Gemm("c", Shape(8, 8, 8), 1, "Conv", ("c", "d")),
        ),
    )
    head, first, second = format_listing(workload).splitlines()[1:4]
    assert first.index("a, b") == second.index("c, d") == head.index("layers")
