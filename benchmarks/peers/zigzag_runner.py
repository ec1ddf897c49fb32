"""Run ZigZag on GEMM cases: reads a JSON list of cases on stdin, prints a JSON list of results.

Run by benchmarks/energy/bench_energy.py with the Python of a separate virtualenv that has the `bench`
extra (zigzag-dse 3.9.1); it imports nothing of this project. For each case it writes ZigZag's
three inputs (accelerator, mapping, workload) and evaluates the one mapping they fix:

  accelerator  ZigZag's example systolic accelerator (tpu_like.yaml) with its per-access costs,
               cut to the case: an R x C array (sizes [C, R]); the stationary operand in a
               one-word register per PE (rf_128B's costs) when it is an input; the outputs in a
               one-sum register per PE (rf_2B); one SRAM for every operand (sram_2MB); DRAM
               (tpu_like's dram) holding only the stationary operand, when the case has an
               HBM link, so every other operand lives in the SRAM as in our model
  mapping      spatial: array rows and columns over the dimensions our dataflow puts there
               (ws K x N, is K x M, os M x N); temporal, innermost first: the stream (ws M,
               is N, os K), then the tile loops in our tile order (col-outer: row folds inside)
  workload     O[d0][d1] += I[d0][d2] * W[d2][d1] with d0 = M, d1 = N, d2 = K (I = A, W = B);
               precision I = W = 8, O = 16 (partial sums), O_final = 8
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from pathlib import Path

OPERAND_OF = {"ws": "I2", "is": "I1", "os": "O"}  # the stationary operand's memory operand
SPATIAL = {
    "ws": ("D2", "D1", "D0"),
    "is": ("D2", "D0", "D1"),
    "os": ("D0", "D1", "D2"),
}  # rows, cols, stream
LAYER_OPERAND = {"I1": "I", "I2": "W", "O": "O"}


def _port(name: str, kind: str, bits: int, allocation: list[str]) -> dict:
    return {
        "name": name,
        "type": kind,
        "bandwidth_min": bits,
        "bandwidth_max": bits,
        "allocation": allocation,
    }


def _register(operand: str, bits: int, cost: float) -> dict:
    ports = [
        _port("r_port_1", "read", bits, [f"{operand}, tl"]),
        _port("w_port_1", "write", bits, [f"{operand}, fh"]),
    ]
    if operand == "O":
        ports += [
            _port("r_port_2", "read", bits, ["O, th"]),
            _port("w_port_2", "write", bits, ["O, fl"]),
        ]
    return {
        "size": bits,
        "r_cost": cost,
        "w_cost": cost,
        "area": 0.0,
        "latency": 1,
        "operands": [operand],
        "ports": ports,
        "served_dimensions": [],
    }


def accelerator(case: dict) -> dict:
    stationary = OPERAND_OF[case["dataflow"]]
    memories: dict[str, dict] = {}
    if stationary != "O":
        memories["rf_stationary"] = _register(stationary, 8, 0.095)  # tpu_like rf_128B
    memories["rf_output"] = _register("O", 16, 0.021)  # tpu_like rf_2B
    operands = ["I1", "I2", "O"]
    memories["sram"] = {  # tpu_like sram_2MB
        "size": 16777216,
        "r_cost": 416.16,
        "w_cost": 378.4,
        "area": 0.0,
        "latency": 1,
        "operands": operands,
        "ports": [
            {
                "name": "r_port_1",
                "type": "read",
                "bandwidth_min": 64,
                "bandwidth_max": 2048,
                "allocation": [f"{op}, tl" for op in operands] + ["O, th"],
            },
            {
                "name": "w_port_1",
                "type": "write",
                "bandwidth_min": 64,
                "bandwidth_max": 2048,
                "allocation": [f"{op}, fh" for op in operands] + ["O, fl"],
            },
        ],
        "served_dimensions": ["D1", "D2"],
    }
    if case["hbm"]:
        allocation = [f"{stationary}, fh", f"{stationary}, tl"] + (
            ["O, fl", "O, th"] if stationary == "O" else []
        )
        memories["dram"] = {  # tpu_like dram
            "size": 10**10,
            "r_cost": 700.0,
            "w_cost": 750.0,
            "area": 0.0,
            "latency": 1,
            "operands": [stationary],
            "ports": [
                {
                    "name": "rw_port_1",
                    "type": "read_write",
                    "bandwidth_min": 64,
                    "bandwidth_max": 64,
                    "allocation": allocation,
                }
            ],
            "served_dimensions": ["D1", "D2"],
        }
    return {
        "name": f"tpu_like_{case['dataflow']}",
        "memories": memories,
        "operational_array": {
            "unit_energy": 0.04,
            "unit_area": 1.0,
            "dimensions": ["D1", "D2"],
            "sizes": [case["cols"], case["rows"]],
            "systolic_dimensions": ["D1", "D2"],
        },
    }


def mapping(case: dict) -> list[dict]:
    row_dim, col_dim, stream = SPATIAL[case["dataflow"]]
    size = {"D0": case["m"], "D1": case["n"], "D2": case["k"]}
    row_folds, col_folds = size[row_dim] // case["rows"], size[col_dim] // case["cols"]
    folds = [[row_dim, row_folds], [col_dim, col_folds]]
    if case["order"] == "row-outer":
        folds.reverse()
    temporal = [[stream, size[stream]]] + [loop for loop in folds if loop[1] > 1]
    return [
        {
            "name": "default",
            "spatial_mapping": {
                "D1": [f"{col_dim}, {case['cols']}"],
                "D2": [f"{row_dim}, {case['rows']}"],
            },
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


def _levels(cme, layer_op) -> list[dict]:
    """Per memory level of one operand: its name, element moves and accesses by direction, pJ."""
    from zigzag.mapping.data_movement import DataMoveAttr

    out = []
    mem_op = cme.memory_operand_links.layer_to_mem_op(layer_op)
    for level, accesses in enumerate(cme.memory_word_access[layer_op]):
        memory = cme.accelerator.get_memory_level(mem_op, level)
        moves = cme.mapping.unit_mem_data_movement[layer_op][level].get_attribute(
            DataMoveAttr.DATA_ELEM_MOVE_COUNT
        )
        out.append(
            {
                "memory": memory.name,
                "elements": {str(d): int(v) for d, v in moves.data.items()},
                "accesses": {str(d): int(v) for d, v in accesses.data.items()},
                "pj": float(cme.mem_energy_breakdown[layer_op][level]),
            }
        )
    return out


def run_case(case: dict, folder: Path) -> dict:
    import yaml
    from zigzag.api import get_hardware_performance_zigzag

    hardware, mapping_file = folder / f"{case['id']}_hw.yaml", folder / f"{case['id']}_map.yaml"
    hardware.write_text(
        yaml.safe_dump(accelerator(case), sort_keys=False)
    )  # memory order is the hierarchy
    mapping_file.write_text(yaml.safe_dump(mapping(case), sort_keys=False))
    energy, latency, cmes = get_hardware_performance_zigzag(
        workload(case),
        str(hardware),
        str(mapping_file),
        opt="energy",
        dump_folder=str(folder / case["id"]),
        loma_show_progress_bar=False,
    )
    cme = cmes[0][1][0][0]
    return {
        "id": case["id"],
        "energy_pj": float(energy),
        "latency_cycles": float(latency),
        "mac_pj": float(cme.mac_energy),
        "macs": int(cme.layer.total_mac_count),
        "temporal_mapping": str(cme.temporal_mapping),
        "levels": {
            LAYER_OPERAND[str(cme.memory_operand_links.layer_to_mem_op(op))]: _levels(cme, op)
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
