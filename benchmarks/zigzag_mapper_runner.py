"""Run ZigZag's own mapper (LOMA) on GEMMs for a machine with bounded buffers: reads a JSON list
of cases on stdin, prints JSON results.

Run by benchmarks/bench_memory_mappers.py with the Python of ZigZag's own virtualenv
(zigzag-dse 3.9.1); it imports nothing of this project but zigzag_runner.py beside it. Each case
describes C = A B (ZigZag's O[d0][d1] += I[d0][d2] * W[d2][d1], d0 = M, d1 = N, d2 = K) and the
machine: an R x C array with a weight register and an output register per PE, the machine's
on-chip stores (their capacity, the operands they hold, their read and write widths) and DRAM
(its bandwidth). Only the spatial mapping is given (K on the rows, N on the columns, the largest
divisor of each that fits); LOMA searches the temporal mapping and ZigZag's allocator places
every loop in the memories by their capacities. Energies per access are the case's (our table's
energy per byte times the port's width), so ZigZag's energy uses the same table as ours.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from zigzag_runner import _levels, _register  # noqa: E402


def _memory(spec: dict) -> dict:
    operands = spec["operands"]
    return {
        "size": spec["size_bits"],
        "r_cost": spec["r_cost"],
        "w_cost": spec["w_cost"],
        "area": 0.0,
        "latency": 1,
        "operands": operands,
        "ports": [
            {
                "name": "r_port_1",
                "type": "read",
                "bandwidth_min": 8,
                "bandwidth_max": spec["read_bits"],
                "allocation": [f"{op}, tl" for op in operands if op != "O"]
                + (["O, th", "O, tl"] if "O" in operands else []),
            },
            {
                "name": "w_port_1",
                "type": "write",
                "bandwidth_min": 8,
                "bandwidth_max": spec["write_bits"],
                "allocation": [f"{op}, fh" for op in operands if op != "O"]
                + (["O, fl", "O, fh"] if "O" in operands else []),
            },
        ],
        "served_dimensions": ["D1", "D2"],
    }


def accelerator(case: dict) -> dict:
    memories = {
        "rf_weight": _register("I2", case["precision"]["W"], case["register_pj"]),
        "rf_output": _register("O", case["precision"]["O"], case["register_pj"]),
    }
    for spec in case["memories"]:
        memories[spec["name"]] = _memory(spec)
    return {
        "name": f"machine_{case['id']}",
        "memories": memories,
        "operational_array": {
            "unit_energy": case["mac_pj"],
            "unit_area": 1.0,
            "dimensions": ["D1", "D2"],
            "sizes": [case["cols"], case["rows"]],
            "systolic_dimensions": ["D1", "D2"],
        },
    }


def mapping(case: dict) -> list[dict]:
    cols, rows = case["unroll"]
    return [
        {
            "name": "default",
            "spatial_mapping": {"D1": [f"D1, {cols}"], "D2": [f"D2, {rows}"]},
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
            "operand_precision": case["precision"],
            "operand_source": {"I": 0, "W": 0},
        }
    ]


def run_case(case: dict, folder: Path) -> dict:
    import yaml
    from zigzag.api import get_hardware_performance_zigzag

    hardware, mapping_file = folder / f"{case['id']}_hw.yaml", folder / f"{case['id']}_map.yaml"
    hardware.write_text(yaml.safe_dump(accelerator(case), sort_keys=False))
    mapping_file.write_text(yaml.safe_dump(mapping(case), sort_keys=False))
    start = time.process_time()
    energy, latency, cmes = get_hardware_performance_zigzag(
        workload(case),
        str(hardware),
        str(mapping_file),
        opt=case["opt"],
        dump_folder=str(folder / case["id"]),
        lpf_limit=case.get("lpf_limit", 6),
        loma_show_progress_bar=False,
    )
    cme = cmes[0][1][0][0]
    names = {"I1": "A", "I2": "B", "O": "C"}
    return {
        "id": case["id"],
        "opt": case["opt"],
        "latency_cycles": float(latency),
        "energy_pj": float(energy),
        "cpu_s": round(time.process_time() - start, 2),
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
