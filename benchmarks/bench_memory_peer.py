"""Access counts of block schedules against ZigZag's for the same fixed mapping.

Each case is a GEMM, an R x C weight-stationary array, block sizes and a loop order. ZigZag
(zigzag-dse 3.9.1, in its own virtualenv) is given the accelerator and mapping that
benchmarks/zigzag_memory_runner.py describes: a scratchpad holding exactly one A and one B
block, an accumulator holding one C block of 16-bit partial sums, DRAM above them. Ours is the
same machine (single buffering, 16-bit partial sums, 8-bit outputs) under the same schedule.
Counts are elements, per operand and memory:

  DRAM         A reads, B reads, C read-backs (partial sums), C writes (partial and final)
  scratchpad   A and B written from DRAM, A and B read by the array
  accumulator  sums written by the array, sums read by the array (read-backs of partial sums
               within a block and sums already there when a later k block adds to them), sums
               written from DRAM (read-backs), sums read for DRAM (drains)

Usage:
  python benchmarks/bench_memory_peer.py --zigzag-python /work/peers/zigzag-venv/bin/python \
      --write-golden tests/simcore/golden/zigzag_memory.json
  python benchmarks/bench_memory_peer.py --golden tests/simcore/golden/zigzag_memory.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simcore.shape import Shape  # noqa: E402
from simcore.systolic.blocked import BlockSchedule  # noqa: E402
from simcore.systolic.blocked.counts import block_counts  # noqa: E402
from simcore.systolic.machine_parse import parse_machine  # noqa: E402
from simcore.systolic.model import SystolicDesign  # noqa: E402

CASES = [
    # id, (m, k, n), (rows, cols), block (bm, bk, bn), loop order
    ("mnk-64x128x128", (64, 128, 128), (16, 16), (32, 64, 32), "mnk"),
    ("nmk-64x128x128", (64, 128, 128), (16, 16), (32, 64, 32), "nmk"),
    ("kmn-64x128x128", (64, 128, 128), (16, 16), (32, 64, 32), "kmn"),
    ("knm-64x128x128", (64, 128, 128), (16, 16), (32, 64, 32), "knm"),
    ("mkn-128x256x64", (128, 256, 64), (16, 16), (64, 64, 32), "mkn"),
    ("nkm-128x256x64", (128, 256, 64), (16, 16), (64, 64, 32), "nkm"),
    ("mnk-256x256x256-32", (256, 256, 256), (32, 32), (128, 64, 64), "mnk"),
    ("kmn-32x512x512-8", (32, 512, 512), (8, 8), (32, 64, 64), "kmn"),
]
COUNT_KEYS = (
    "dram A reads",
    "dram B reads",
    "dram C reads",
    "dram C writes",
    "scratchpad A writes",
    "scratchpad A reads",
    "scratchpad B writes",
    "scratchpad B reads",
    "accumulator writes by the array",
    "accumulator reads by the array",
    "accumulator writes from DRAM",
    "accumulator reads for DRAM",
)


def case_dict(case: tuple) -> dict:
    cid, (m, k, n), (rows, cols), block, order = case
    return {
        "id": cid,
        "m": m,
        "k": k,
        "n": n,
        "rows": rows,
        "cols": cols,
        "block": list(block),
        "order": order,
    }


def ours(case: dict) -> dict[str, int]:
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
    design = SystolicDesign(machine.array, "ws")
    schedule = BlockSchedule(bm, bk, bn, case["order"], (1, 1, 1))
    c = block_counts(machine, design, schedule, Shape(case["m"], case["k"], case["n"]))
    return dict(
        zip(
            COUNT_KEYS,
            (
                c.dram.a_reads,
                c.dram.b_reads,
                c.dram.c_reads,
                c.dram.c_writes,
                c.dram.a_reads,
                c.array.a_reads,
                c.dram.b_reads,
                c.array.b_reads,
                c.array.psum_writes + c.array.c_writes,
                c.array.psum_readbacks + c.accumulate_reads,
                c.dram.c_reads,
                c.dram.c_writes,
            ),
        )
    )


def theirs(result: dict) -> dict[str, int]:
    level = {
        op: {lv["memory"]: lv["elements"] for lv in levels}
        for op, levels in result["levels"].items()
    }
    return dict(
        zip(
            COUNT_KEYS,
            (
                level["A"]["dram"]["rd_out_to_low"],
                level["B"]["dram"]["rd_out_to_low"],
                level["C"]["dram"]["rd_out_to_low"],
                level["C"]["dram"]["wr_in_by_low"],
                level["A"]["scratchpad"]["wr_in_by_high"],
                level["A"]["scratchpad"]["rd_out_to_low"],
                level["B"]["scratchpad"]["wr_in_by_high"],
                level["B"]["scratchpad"]["rd_out_to_low"],
                level["C"]["accumulator"]["wr_in_by_low"],
                level["C"]["accumulator"]["rd_out_to_low"],
                level["C"]["accumulator"]["wr_in_by_high"],
                level["C"]["accumulator"]["rd_out_to_high"],
            ),
        )
    )


def run_zigzag(python: str, cases: list[dict]) -> dict:
    runner = ROOT / "benchmarks" / "zigzag_memory_runner.py"
    done = subprocess.run(
        [python, str(runner)], input=json.dumps(cases), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def compare(golden: dict) -> int:
    unequal = 0
    for result in golden["results"]:
        case = next(c for c in golden["cases"] if c["id"] == result["id"])
        mine, peer = ours(case), theirs(result)
        diff = {k: (mine[k], peer[k]) for k in COUNT_KEYS if mine[k] != peer[k]}
        unequal += bool(diff)
        print(
            f"{case['id']:<22} {'equal' if not diff else diff}  (DRAM A {mine['dram A reads']:,}, B {mine['dram B reads']:,}, C reads {mine['dram C reads']:,}, C writes {mine['dram C writes']:,})"
        )
    print(
        f"{len(golden['results']) - unequal} of {len(golden['results'])} cases equal in all {len(COUNT_KEYS)} counts"
    )
    return unequal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zigzag-python")
    parser.add_argument("--write-golden", type=Path)
    parser.add_argument("--golden", type=Path)
    args = parser.parse_args()
    cases = [case_dict(c) for c in CASES]
    if args.zigzag_python:
        peer = run_zigzag(args.zigzag_python, cases)
        golden = {
            "provenance": {
                "tool": "zigzag-dse",
                "version": peer["zigzag_version"],
                "python": peer["python"],
                "command": "python benchmarks/bench_memory_peer.py --zigzag-python PEER_PYTHON --write-golden tests/simcore/golden/zigzag_memory.json",
                "runner": "benchmarks/zigzag_memory_runner.py",
                "date": datetime.date.today().isoformat(),
            },
            "cases": cases,
            "results": [
                {"id": r["id"], "levels": r["levels"], "temporal_mapping": r["temporal_mapping"]}
                for r in peer["results"]
            ],
        }
        if args.write_golden:
            args.write_golden.write_text(json.dumps(golden, indent=1) + "\n")
    elif args.golden:
        golden = json.loads(args.golden.read_text())
    else:
        parser.error("give --zigzag-python or --golden")
    sys.exit(1 if compare(golden) else 0)


if __name__ == "__main__":
    main()
