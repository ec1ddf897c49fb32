"""Run ZigZag on block-schedule cases: reads a JSON list of cases on stdin, prints JSON results.

Run by benchmarks/bench_memory_peer.py with the Python of ZigZag's own virtualenv (zigzag-dse
3.9.1); it imports nothing of this project but zigzag_runner.py beside it. Each case fixes one
mapping of C = A B (ZigZag's O[d0][d1] += I[d0][d2] * W[d2][d1], d0 = M, d1 = N, d2 = K):

  accelerator  an R x C array (sizes [C, R]); a one-word weight register per PE and a one-sum
               output register per PE (as in zigzag_runner.py); a scratchpad holding I and W of
               exactly the block's words (bm bk + bk bn, 8-bit); an accumulator holding O of
               exactly the block's partial sums (bm bn, 16-bit); DRAM holding I, W and O
  mapping      spatial: K on the array's rows, N on its columns (weight stationary); temporal,
               innermost first: M of the block (the stream), the block's K tiles, its N tiles,
               then the block loops in the case's loop order, innermost first. ZigZag's
               allocator puts each loop in the lowest memory that still holds the operands'
               tiles, so the sizes above place the block loops in DRAM.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from zigzag_runner import _levels, _register  # noqa: E402

DIM = {"m": "D0", "n": "D1", "k": "D2"}


def _memory(size_bits: int, operands: list[str], width: int, served: list[str]) -> dict:
    return {
        "size": size_bits,
        "r_cost": 1.0,
        "w_cost": 1.0,
        "area": 0.0,
        "latency": 1,
        "operands": operands,
        "ports": [
            {
                "name": "r_port_1",
                "type": "read",
                "bandwidth_min": 8,
                "bandwidth_max": width,
                "allocation": [f"{op}, tl" for op in operands if op != "O"]
                + (["O, th", "O, tl"] if "O" in operands else []),
            },
            {
                "name": "w_port_1",
                "type": "write",
                "bandwidth_min": 8,
                "bandwidth_max": width,
                "allocation": [f"{op}, fh" for op in operands if op != "O"]
                + (["O, fl", "O, fh"] if "O" in operands else []),
            },
        ],
        "served_dimensions": served,
    }


def accelerator(case: dict) -> dict:
    bm, bk, bn = case["block"]
    memories = {
        "rf_weight": _register("I2", 8, 1.0),
        "rf_output": _register("O", 16, 1.0),
        "accumulator": _memory(bm * bn * 16, ["O"], 4096, ["D1", "D2"]),
        "scratchpad": _memory((bm * bk + bk * bn) * 8, ["I1", "I2"], 4096, ["D1", "D2"]),
        "dram": _memory(10**12, ["I1", "I2", "O"], 64, ["D1", "D2"]),
    }
    return {
        "name": f"blocked_{case['id']}",
        "memories": memories,
        "operational_array": {
            "unit_energy": 1.0,
            "unit_area": 1.0,
            "dimensions": ["D1", "D2"],
            "sizes": [case["cols"], case["rows"]],
            "systolic_dimensions": ["D1", "D2"],
        },
    }


def mapping(case: dict) -> list[dict]:
    bm, bk, bn = case["block"]
    size = {"m": case["m"], "k": case["k"], "n": case["n"]}
    block = {"m": bm, "k": bk, "n": bn}
    inner = [["D0", bm], ["D2", bk // case["rows"]], ["D1", bn // case["cols"]]]
    outer = [[DIM[d], size[d] // block[d]] for d in reversed(case["order"])]
    temporal = [loop for loop in inner + outer if loop[1] > 1]
    return [
        {
            "name": "default",
            "spatial_mapping": {"D1": [f"D1, {case['cols']}"], "D2": [f"D2, {case['rows']}"]},
            "temporal_ordering": temporal,
            "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
        }
    ]


def workload(case: dict) -> list[dict]:
    return [
        {
            "id": 0,
            "name": "gemm",
            "operator_type": "Gemm",
            "equation": "O[d0][d1]+=I[d0][d2]*W[d2][d1]",
            "dimension_relations": [],
            "loop_dims": ["D0", "D1", "D2"],
            "loop_sizes": [case["m"], case["n"], case["k"]],
            "operand_precision": {"W": 8, "I": 8, "O": 16, "O_final": 8},
            "operand_source": {"I": 0, "W": 0},
        }
    ]


def run_case(case: dict, folder: Path) -> dict:
    import yaml
    from zigzag.api import get_hardware_performance_zigzag

    hardware, mapping_file = folder / f"{case['id']}_hw.yaml", folder / f"{case['id']}_map.yaml"
    hardware.write_text(yaml.safe_dump(accelerator(case), sort_keys=False))
    mapping_file.write_text(yaml.safe_dump(mapping(case), sort_keys=False))
    _energy, latency, cmes = get_hardware_performance_zigzag(
        workload(case),
        str(hardware),
        str(mapping_file),
        opt="energy",
        dump_folder=str(folder / case["id"]),
        loma_show_progress_bar=False,
    )
    cme = cmes[0][1][0][0]
    names = {"I1": "A", "I2": "B", "O": "C"}
    return {
        "id": case["id"],
        "latency_cycles": float(latency),
        "temporal_mapping": str(cme.temporal_mapping),
        "levels": {
            names[str(cme.memory_operand_links.layer_to_mem_op(op))]: _levels(cme, op)
            for op in cme.layer.layer_operands
        },
    }


def main() -> None:
    logging.disable(logging.CRITICAL)
    cases = json.load(sys.stdin)
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_case(case, Path(tmp)) for case in cases]
    import platform
    from importlib.metadata import version

    json.dump(
        {
            "zigzag_version": version("zigzag-dse"),
            "python": platform.python_version(),
            "results": results,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
