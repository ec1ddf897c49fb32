"""The systolic target: choose an R x C array, its dataflow (ws, os, is), shadow registers, the
HBM link of the stationary tiles (words per cycle, 1 or 2 buffers) and the mapping (the r x c
sub-array the GEMM runs on and the tile order) for one GEMM, under a PE budget. Built by the
systolic oracle through `systolic_family(pe_budget, max_hbm_words)`; not one of
the registry's default spaces.

Parameters: rows, cols, map_rows and map_cols are integers 1..pe_budget sampled on a log scale
(any shape is reachable, small and large equally often); rows * cols over the budget is a graded
violation. A mapping wider than the array is clipped to it (`canonical`), so every mapping is
feasible and equal designs are evaluated once. hbm_words is 1..max_hbm_words, also log.

The systolic oracle (autotune.oracles.systolic) times and verifies the design a point names.
"""

from __future__ import annotations

import math
from typing import Any

from search_spaces.base import Family, Space
from search_spaces.domains import Choice, IntRange, Param, Point
from simcore.shape import Shape
from simcore.systolic.model import (
    DATAFLOWS,
    DEFAULT_ASSUMPTIONS,
    ORDERS,
    Assumptions,
    HbmLink,
    Mapping,
    SystolicArray,
    SystolicDesign,
)

KEYS = (
    "rows",
    "cols",
    "dataflow",
    "shadow",
    "hbm_buffers",
    "hbm_words",
    "map_rows",
    "map_cols",
    "tile_order",
)


def design_of(point: Point, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> SystolicDesign:
    """Validate a point's values and build the design it names (the mapping clipped to the array)."""
    missing = [k for k in KEYS if k not in point]
    if missing:
        raise ValueError(f"systolic point lacks {', '.join(missing)}")
    if point["dataflow"] not in DATAFLOWS:
        raise ValueError(
            f"dataflow must be one of {', '.join(DATAFLOWS)}, got {point['dataflow']!r}"
        )
    array = SystolicArray(point["rows"], point["cols"])  # type: ignore[arg-type]
    mapping = Mapping(
        min(int(point["map_rows"]), array.rows),
        min(int(point["map_cols"]), array.cols),  # type: ignore[call-overload]
        str(point["tile_order"]),
    )
    shadow = point["shadow"]
    if not isinstance(shadow, bool):
        raise ValueError(f"shadow must be a bool, got {shadow!r}")
    assume = Assumptions(shadow, assumptions.edges, assumptions.drain, assumptions.folds)
    hbm = HbmLink(point["hbm_words"], point["hbm_buffers"])  # type: ignore[arg-type]
    return SystolicDesign(array, str(point["dataflow"]), mapping, assume, hbm)


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
    limit = "pe"  # the processing elements over the budget

    def __init__(
        self, pe_budget: int, max_hbm_words: int, assumptions: Assumptions = DEFAULT_ASSUMPTIONS
    ) -> None:
        self.pe_budget = _check_budget("pe_budget", pe_budget)
        self.max_hbm_words = _check_budget("max_hbm_words", max_hbm_words)
        self.assumptions = assumptions

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        side = IntRange(1, self.pe_budget, log=self.pe_budget > 1)
        return (
            Param("rows", side, "array rows"),
            Param("cols", side, "array columns"),
            Param(
                "dataflow",
                Choice(DATAFLOWS),
                "ws: weights stay in the PEs; os: results do; is: inputs do",
            ),
            Param(
                "shadow",
                Choice((True, False)),
                "a second register per PE: tiles overlap in the array",
            ),
            Param(
                "hbm_buffers", Choice((1, 2)), "on-chip buffers of the stationary tiles' HBM link"
            ),
            Param(
                "hbm_words",
                IntRange(1, self.max_hbm_words, log=self.max_hbm_words > 1),
                "HBM words per cycle",
            ),
            Param(
                "map_rows",
                side,
                "rows of the sub-array the GEMM is mapped on (clipped to the array)",
            ),
            Param(
                "map_cols",
                side,
                "columns of the sub-array the GEMM is mapped on (clipped to the array)",
            ),
            Param(
                "tile_order",
                Choice(ORDERS),
                "col-outer: column folds outermost (SCALE-Sim's order)",
            ),
        )

    def design(self, point: Point) -> SystolicDesign:
        """The design a point names: what the systolic oracle times and verifies."""
        return design_of(point, self.assumptions)

    def canonical(self, point: Point, shape: Shape, T: int) -> Point:
        out = dict(point)
        if all(k in point for k in ("rows", "cols", "map_rows", "map_cols")):
            out["map_rows"] = min(int(point["map_rows"]), int(point["rows"]))  # type: ignore[call-overload]
            out["map_cols"] = min(int(point["map_cols"]), int(point["cols"]))  # type: ignore[call-overload]
        return out

    def violation(self, point: Point, shape: Shape, machine: Any) -> float:
        pes = int(point["rows"]) * int(point["cols"])  # type: ignore[call-overload]
        return max(0, pes - self.pe_budget) / self.pe_budget

    def seed_points(self, shape: Shape, machine: Any) -> list[Point]:
        side = math.isqrt(self.pe_budget)
        sides = sorted({side, 1 << (side.bit_length() - 1), max(1, side // 2)}, reverse=True)
        return [
            {
                "rows": s,
                "cols": s,
                "dataflow": d,
                "shadow": True,
                "hbm_buffers": 2,
                "hbm_words": self.max_hbm_words,
                "map_rows": s,
                "map_cols": s,
                "tile_order": ORDERS[0],
            }
            for s in sides
            for d in DATAFLOWS
        ]


def systolic_family(pe_budget: int, max_hbm_words: int) -> SystolicFamily:
    """The family under a budget of PEs and HBM words per cycle (the systolic oracle's machine)."""
    return SystolicFamily(pe_budget, max_hbm_words)


# In the registry so that a recorded point can be rebuilt by its family's name (describing,
# verifying and exporting a point do not depend on the budgets); a run builds its own family
# under its machine's budgets. These are the default budgets.
DEFAULT_PE_BUDGET, DEFAULT_MAX_HBM_WORDS = 4096, 64
SPACE = Space(
    "systolic",
    "an R x C systolic array for one GEMM (the systolic oracle)",
    (systolic_family(DEFAULT_PE_BUDGET, DEFAULT_MAX_HBM_WORDS),),
)
