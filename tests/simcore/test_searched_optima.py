"""The instances the exhaustive search was run on (docs/benchmarks/optimum.md, written by
benchmarks/optimum/bench_timed.py --json): each row's program runs verified in its cycles, no bound
passes it, and the tuner's best is never below it. Where the search ended the cycles are the
optimum; with the optimum table's proven rows these make at least 30 distinct instances solved
to a proven optimum."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simcore.ga1.asm import from_text
from simcore.ga1.exact.transfers import fewest_transfers
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.ga1.verify import verify_matmul
from simcore.shape import parse_shape

DATA = Path(__file__).parent / "data"
SEARCHED = json.loads((DATA / "searched_optima.json").read_text())


def _instance(row: dict) -> tuple:
    return row["shape"], row["machine"]


@pytest.mark.parametrize("row", SEARCHED, ids=lambda row: f"{row['shape']}-{row['machine']}")
def test_a_searched_schedule_runs_verified_and_no_bound_passes_it(row):
    shape = parse_shape(row["shape"])
    machine = machine_from(parse_overrides(row["machine"]), None)
    best = row["found"] if row["found"] is not None else row["below"]
    assert row["optimum"] == (best if row["complete"] else None), row
    verification, _ = verify_matmul(machine, from_text(row["program"]), shape)
    assert verification.ok and verification.cycles == best
    assert lower_bound(shape, machine) <= best <= row["below"] <= row["tuner"]
    fewest = fewest_transfers(shape, machine)
    assert fewest is None or fewest * machine.dma_cycles <= best


def test_at_least_thirty_instances_are_solved_to_a_proven_optimum():
    table = json.loads((DATA / "optima.json").read_text())
    proven = {_instance(row) for row in table if row["status"] == "optimal"}
    proven |= {_instance(row) for row in SEARCHED if row["complete"]}
    assert len(proven) >= 30
