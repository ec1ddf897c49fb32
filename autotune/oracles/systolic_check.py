"""The systolic oracle's checks and counts for a design on the budget machine: the bounds on what
a run counts (its size guard), and its verification, the design's own cycle model (the event
engine) on the full problem, or on a smaller one with the same array, mapping and tile kinds
when the full one would pass the time or memory budget."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from search_spaces.base import EXACT, MODEL, SCALED, Verdict
from simcore.shape import Shape
from simcore.systolic.closed_form import cycles, schedule
from simcore.systolic.model import SystolicDesign, design_traffic, hbm_words, roles, tile_count

# The event engine's cost, in seconds: per tile (closed form and checks), per PE of every tile,
# per multiply-accumulate of the block products and numpy's product. Measured on a laptop core.
COST_PER_TILE, COST_PER_TILE_PE, COST_PER_MAC = 1e-4, 3e-8, 1e-9
VERIFY_SECONDS = 5.0
VERIFY_WORDS = 1 << 27  # operand and result words the check may allocate (1 GiB of float64)
CHECK_PROCESS_BYTES = 96 << 20  # a check's process besides its words (numpy loaded): measured 45 MB


def most_cycles(shape: Shape, pes: int, hbm_words: float | None) -> int:
    """A bound on the cycles of any design of at most `pes` PEs whose HBM link moves at least
    `hbm_words` words a cycle (None: on chip). Each tile of the closed form ends at most
    2 Ls + 2 (span rows + span cols) + its HBM cycles after the latest event before it; summed
    over the tiles: 2 MACs + 4 RC + 2 pes (R + C) + RC / W + RC, for a stationary matrix of
    R x C <= MK + KN + MN and R + C <= M + K + N. Twice that, for headroom."""
    pairs = shape.m * shape.k + shape.k * shape.n + shape.m * shape.n
    link = 0 if hbm_words is None else 1 + math.ceil(Fraction(1) / Fraction(str(hbm_words)))
    spans = 2 * pes * (shape.m + shape.k + shape.n)
    return 2 * (2 * shape.macs + (4 + link) * pairs + spans)


def largest_counts(shape: Shape, pes: int, hbm_words: float | None) -> list[tuple[int, str]]:
    """Bounds on what a systolic run of `shape` counts: its multiply-accumulates, its cycles
    (`most_cycles`) and its buffer words (at most three per MAC, plus C and the operands once)."""
    pairs = shape.m * shape.k + shape.k * shape.n + shape.m * shape.n
    return [
        (shape.macs, "its multiply-accumulates"),
        (most_cycles(shape, pes, hbm_words), f"the cycles of a design of up to {pes} PEs"),
        (3 * shape.macs + pairs, "its buffer words"),
    ]


@dataclass(frozen=True)
class VerifyPlan:
    """The problem the cycle model runs, and how it relates to the asked one."""

    design: SystolicDesign
    shape: Shape
    exact: bool
    note: str


def check_cost(design: SystolicDesign, shape: Shape) -> tuple[float, int]:
    """(estimated seconds, words allocated) of running the event engine on the full problem."""
    from simcore.systolic.cycle import engine_words

    cut = tile_count(design, shape)
    pes = design.used.rows * design.used.cols
    macs = shape.m * shape.k * shape.n
    seconds = cut * (COST_PER_TILE + pes * COST_PER_TILE_PE) + 2 * macs * COST_PER_MAC
    return seconds, engine_words(design, shape)


def _truncate(dim: int, side: int) -> int:
    """At most three tiles, keeping the edge tile: full-full, full-edge, edge-next all occur."""
    count = -(-dim // side)
    return dim if count <= 3 else 2 * side + (dim - (count - 1) * side)


def verify_plan(design: SystolicDesign, shape: Shape, most_words: int = VERIFY_WORDS) -> VerifyPlan:
    """The full problem if the check fits the budget (`most_words` allocated at most), else the
    same design on a smaller problem with every kind of tile and tile-to-tile step: at most three
    tiles per dimension, the stream cut to just past every tile's fill and HBM transfer."""
    seconds, words = check_cost(design, shape)
    if seconds <= VERIFY_SECONDS and words <= min(most_words, VERIFY_WORDS):
        return VerifyPlan(design, shape, True, "full shape")
    role, mapping = roles(design.dataflow, shape), design.used
    rows, cols = _truncate(role.row_dim, mapping.rows), _truncate(role.col_dim, mapping.cols)
    transfer = design.hbm.cycles(mapping.rows * mapping.cols)
    stream = min(role.stream, max(mapping.rows + mapping.cols, transfer) + 1)
    small = {
        "ws": Shape(stream, rows, cols),
        "is": Shape(cols, rows, stream),
        "os": Shape(rows, stream, cols),
    }
    scaled = small[design.dataflow]
    return VerifyPlan(
        design, scaled, False, f"scaled-down shape {scaled} (same array, mapping and tile kinds)"
    )


