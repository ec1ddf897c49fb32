"""The bounds against the exact solver's table (golden data).

tests/simcore/data/optima.json is the output of
`PYTHONPATH=$PWD python benchmarks/bench_optimum.py --json tests/simcore/data/optima.json` (the
tuner's best after 1,000 trials, then CP-SAT from it; every schedule in it ran through the ordinary
simulator and was verified exactly). A lower bound above a schedule that ran would be wrong; on a
proven row the schedule is the optimum, so the bound must not pass it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simcore.ga1.lower_bounds import compute_pipeline_bound, io_bound_cycles, lower_bound
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.shape import parse_shape

ROWS = json.loads((Path(__file__).parent / "data" / "optima.json").read_text())


def test_the_table_is_the_issue_size():
    assert len(ROWS) >= 30
    assert all(
        2 <= min(parse_shape(r["shape"]).tiles(8)) and max(parse_shape(r["shape"]).tiles(8)) <= 8
        for r in ROWS
    )


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['shape']}-{r['machine']}")
def test_bounds_never_pass_a_verified_schedule(row):
    shape, machine = parse_shape(row["shape"]), machine_from(parse_overrides(row["machine"]), None)
    best = min(row["exact"], row["tuner"])
    assert row["exact"] <= row["tuner"]  # the solver starts from the tuner's schedule
    assert lower_bound(shape, machine) <= best
    assert max(compute_pipeline_bound(shape, machine), io_bound_cycles(shape, machine)) <= best
    assert row["old_bound"] <= lower_bound(shape, machine)  # never weaker than before
    assert row["bound"] <= best
    if row["exact"] == row["bound"]:  # proven: the bound is at most the optimum itself
        assert lower_bound(shape, machine) <= row["exact"]
