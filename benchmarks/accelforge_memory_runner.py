"""Evaluate fixed block mappings with AccelForge: reads the JSON list of cases of
benchmarks/bench_memory_peer.py on stdin, prints JSON results (the access counts per memory,
tensor and action).

Run with the Python of AccelForge's own virtualenv (accelforge 1.0.467, Python 3.12; it needs
Graphviz's `dot`); it imports nothing of this project. The architecture, outermost first: DRAM
(MainMemory), a scratchpad holding exactly one A and one B block (8-bit), an accumulator holding
exactly one C block (16-bit sums), an R x C array (inputs reused along its columns, sums along
its rows) with a weight register per PE, and the MAC. The mapping: the block loops in the
case's order (outermost first, each of its block's size), each tensor kept in its on-chip memory
right below the innermost block loop that indexes it (so it stays across the loops inside that
do not), then the block's K tiles, its N tiles, K x N across the array, the weight in the PE's
register and the block's M rows streaming (weight stationary).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

INDEXED_BY = {"A": "mk", "B": "kn", "C": "mn"}
STORE = {"A": "Scratchpad", "B": "Scratchpad", "C": "Accumulator"}


def arch(case: dict) -> str:
    bm, bk, bn = case["block"]

    def memory(name: str, size: str, keep: str) -> str:
        return f"""  - !Memory
    name: {name}
    size: {size}
    leak_power: 0
    area: 0
    tensors: {{keep: {keep}}}
    actions:
    - {{name: read, energy: 1, throughput: inf}}
    - {{name: write, energy: 1, throughput: inf}}
"""

    return (
        "arch:\n  nodes:\n"
        + memory("MainMemory", "inf", "All")
        + memory("Scratchpad", str((bm * bk + bk * bn) * 8), "A | B")
        + memory("Accumulator", str(bm * bn * 16), "C")
        + f"""  - !Container
    name: ProcessingElement
    spatial:
    - {{name: reuse_input, fanout: {case["cols"]}, reuse: input, min_usage: 1}}
    - {{name: reuse_output, fanout: {case["rows"]}, reuse: output, min_usage: 1}}
"""
        + memory("Register", "weight.bits_per_value if weight else 0", "B")
        + """  - !Compute
    name: MAC
    leak_power: 0
    area: 0
    actions:
    - {name: compute, energy: 1, throughput: 1}
"""
    )


def workload(case: dict) -> str:
    return f"""workload:
  iteration_space_shape:
    m: 0 <= m < {case["m"]}
    k: 0 <= k < {case["k"]}
    n: 0 <= n < {case["n"]}
  bits_per_value: {{A: 8, B: 8, C: 16}}
  einsums:
  - name: Matmul
    tensor_accesses:
    - {{name: A, projection: [m, k]}}
    - {{name: B, projection: [k, n]}}
    - {{name: C, projection: [m, n], output: True}}
    renames: {{weight: B, input: A, output: C}}
"""


def _node(kind: str, **fields: object) -> str:
    body = "".join(f"    {key}: {value}\n" for key, value in fields.items())
    return f"  - !{kind}\n{body}"


def mapping(case: dict) -> str:
    block = dict(zip("mkn", case["block"]))
    order = case["order"]
    innermost = {t: max(order.index(d) for d in dims) for t, dims in INDEXED_BY.items()}
    text = "mapping:\n  nodes:\n" + _node("Storage", tensors="[A, B, C]", component="MainMemory")
    for level, dim in enumerate(order):
        text += _node("Temporal", rank_variable=dim, tile_shape=block[dim])
        for tensor in "ABC":
            if innermost[tensor] == level:
                text += _node("Storage", tensors=f"[{tensor}]", component=STORE[tensor])
    text += _node("Temporal", rank_variable="k", tile_shape=case["rows"])
    text += _node("Temporal", rank_variable="n", tile_shape=case["cols"])
    text += _node(
        "Spatial",
        rank_variable="n",
        tile_shape=1,
        name="reuse_input",
        component="ProcessingElement",
    )
    text += _node(
        "Spatial",
        rank_variable="k",
        tile_shape=1,
        name="reuse_output",
        component="ProcessingElement",
    )
    text += _node("Storage", tensors="[B]", component="Register")
    text += _node("Temporal", rank_variable="m", tile_shape=1)
    return text + _node("Compute", einsum="Matmul", component="MAC")


def run_case(case: dict, folder: Path) -> dict:
    import accelforge as af

    files = {"arch": arch(case), "workload": workload(case), "mapping": mapping(case)}
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(text)
    start = time.process_time()
    spec = af.Spec.from_yaml(*(str(folder / f"{name}.yaml") for name in files))
    row = spec.evaluate_mapping().data.iloc[0]
    prefix = "Matmul<SEP>action<SEP>"
    actions = {
        key[len(prefix) :].replace("<SEP>", " "): float(value)
        for key, value in row.items()
        if key.startswith(prefix)
    }
    return {"id": case["id"], "actions": actions, "cpu_s": round(time.process_time() - start, 2)}


def main() -> None:
    import os
    import platform
    from importlib.metadata import version

    cases = json.load(sys.stdin)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # the model writes its drawings beside it
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
