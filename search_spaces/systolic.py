"""The systolic target: choose an R x C array, its dataflow (ws, os, is), shadow registers, the
HBM link of the stationary tiles (words per cycle, 1 or 2 buffers) and the mapping (the r x c
sub-array the GEMM runs on and the tile order) for one GEMM, under a PE budget. Built by the
tuner for `--target systolic` through `systolic_family(pe_budget, max_hbm_words)`; not one of
the registry's default spaces.

Parameters: rows, cols, map_rows and map_cols are integers 1..pe_budget sampled on a log scale
(any shape is reachable, small and large equally often); rows * cols over the budget is a graded
violation. A mapping wider than the array is clipped to it (`canonical`), so every mapping is
feasible and equal designs are evaluated once. hbm_words is 1..max_hbm_words, also log.

Every dataflow is timed by its own closed form (`simcore.systolic.schedule`) and verified by its
own cycle model (`simcore.systolic.cycle`, the event engine) on the design itself: `exact`. Only
a design too big for the verification budget is checked on a smaller problem with the same
array, mapping and tile kinds (at most three tiles per dimension, the stream cut short), and
that verdict says `scaled`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simcore.ga1.machine import Machine
from simcore.shape import Shape
from simcore.systolic.cycle import SystolicTimingError, simulate_systolic
from simcore.systolic.model import (
    DATAFLOWS, DEFAULT_ASSUMPTIONS, ORDERS, Assumptions, HbmLink, Mapping, SystolicArray, SystolicDesign,
    design_traffic, hbm_words, roles, tile_count,
)
from simcore.systolic.schedule import cycles, schedule

from search_spaces.base import EXACT, SCALED, Family, Metrics, Space, Verdict
from search_spaces.domains import Choice, IntRange, Param, Point

KEYS = ("rows", "cols", "dataflow", "shadow", "hbm_buffers", "hbm_words", "map_rows", "map_cols", "tile_order")
# The event engine's cost, in seconds: per tile (closed form and checks), per PE of every tile,
# per multiply-accumulate of the block products and numpy's product. Measured on a laptop core.
COST_PER_TILE, COST_PER_TILE_PE, COST_PER_MAC = 1e-4, 3e-8, 1e-9
VERIFY_SECONDS = 5.0
VERIFY_WORDS = 1 << 27  # operand and result words the check may allocate (1 GiB of float64)


def design_of(point: Point, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> SystolicDesign:
    """Validate a point's values and build the design it names (the mapping clipped to the array)."""
    missing = [k for k in KEYS if k not in point]
    if missing:
        raise ValueError(f"systolic point lacks {', '.join(missing)}")
    if point["dataflow"] not in DATAFLOWS:
        raise ValueError(f"dataflow must be one of {', '.join(DATAFLOWS)}, got {point['dataflow']!r}")
    array = SystolicArray(point["rows"], point["cols"])  # type: ignore[arg-type]
    mapping = Mapping(min(int(point["map_rows"]), array.rows), min(int(point["map_cols"]), array.cols),  # type: ignore[call-overload]
                      str(point["tile_order"]))
    shadow = point["shadow"]
    if not isinstance(shadow, bool):
        raise ValueError(f"shadow must be a bool, got {shadow!r}")
    assume = Assumptions(shadow, assumptions.edges, assumptions.drain, assumptions.folds)
    hbm = HbmLink(point["hbm_words"], point["hbm_buffers"])  # type: ignore[arg-type]
    return SystolicDesign(array, str(point["dataflow"]), mapping, assume, hbm)


# --- verification by the cycle model ------------------------------------------------------


@dataclass(frozen=True)
class VerifyPlan:
    """The problem the cycle model runs, and how it relates to the asked one."""

    design: SystolicDesign
    shape: Shape
    exact: bool
    note: str


def check_cost(design: SystolicDesign, shape: Shape) -> tuple[float, int]:
    """(estimated seconds, words allocated) of running the event engine on the full problem."""
    cut = tile_count(design, shape)
    pes = design.used.rows * design.used.cols
    macs = shape.m * shape.k * shape.n
    seconds = cut * (COST_PER_TILE + pes * COST_PER_TILE_PE) + 2 * macs * COST_PER_MAC
    return seconds, 2 * (shape.m * shape.k + shape.k * shape.n + shape.m * shape.n)


