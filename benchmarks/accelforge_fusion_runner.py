"""Run AccelForge's fusion-aware mapper (FFM) on an MLP of two products, fused or not: reads the
JSON list of cases of benchmarks/bench_fusion_peer.py on stdin, prints JSON results.

Run with the Python of AccelForge's own virtualenv (accelforge 1.0.467, Python 3.12); it imports
nothing of this project. Each case becomes a spec: the workload H[m, h] = X[m, d] W1[d, h], then
Y[m, e] = H[m, h] W2[h, e], every tensor at the case's bits; the architecture, outermost first:
DRAM (MainMemory, its bandwidth in bits a cycle), one global buffer of the case's bits (its
ports in bits a cycle), an R x C array (inputs reused along the columns, outputs along the rows)
with a weight register per PE, and the MAC. Fused: DRAM keeps every tensor but the intermediate
H, which the mapper may keep on chip; unfused: DRAM keeps every tensor, H included. Energies
are the case's, per bit. The best mapping by the mapper's default metric (energy) is reported:
its DRAM reads and writes per tensor (bits), latency and energy.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path


def arch(case: dict) -> str:
    keep = "~Intermediates, may_keep: All" if case["fused"] else "All"
    e = case["energy_pj_per_bit"]
    return f"""arch:
  nodes:
  - !Memory
    name: MainMemory
    size: inf
    leak_power: 0
    area: 0
    tensors: {{keep: {keep}}}
    actions:
    - {{name: read, energy: {e["dram_read"]}, throughput: {case["dram_bits"]}}}
    - {{name: write, energy: {e["dram_write"]}, throughput: {case["dram_bits"]}}}
  - !Memory
    name: GlobalBuffer
    size: {case["buffer_bits"]}
    leak_power: 0
    area: 0
    tensors: {{keep: ~MainMemory, may_keep: All}}
    actions:
    - {{name: read, energy: {e["buffer_read"]}, throughput: {case["port_bits"]}}}
    - {{name: write, energy: {e["buffer_write"]}, throughput: {case["port_bits"]}}}
  - !Container
    name: ProcessingElement
    spatial:
    - {{name: reuse_input, fanout: {case["cols"]}, reuse: input, min_usage: 1}}
    - {{name: reuse_output, fanout: {case["rows"]}, reuse: output, min_usage: 1}}
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


def workload(case: dict) -> str:
    return f"""workload:
  iteration_space_shape:
    m: 0 <= m < {case["m"]}
    d: 0 <= d < {case["d"]}
    h: 0 <= h < {case["hidden"]}
    e: 0 <= e < {case["d_out"]}
  bits_per_value: {{All: {case["bits"]}}}
  einsums:
  - name: Up
    tensor_accesses:
    - {{name: X, projection: [m, d]}}
    - {{name: W1, projection: [d, h]}}
    - {{name: H, projection: [m, h], output: True}}
    renames: {{weight: W1, input: X, output: H}}
  - name: Down
    tensor_accesses:
    - {{name: H, projection: [m, h]}}
    - {{name: W2, projection: [h, e]}}
    - {{name: Y, projection: [m, e], output: True}}
    renames: {{weight: W2, input: H, output: Y}}
"""


def run_case(case: dict, folder: Path) -> dict:
    import accelforge as af

    (folder / "arch.yaml").write_text(arch(case))
    (folder / "workload.yaml").write_text(workload(case))
    start = time.process_time()
    spec = af.Spec.from_yaml(str(folder / "arch.yaml"), str(folder / "workload.yaml"))
    row = spec.map_workload_to_arch(print_progress=False).data.iloc[0]
    dram: dict[str, float] = {}
    for key, value in row.items():
        parts = str(key).split("<SEP>")
        if len(parts) == 5 and parts[1:3] == ["action", "MainMemory"] and float(value):
            name = f"{parts[3]} {parts[4]}"
            dram[name] = dram.get(name, 0.0) + float(value)
    return {
        "id": case["id"],
        "latency_cycles": float(row["Total<SEP>latency"]),
        "energy_pj": float(row["Total<SEP>energy"]),
        "dram_bits": dram,
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
