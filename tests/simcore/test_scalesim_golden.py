"""Under `--assume scalesim` the model reproduces SCALE-Sim 3.0: its compute cycles (the rows of
its demand matrices) and its SRAM reads of A and B, for ws, os and is.

Golden data: tests/simcore/golden/scalesim.json, produced by SCALE-Sim itself through
tools/scalesim_golden.py (its provenance block names the version and the command). Where
SCALE-Sim counts differently, the tests say so: its Total Cycles is the last 0-based cycle
index (the demand rows minus one), and its os OFMAP write count adds folds x (R + C).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.checks import ceil_div
from simcore.shape import Shape
from simcore.systolic import (
    SCALESIM,
    SystolicArray,
    SystolicDesign,
    cycles,
    design_traffic,
    simulate_systolic,
)
from tests.helpers.examples import examples
from tests.helpers.systolic_strategies import operands

GOLDEN = json.loads((Path(__file__).parent / "golden" / "scalesim.json").read_text())
CASES = GOLDEN["cases"]


def _id(case: dict) -> str:
    return (
        f"{case['m']}x{case['k']}x{case['n']}-on-{case['rows']}x{case['cols']}-{case['dataflow']}"
    )


def _design(case: dict) -> tuple[SystolicDesign, Shape]:
    return (
        SystolicDesign(SystolicArray(case["rows"], case["cols"]), case["dataflow"], None, SCALESIM),
        Shape(case["m"], case["k"], case["n"]),
    )


def test_the_golden_data_says_where_it_came_from() -> None:
    provenance = GOLDEN["provenance"]
    assert provenance["scalesim"] == "3.0.0" and "scalesim.scale" in provenance["each_case"]
    assert "tools/scalesim_golden.py" in provenance["produced_by"]
    assert len(CASES) >= 20 and {c["dataflow"] for c in CASES} == {"ws", "os", "is"}


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_cycles_and_reads_equal_scalesim(case: dict) -> None:
    design, shape = _design(case)
    assert case["stall_cycles"] == 0 and set(case["demand_rows_all"]) == {case["demand_rows"]}
    # SCALE-Sim's "Total Cycles" is the index of its last cycle, counted from 0.
    assert case["total_cycles"] == case["demand_rows"] - 1
    assert cycles(design, shape) == case["demand_rows"]
    traffic = design_traffic(design, shape)
    assert (traffic.a_reads, traffic.b_reads) == (
        case["ifmap_sram_reads"],
        case["filter_sram_reads"],
    )


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_output_writes_and_where_scalesim_counts_differently(case: dict) -> None:
    design, shape = _design(case)
    traffic = design_traffic(design, shape)
    if case["dataflow"] == "os":
        folds = ceil_div(shape.m, case["rows"]) * ceil_div(shape.n, case["cols"])
        # SCALE-Sim adds each padded R x C output block's R + C after flipping it.
        assert case["ofmap_sram_writes"] == traffic.c_writes + folds * (case["rows"] + case["cols"])
    else:  # ws, is: every K tile writes its partial (or final) sums
        assert case["ofmap_sram_writes"] == traffic.psum_writes + traffic.c_writes


@pytest.mark.parametrize("case", [c for c in CASES if c["m"] * c["k"] * c["n"] <= 40_000], ids=_id)
def test_the_cycle_model_runs_scalesims_schedule(case: dict) -> None:
    design, shape = _design(case)
    a, b = operands(shape)
    result = simulate_systolic(design, a, b)
    assert result.cycles == case["demand_rows"] and (result.c == a @ b).all()


def scalesim_rows(m: int, k: int, n: int, rows: int, cols: int, dataflow: str) -> int:
    """SCALE-Sim's demand-matrix rows, read off its source (compute/systolic_compute_*.py): every
    fold pads to R x C and runs on its own; ws and is fold K over rows, os folds M over rows."""
    if dataflow == "ws":  # R load + M stream + (R - 1) + (C - 1) skew per fold
        return ceil_div(k, rows) * ceil_div(n, cols) * (2 * rows + cols + m - 2)
    if dataflow == "is":  # ws with the N columns of B streaming past A^T
        return ceil_div(k, rows) * ceil_div(m, cols) * (2 * rows + cols + n - 2)
    return ceil_div(m, rows) * ceil_div(n, cols) * (k + rows + cols - 2)  # os: no drain cycles


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_rows_formula_matches_scalesim(case: dict) -> None:
    keys = ("m", "k", "n", "rows", "cols", "dataflow")
    assert scalesim_rows(*(case[key] for key in keys)) == case["demand_rows"]


@settings(max_examples=examples(300), deadline=None)
@given(
    m=st.integers(1, 700),
    k=st.integers(1, 700),
    n=st.integers(1, 700),
    rows=st.integers(1, 64),
    cols=st.integers(1, 64),
    dataflow=st.sampled_from(["ws", "os", "is"]),
)
def test_any_gemm_and_array_under_scalesim_assumptions(
    m: int, k: int, n: int, rows: int, cols: int, dataflow: str
) -> None:
    design = SystolicDesign(SystolicArray(rows, cols), dataflow, None, SCALESIM)
    assert cycles(design, Shape(m, k, n)) == scalesim_rows(m, k, n, rows, cols, dataflow)
    traffic = design_traffic(design, Shape(m, k, n))
    reads = {
        "ws": (m * k * ceil_div(n, cols), k * n),
        "is": (m * k, k * n * ceil_div(m, cols)),
        "os": (m * k * ceil_div(n, cols), k * n * ceil_div(m, rows)),
    }
    assert (traffic.a_reads, traffic.b_reads) == reads[dataflow]
