"""Access counts of block schedules equal ZigZag's for the same fixed mapping, without ZigZag:
its counts (zigzag-dse 3.9.1, benchmarks/bench_memory_peer.py, provenance in the file) are in
tests/simcore/golden/zigzag_memory.json.

Conventions, checked here as the peer counts them: elements, not words or accesses; ZigZag's
"rd_out_to_low" of the accumulator is our array's reads of sums already there (read-backs of
partial sums within a block, M N (K/R - 1) per block visit, plus one read per output element
for each later k block that adds to it); its "wr_in_by_low" of DRAM for C counts partial and
final writes alike (ours: c_partial_writes + c_final_writes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simcore.shape import Shape
from simcore.systolic.blocked import BlockSchedule
from simcore.systolic.blocked.counts import block_counts
from simcore.systolic.machine_parse import parse_machine
from simcore.systolic.model import SystolicDesign

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "zigzag_memory.json").read_text())


def _ours(case: dict) -> dict[tuple[str, str, str], int]:
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
        ("A", "dram", "rd_out_to_low"): c.dram.a_reads,
        ("B", "dram", "rd_out_to_low"): c.dram.b_reads,
        ("C", "dram", "rd_out_to_low"): c.dram.c_reads,
        ("C", "dram", "wr_in_by_low"): c.dram.c_writes,
        ("A", "scratchpad", "wr_in_by_high"): c.dram.a_reads,
        ("A", "scratchpad", "rd_out_to_low"): c.array.a_reads,
        ("B", "scratchpad", "wr_in_by_high"): c.dram.b_reads,
        ("B", "scratchpad", "rd_out_to_low"): c.array.b_reads,
        ("C", "accumulator", "wr_in_by_low"): c.array.psum_writes + c.array.c_writes,
        ("C", "accumulator", "rd_out_to_low"): c.array.psum_readbacks + c.accumulate_reads,
        ("C", "accumulator", "wr_in_by_high"): c.dram.c_reads,
        ("C", "accumulator", "rd_out_to_high"): c.dram.c_writes,
    }


def test_the_golden_file_says_where_it_comes_from() -> None:
    provenance = GOLDEN["provenance"]
    assert provenance["tool"] == "zigzag-dse" and provenance["version"] == "3.9.1"
    assert provenance["command"] and provenance["date"]
    assert len(GOLDEN["results"]) == len(GOLDEN["cases"]) == 8


@pytest.mark.parametrize("result", GOLDEN["results"], ids=lambda r: r["id"])
def test_access_counts_equal_zigzags(result: dict) -> None:
    case = next(c for c in GOLDEN["cases"] if c["id"] == result["id"])
    levels = {
        op: {lv["memory"]: lv["elements"] for lv in found} for op, found in result["levels"].items()
    }
    peer = {key: levels[key[0]][key[1]][key[2]] for key in _ours(case)}
    assert _ours(case) == peer