def _truncate(dim: int, side: int) -> int:
    """At most three tiles, keeping the edge tile: full-full, full-edge, edge-next all occur."""
    count = -(-dim // side)
    return dim if count <= 3 else 2 * side + (dim - (count - 1) * side)


def verify_plan(design: SystolicDesign, shape: Shape) -> VerifyPlan:
    """The full problem if the check fits the budget, else the same design on a smaller
    problem with every kind of tile and tile-to-tile step: at most three tiles per dimension,
    the stream cut to just past every tile's fill and HBM transfer."""
    seconds, words = check_cost(design, shape)
    if seconds <= VERIFY_SECONDS and words <= VERIFY_WORDS:
        return VerifyPlan(design, shape, True, "full shape")
    role, mapping = roles(design.dataflow, shape), design.used
    rows, cols = _truncate(role.row_dim, mapping.rows), _truncate(role.col_dim, mapping.cols)
    transfer = design.hbm.cycles(mapping.rows * mapping.cols)
    stream = min(role.stream, max(mapping.rows + mapping.cols, transfer) + 1)
    small = {"ws": Shape(stream, rows, cols), "is": Shape(cols, rows, stream), "os": Shape(rows, stream, cols)}
    scaled = small[design.dataflow]
    return VerifyPlan(design, scaled, False, f"scaled-down shape {scaled} (same array, mapping and tile kinds)")


def run_check(design: SystolicDesign, shape: Shape, seed: int = 0) -> tuple[bool, str]:
    """The design's own cycle model on random integer matrices: its cycles equal the closed
    form, its product numpy's, its buffer words the traffic formula."""
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
        return False, f"cycle model moved {result.traffic.total} buffer words, formula {expected.total}"
    return True, f"{run.cycles} cycles, C == numpy, {expected.total} buffer words"


def verify_design(design: SystolicDesign, shape: Shape, seed: int = 0) -> Verdict:
    """Run the design's own cycle model: `exact` on the full shape, `scaled` on a smaller one."""
    plan = verify_plan(design, shape)
    ok, detail = run_check(plan.design, plan.shape, seed)
    return Verdict(ok, EXACT if plan.exact else SCALED, f"{design.dataflow}, {plan.note}: {detail}")


# --- the family ---------------------------------------------------------------------------


def _check_budget(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


class SystolicFamily(Family):
    """Array shape, dataflow, shadow registers, HBM link and mapping for one GEMM."""

    name = "systolic"
    description = "an R x C systolic array (ws, os or is) and its mapping under a PE budget, timed by the closed form"
    oracle = "systolic"
    measures = ("cycles", "words_per_mac", "pes")
    default_objectives = ("cycles", "words_per_mac")

    def __init__(self, pe_budget: int, max_hbm_words: int, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> None:
        self.pe_budget = _check_budget("pe_budget", pe_budget)
        self.max_hbm_words = _check_budget("max_hbm_words", max_hbm_words)
        self.assumptions = assumptions

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        side = IntRange(1, self.pe_budget, log=self.pe_budget > 1)
        return (
            Param("rows", side, "array rows"),
            Param("cols", side, "array columns"),
            Param("dataflow", Choice(DATAFLOWS), "ws: weights stay in the PEs; os: results do; is: inputs do"),
            Param("shadow", Choice((True, False)), "a second register per PE: tiles overlap in the array"),
            Param("hbm_buffers", Choice((1, 2)), "on-chip buffers of the stationary tiles' HBM link"),
            Param("hbm_words", IntRange(1, self.max_hbm_words, log=self.max_hbm_words > 1), "HBM words per cycle"),
            Param("map_rows", side, "rows of the sub-array the GEMM is mapped on (clipped to the array)"),
            Param("map_cols", side, "columns of the sub-array the GEMM is mapped on (clipped to the array)"),
            Param("tile_order", Choice(ORDERS), "col-outer: column folds outermost (SCALE-Sim's order)"),
        )

    def canonical(self, point: Point, shape: Shape, T: int) -> Point:
        out = dict(point)
        if all(k in point for k in ("rows", "cols", "map_rows", "map_cols")):
            out["map_rows"] = min(int(point["map_rows"]), int(point["rows"]))  # type: ignore[call-overload]
            out["map_cols"] = min(int(point["map_cols"]), int(point["cols"]))  # type: ignore[call-overload]
        return out

    def violation(self, point: Point, shape: Shape, machine: Machine) -> float:
        pes = int(point["rows"]) * int(point["cols"])  # type: ignore[call-overload]
        return max(0, pes - self.pe_budget) / self.pe_budget

    def evaluate(self, point: Point, shape: Shape, machine: Machine) -> Metrics:
        design = design_of(point, self.assumptions)
        run_cycles = cycles(design, shape)
        t = design_traffic(design, shape)
        return {
            "cycles": run_cycles,
            "words_per_mac": t.words_per_mac,
            "mac_utilization": t.macs / (design.array.pes * run_cycles),
            "tiles": tile_count(design, shape),
            "pes": design.array.pes,
            "macs": t.macs,
            "buffer_words": t.total,
        }

    def verify(self, point: Point, shape: Shape, machine: Machine) -> Verdict:
        return verify_design(design_of(point, self.assumptions), shape)

    def describe(self, point: Point, shape: Shape, machine: Machine, per_char: int | None = None) -> str:
        design = design_of(point, self.assumptions)
        run_cycles = cycles(design, shape)
        t = design_traffic(design, shape)
        a, m = design.array, design.used
        return (
            f"{a} array ({a.pes} PEs), {design.dataflow}, mapped on {m.rows}x{m.cols} ({m.order}), "
            f"{design.assumptions.describe()}, {design.hbm.buffers} buffer(s), "
            f"{design.hbm.hbm_words_per_cycle} HBM words/cycle\n"
            f"{shape}: {tile_count(design, shape)} tiles, {run_cycles} cycles, "
            f"{t.macs / (a.pes * run_cycles):.0%} of MAC slots busy, {t.words_per_mac:.4g} buffer words/MAC "
            f"(A {t.a_reads}, B {t.b_reads}, partial sums {t.psum_writes} + {t.psum_readbacks}, C {t.c_writes})"
        )

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        side = math.isqrt(self.pe_budget)
        sides = sorted({side, 1 << (side.bit_length() - 1), max(1, side // 2)}, reverse=True)
        return [
            {"rows": s, "cols": s, "dataflow": d, "shadow": True, "hbm_buffers": 2, "hbm_words": self.max_hbm_words,
             "map_rows": s, "map_cols": s, "tile_order": ORDERS[0]}
            for s in sides for d in DATAFLOWS
        ]


def systolic_family(pe_budget: int, max_hbm_words: int) -> SystolicFamily:
    """The family the tuner builds for `--target systolic --pe-budget P --max-hbm-words W`."""
    return SystolicFamily(pe_budget, max_hbm_words)


# In the registry so that a recorded point can be rebuilt by its family's name (describing,
# verifying and exporting a point do not depend on the budgets); a run builds its own family
# with --pe-budget and --max-hbm-words. These are those options' defaults.
SPACE = Space("systolic", "an R x C systolic array for one GEMM (tune --target systolic)", (systolic_family(4096, 64),))
