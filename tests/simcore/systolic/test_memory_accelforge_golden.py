"""Access counts of block schedules equal AccelForge's for the same fixed mapping, without
AccelForge: its counts (accelforge 1.0.467, benchmarks/bench_memory_peer_accelforge.py,
provenance in the file) are in tests/simcore/golden/accelforge_memory.json.

Conventions, checked here as the peer counts them: actions in bits (A and B 8 bits, C 16), so
elements are bits over the width; an on-chip memory's reads and writes whatever their
direction, so the accumulator's writes are the array's and DRAM's read-backs together, and its
reads the array's read-backs, the sums a later k block adds to and the drains to DRAM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simcore.shape import Shape
from simcore.systolic.blocked import BlockSchedule
from simcore.systolic.blocked.counts import block_counts
from simcore.systolic.machine_parse import parse_machine
from simcore.systolic.model import SystolicDesign

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "accelforge_memory.json").read_text())
BITS = {"A": 8, "B": 8, "C": 16}


def _ours(case: dict) -> dict[str, int]:
    bm, bk, bn = case["block"]
    machine = parse_machine(
        {
            "name": case["id"],
            "array": {
                "rows": case["rows"],
                "cols": case["cols"],
                "dataflow": "ws",
                "clock": "1 GHz",
            },
            "words": {"operand_bits": 8, "accumulator_bits": 16, "output_bits": 8},
            "buffers": {
                "scratchpad": {
                    "holds": ["a", "b"],
                    "capacity": f"{bm * bk + bk * bn} words",
                    "read_width": 64,
                    "write_width": 64,
                }
            },
            "accumulator": {"capacity": f"{bm * bn * 2} B", "read_width": 64, "write_width": 64},
            "dram": {"bandwidth": "8 words/cycle"},
        }
    )
    schedule = BlockSchedule(bm, bk, bn, case["order"], (1, 1, 1))
    c = block_counts(
        machine,
        SystolicDesign(machine.array, "ws"),
        schedule,
        Shape(case["m"], case["k"], case["n"]),
    )
    return {
        "MainMemory A read": c.dram.a_reads,
        "MainMemory B read": c.dram.b_reads,
        "MainMemory C read": c.dram.c_reads,
        "MainMemory C write": c.dram.c_writes,
        "Scratchpad A write": c.dram.a_reads,
        "Scratchpad A read": c.array.a_reads,
        "Scratchpad B write": c.dram.b_reads,
        "Scratchpad B read": c.array.b_reads,
        "Accumulator C write": c.array.psum_writes + c.array.c_writes + c.dram.c_reads,
        "Accumulator C read": c.array.psum_readbacks + c.accumulate_reads + c.dram.c_writes,
    }


def test_the_golden_file_says_where_it_comes_from() -> None:
    provenance = GOLDEN["provenance"]
    assert provenance["tool"] == "accelforge" and provenance["version"] == "1.0.467"
    assert provenance["command"] and provenance["date"] and provenance["architecture"]
    assert len(GOLDEN["results"]) == len(GOLDEN["cases"]) == 8


@pytest.mark.parametrize("result", GOLDEN["results"], ids=lambda r: r["id"])
def test_access_counts_equal_accelforges(result: dict) -> None:
    case = next(c for c in GOLDEN["cases"] if c["id"] == result["id"])
    actions = result["actions"]
    peer = {key: actions[key] / BITS[key.split()[1]] for key in _ours(case)}
    assert _ours(case) == peer
