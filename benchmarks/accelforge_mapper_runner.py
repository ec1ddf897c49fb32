"""Run AccelForge's mapper (FFM) on GEMMs for a machine with bounded buffers: reads the JSON list
of cases of benchmarks/bench_memory_mappers.py on stdin, prints JSON results.

Run with the Python of AccelForge's own virtualenv (accelforge 1.0.467, Python 3.12; it needs
Graphviz's `dot`); it imports nothing of this project. Each case becomes a spec: the workload
C[m, n] = A[m, k] B[k, n] (A and B at the operand width, C at the accumulator width, so that a
C tile takes the room our partial sums take), and the architecture, outermost first: DRAM
(MainMemory, its bandwidth in bits a cycle), the machine's on-chip stores (each keeping the
tensors it holds, its capacity and widths), an R x C array (inputs reused along the columns,
outputs along the rows) with a weight register per PE, and the MAC (one a cycle). Energies are
the case's, per bit. The mapper searches the loop nest; the best mapping by its default metric
(energy) is reported: its DRAM reads and writes per tensor (in elements), latency and energy.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

TENSOR = {"I1": "input", "I2": "weight", "O": "output"}
NAMES = {"I1": "A", "I2": "B", "O": "C"}


def _memory(name: str, size: str, keep: str, spec: dict, may_keep: str | None = None) -> str:
    tensors = f"{{keep: {keep}" + (f", may_keep: {may_keep}}}" if may_keep else "}")
    return f"""  - !Memory
    name: {name}
    size: {size}
    leak_power: 0
    area: 0
    tensors: {tensors}
    actions:
    - {{name: read, energy: {spec["read_pj_per_byte"] / 8}, throughput: {spec["read_bits"]}}}
    - {{name: write, energy: {spec["write_pj_per_byte"] / 8}, throughput: {spec["write_bits"]}}}
"""


def arch(case: dict) -> str:
    dram = case["memories"][-1]
    text = "arch:\n  nodes:\n" + _memory("MainMemory", "inf", "~Intermediates", dram, "All")
    # the stores, outermost first: buffers, then the accumulator
    stores = sorted(case["memories"][:-1], key=lambda m: m["name"] == "accumulator")
    for spec in stores:
        keep = " | ".join(TENSOR[op] for op in spec["operands"])
        text += _memory(spec["name"], str(spec["size_bits"]), keep, spec)
    cols, rows = case["cols"], case["rows"]
    text += f"""  - !Container
    name: ProcessingElement
    spatial:
    - {{name: reuse_input, fanout: {cols}, reuse: input, min_usage: 1}}
    - {{name: reuse_output, fanout: {rows}, reuse: output, min_usage: 1}}
  - !Memory
    name: Register
    size: weight.bits_per_value if weight else 0
    area: 0
    leak_power: 0
    actions:
    - {{name: read, energy: 0, throughput: inf}}
    - {{name: write, energy: 0, throughput: inf}}
    tensors: {{keep: weight}}
  - !Compute
    name: MAC
    leak_power: 0
    area: 0
    actions:
    - {{name: compute, energy: {case["mac_pj"]}, throughput: 1}}
"""
    return text


def workload(case: dict) -> str:
    p = case["precision"]
    return f"""workload:
  iteration_space_shape:
    m: 0 <= m < {case["m"]}
    k: 0 <= k < {case["k"]}
    n: 0 <= n < {case["n"]}
  bits_per_value: {{A: {p["I"]}, B: {p["W"]}, C: {p["O"]}}}
  einsums:
  - name: Matmul
    tensor_accesses:
    - {{name: A, projection: [m, k]}}
    - {{name: B, projection: [k, n]}}
    - {{name: C, projection: [m, n], output: True}}
    renames: {{weight: B, input: A, output: C}}
"""


def run_case(case: dict, folder: Path) -> dict:
    import accelforge as af

    (folder / "arch.yaml").write_text(arch(case))
    (folder / "workload.yaml").write_text(workload(case))
    start = time.process_time()
    spec = af.Spec.from_yaml(str(folder / "arch.yaml"), str(folder / "workload.yaml"))
    mappings = spec.map_workload_to_arch(print_progress=False)
    row = mappings.data.iloc[0]
    bits = {"A": case["precision"]["I"], "B": case["precision"]["W"], "C": case["precision"]["O"]}
    dram = {
        f"{tensor}_{action}": float(
            row.get(f"Matmul<SEP>action<SEP>MainMemory<SEP>{tensor}<SEP>{action}", 0.0)
        )
        / bits[tensor]
        for tensor in "ABC"
        for action in ("read", "write")
    }
    return {
        "id": case["id"],
        "latency_cycles": float(row["Total<SEP>latency"]),
        "energy_pj": float(row["Total<SEP>energy"]),
        "dram_elements": dram,
        "cpu_s": round(time.process_time() - start, 2),
    }


def main() -> None:
    import os
    import platform
    from importlib.metadata import version

    cases = json.load(sys.stdin)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # the mapper writes its drawings beside it
        for case in cases:
            folder = Path(tmp) / str(len(results))
            folder.mkdir()
            results.append(run_case(case, folder))
    json.dump(
        {
            "accelforge_version": version("accelforge"),
            "python": platform.python_version(),
            "results": results,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
