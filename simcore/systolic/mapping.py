"""The best mapping of a GEMM on an array: the sub-array r x c (r <= R, c <= C) and tile order
with the fewest cycles (closed form), ties broken by fewer buffer words, then the larger
sub-array, then column folds outer.

Every sub-array of a smaller array is also a sub-array of a larger one, and the timing of a
mapping does not depend on the PEs left idle, so the best mapping on a larger array is never
slower. The search is exhaustive over r <= min(R, rows needed) and c <= min(C, cols needed) (a
wider sub-array than the GEMM only idles or pads), pruned by a lower bound that no schedule
beats: every tile streams for Ls cycles in turn, ws/is load every tile's rows one after the
other into column 0, and a charged os drain puts out every tile's rows one after the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.shape import Shape
from simcore.systolic.closed_form import cycles
from simcore.systolic.model import ORDERS, Mapping, SystolicDesign, roles, traffic


@dataclass(frozen=True)
class MappingChoice:
    """The chosen mapping, its cycles, and how many mappings were timed to find it."""

    mapping: Mapping
    cycles: int
    timed: int


# Sub-arrays the search may consider (its arrays hold a few int64 per sub-array).
MAX_SUBARRAYS = 1 << 22


def _sides(limit: int, need: int, fixed: int | None) -> np.ndarray:
    if fixed is not None:
        if fixed > limit:
            raise ValueError(f"mapping side {fixed} exceeds the array's {limit}")
        return np.array([fixed], dtype=np.int64)
    return np.arange(1, min(limit, need) + 1, dtype=np.int64)


def lower_bounds(
    design: SystolicDesign, shape: Shape, rows: int | None = None, cols: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(r, c, bound) over every sub-array r x c worth trying (r or c fixed when given)."""
    role = roles(design.dataflow, shape)
    r_side = _sides(design.array.rows, role.row_dim, rows)
    c_side = _sides(design.array.cols, role.col_dim, cols)
    if r_side.size * c_side.size > MAX_SUBARRAYS:
        raise ValueError(
            f"{r_side.size * c_side.size} sub-arrays are too many to search (at most {MAX_SUBARRAYS}); "
            "give the mapping"
        )
    r, c = r_side[:, None], c_side[None, :]
    row_folds, col_folds = -(-role.row_dim // r), -(-role.col_dim // c)
    row_span = row_folds * r if design.assumptions.padded else np.full_like(r, role.row_dim)
    lane = row_span * col_folds  # every tile's rows through one lane, one after another
    if design.dataflow == "os" and not design.assumptions.drain:
        lane = np.zeros_like(lane)
    bound = np.maximum(row_folds * col_folds * role.stream, lane)
    rr, cc = np.broadcast_arrays(r, c)
    return rr.ravel(), cc.ravel(), bound.ravel()


def best_mapping(
    design: SystolicDesign,
    shape: Shape,
    rows: int | None = None,
    cols: int | None = None,
    orders: tuple[str, ...] = ORDERS,
) -> MappingChoice:
    """The best mapping of `shape` on `design.array` (the design's own mapping is ignored);
    `rows`, `cols` or `orders` restrict the search to the sub-array sides or orders given."""
    rs, cs, bounds = lower_bounds(design, shape, rows, cols)
    order = np.lexsort((-cs, -rs, bounds))  # lowest bound first, larger sub-arrays first
    best: tuple[int, int, int, int, int, Mapping] | None = None
    timed = 0
    for i in order:
        if best is not None and bounds[i] > best[0]:
            break
        r, c = int(rs[i]), int(cs[i])
        words = traffic(Mapping(r, c), shape.m, shape.k, shape.n, design.dataflow).total
        for tile_order in orders:
            rank = ORDERS.index(tile_order)
            mapping = Mapping(r, c, tile_order)
            key = (cycles(design.with_mapping(mapping), shape), words, -r * c, rank, -r, mapping)
            timed += 1
            if best is None or key[:5] < best[:5]:
                best = key
    assert best is not None
    return MappingChoice(best[5], best[0], timed)