def run_check(design: SystolicDesign, shape: Shape, seed: int = 0) -> tuple[bool, str]:
    """The design's own cycle model on random integer matrices: its cycles equal the closed
    form, its product numpy's, its buffer words the traffic formula."""
    import numpy as np

    from simcore.systolic.cycle import SystolicTimingError, simulate_systolic

    rng = np.random.default_rng(seed)
    # Small integers in float64: exact, and the block products run on BLAS.
    a = rng.integers(-9, 10, size=(shape.m, shape.k)).astype(np.float64)
    b = rng.integers(-9, 10, size=(shape.k, shape.n)).astype(np.float64)
    run = schedule(design, shape)
    try:
        result = simulate_systolic(design, a, b, run)
    except SystolicTimingError as exc:
        return False, f"cycle model rejects the closed-form schedule: {exc}"
    if result.cycles != run.cycles or cycles(design, shape) != run.cycles:
        return False, f"cycle model takes {result.cycles} cycles, closed form {run.cycles}"
    if not np.array_equal(result.c, a @ b):
        return False, "cycle model's product differs from numpy's"
    expected = design_traffic(design, shape)
    if result.traffic != expected or result.hbm_words != hbm_words(design, shape):
        return (
            False,
            f"cycle model moved {result.traffic.total} buffer words, formula {expected.total}",
        )
    return True, f"{run.cycles} cycles, C == numpy, {expected.total} buffer words"


def check_bytes(design: SystolicDesign, shape: Shape, most_words: int = VERIFY_WORDS) -> int:
    """About the peak memory of `verify_design` with `most_words`: the process's own and the
    float64 words of the problem it runs (none when it only times)."""
    from simcore.systolic.cycle import engine_words

    plan = verify_plan(design, shape, most_words)
    words = engine_words(plan.design, plan.shape)
    return CHECK_PROCESS_BYTES + (8 * words if words <= VERIFY_WORDS else 0)


def check_words(memory: int) -> int:
    """The most words a check may allocate within `memory` bytes for the whole process."""
    return max(0, min(VERIFY_WORDS, (memory - CHECK_PROCESS_BYTES) // 8))


def verify_design(
    design: SystolicDesign, shape: Shape, seed: int = 0, most_words: int = VERIFY_WORDS
) -> Verdict:
    """Run the design's own cycle model: `exact` on the full shape, `scaled` on a smaller one
    (`most_words` allocated at most on the full shape)."""
    from simcore.systolic.cycle import engine_words

    plan = verify_plan(design, shape, most_words)
    if engine_words(plan.design, plan.shape) > VERIFY_WORDS:  # a padded sub-array of 10^10 PEs
        return Verdict(True, MODEL, f"{design.dataflow}: timed only, too large to run")
    ok, detail = run_check(plan.design, plan.shape, seed)
    return Verdict(ok, EXACT if plan.exact else SCALED, f"{design.dataflow}, {plan.note}: {detail}")
