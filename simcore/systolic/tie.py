"""GA-1's matrix unit as an R x C weight-stationary systolic array (`--machine mxu_array=RxC`).

GA-1 times a tile product C += A @ B (all T x T) with two numbers: the unit accepts a new
product every `mxu_cycles` cycles, and another engine may read the result `mxu_fill` cycles
after the product's slot ends. Here both come from the systolic model (`simcore.systolic`):

  * One product is the T x T x T GEMM: its B is cut into ceil(T/R) * ceil(T/C) weight tiles,
    each streaming the T rows of A. With shadow registers and the weights on chip (B is in a
    scratchpad slot), the closed form gives S_{j+1} = S_j + max(T, k_{j+1}) = S_j + T, because
    a tile never has more than T rows. The next product's first tile follows the last one by
    the same rule, so the initiation interval is

        mxu_cycles = S_last - S_first + T = ceil(T/R) * ceil(T/C) * T.

  * The product's last result leaves at end_last = S_last + T + k_last + n_last - 2, while its
    slot ends at S_first + mxu_cycles = S_last + T. The difference is the drain latency:

        mxu_fill = k_last + n_last - 2   (k_last, n_last: the edge tile's rows and columns).

The first product's weight load (k_first cycles before its first stream) is not charged: in
a back-to-back run it hides behind the previous product's stream, and GA-1 has no warm-up
term. Examples at T = 8: 4x4 -> (32, 6), 8x8 -> (8, 14), 16x16 -> (8, 14) (an array bigger
than the tile leaves PEs idle: a tile product cannot use them).
"""

from __future__ import annotations

import re

from simcore.shape import Shape, parse_int, quoted
from simcore.systolic.closed_form import schedule
from simcore.systolic.model import SystolicArray, SystolicDesign

_ARRAY = re.compile(r"^\s*(-?[0-9]+)\s*[xX]\s*(-?[0-9]+)\s*$", re.ASCII)  # ASCII digits only


def pes(rows: int, cols: int) -> int:
    """Processing elements of an R x C array (validated like the array itself)."""
    return SystolicArray(rows, cols).pes


def parse_array(text: str) -> tuple[int, int]:
    """'RxC' -> (R, C), both positive; ValueError with a one-line message otherwise."""
    match = _ARRAY.match(text)
    if not match:
        raise ValueError(f"malformed array {quoted(text)}: expected RxC, for example 8x8")
    rows, cols = (
        parse_int(g, f"array {name}") for g, name in zip(match.groups(), ("rows", "cols"))
    )
    for name, value in (("rows", rows), ("cols", cols)):
        if value <= 0:
            raise ValueError(f"array {name} must be positive, got {value} in {text!r}")
    return rows, cols


def mxu_timing(T: int, rows: int, cols: int) -> tuple[int, int]:
    """(mxu_cycles, mxu_fill) of back-to-back T x T x T products on an R x C array."""
    if isinstance(T, bool) or not isinstance(T, int) or T <= 0:
        raise ValueError(f"tile edge T must be a positive integer, got {T!r}")
    run = schedule(SystolicDesign(SystolicArray(rows, cols), "ws"), Shape(T, T, T))
    first, last = run.timings[0], run.timings[-1]
    # The next product's first tile streams max(M, k_first) after this product's last one.
    interval = last.stream - first.stream + max(T, first.tile.span_rows)
    fill = run.cycles - (first.stream + interval)
    return interval, fill
