"""A whole network's fusion searched on GA-1, or on a systolic architecture: every operation
timed apart, every fusible group (epilogues, the MLP, attention) timed fused at the best schedule
of its kind's domains, each region's choice of which edges fuse the best by the objective
(cycles, or energy), each group's schedule too (autotune.results.fusion; the command
`python -m autotune ops NAME --oracle ga1 --fuse [OBJECTIVE]`, or `--oracle systolic --arch A`).

For each network and scratchpad: cycles, energy and DRAM words of the whole network apart and
fused, and of one decoder or encoder layer (the repeated block, one run); the groups found and
fused; the CPU time of the whole search (time.process_time, every cache emptied first: the
graph built, every operation timed apart, every group timed fused and its best verified).

Usage:
    python -m benchmarks.workloads.bench_fusion_network [--networks NAME,...] [--slots 64,256]
        [--objectives cycles,energy] [--oracle ga1|systolic] [--arch NAME] [--out FILE]
NAME is a bundled network with its settings after colons, e.g. llama2_7b:prefill:2048 (phase,
seq), gpt2:1024 (seq). --slots applies to GA-1, --arch (tpuv4i by default) to the systolic
oracle. --quick runs BERT-base at sequence 128 on 64 slots by cycles. Writes FILE
(results/bench_fusion_network.json by default).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from workloads.graph import Graph

NETWORKS = "llama2_7b:prefill:2048,llama2_7b:decode:2048,gpt2:1024,bert_base:128"
LAYER = {"llama2_7b": "layers", "gpt2": "h", "bert_base": "encoder.layer"}
QUICK = {"networks": "bert_base:128", "slots": "64", "objectives": "cycles"}


def build(spec: str) -> Graph:
    from workloads.networks import build as build_network

    name, *rest = spec.split(":")
    if name == "llama2_7b":
        return build_network(name, phase=rest[0], seq=int(rest[1]))
    return build_network(name, **({"seq": int(rest[0])} if rest else {}))


def clear_caches() -> None:
    from autotune.oracles.ga1 import fusion, operations
    from autotune.oracles.systolic_memory import fusion as systolic_fusion
    from autotune.oracles.systolic_memory import operations as systolic_operations

    for module in (fusion, systolic_fusion):
        module.time_fused.cache_clear()
    for ops in (operations, systolic_operations):
        ops._product.cache_clear()
        ops._vector.cache_clear()


def measure(spec: str, slots: int, objective: str, arch: str = "") -> dict[str, Any]:
    """On GA-1 with `slots`, or on the systolic architecture `arch` when given."""
    from autotune.oracles import get
    from autotune.results.fusion import search

    oracle = get("systolic" if arch else "ga1")
    machine = oracle.parse_machine(f"arch={arch}" if arch else f"slots={slots}")
    clear_caches()
    started = time.process_time()
    graph = build(spec)
    plan = search(graph, oracle, machine, objective=objective)
    cpu = time.process_time() - started
    layer_name = LAYER[spec.split(":")[0]]
    layer_count = next(op.count for op in graph.operations if op.block == layer_name)
    layer = {k: v / layer_count for k, v in plan.totals(layer_name).items()}
    return {
        "network": graph.name,
        "slots": arch or slots,
        "objective": objective,
        "cpu_s": cpu,
        "network_totals": plan.totals(),
        "layer": layer,
        "groups": sum(len(r.groups) for r in plan.regions),
        "fused": [g.candidate.name for r in plan.regions for g in r.chosen],
        "regions": len(plan.regions),
    }


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def print_tables(found: list[dict[str, Any]]) -> None:
    rows = []
    for f in found:
        t = f["layer"]
        rows.append(
            [
                f["network"],
                f["slots"],
                f["objective"],
                f"{t['apart_cycles']:,.0f}",
                f"{t['fused_cycles']:,.0f}",
                _ratio(t["apart_cycles"], t["fused_cycles"]),
                f"{t['apart_energy_pj'] / 1e6:,.1f}",
                f"{t['fused_energy_pj'] / 1e6:,.1f}",
                f"{t['apart_dram_words']:,.0f}",
                f"{t['fused_dram_words']:,.0f}",
                f"{len(f['fused'])} of {f['groups']}",
            ]
        )
    print("One layer (the repeated block, one run):")
    print(
        harness.table(
            [
                "network",
                "machine",
                "objective",
                "cycles apart",
                "cycles fused",
                "speed-up",
                "uJ apart",
                "uJ fused",
                "DRAM words apart",
                "DRAM words fused",
                "groups fused",
            ],
            rows,
        )
    )
    rows = []
    for f in found:
        t = f["network_totals"]
        rows.append(
            [
                f["network"],
                f["slots"],
                f["objective"],
                f"{t['apart_cycles']:,.0f}",
                f"{t['fused_cycles']:,.0f}",
                _ratio(t["apart_cycles"], t["fused_cycles"]),
                f"{t['apart_dram_words']:,.0f}",
                f"{t['fused_dram_words']:,.0f}",
                f"{f['cpu_s']:.1f} s",
            ]
        )
    print("\nThe whole network, and the CPU time of its fusion search:")
    print(
        harness.table(
            [
                "network",
                "machine",
                "objective",
                "cycles apart",
                "cycles fused",
                "speed-up",
                "DRAM words apart",
                "DRAM words fused",
                "search CPU",
            ],
            rows,
        )
    )
    for f in found:
        machine = f["slots"] if isinstance(f["slots"], str) else f"{f['slots']} slots"
        where = f"{f['network']}, {machine}, by {f['objective']}"
        print(f"\n{where}, fused: " + "; ".join(f["fused"]))


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick=QUICK)
    parser.add_argument("--networks", default=NETWORKS)
    parser.add_argument("--slots", default="64,256")
    parser.add_argument("--objectives", default="cycles,energy")
    parser.add_argument("--oracle", choices=("ga1", "systolic"), default="ga1")
    parser.add_argument("--arch", default="tpuv4i")
    parser.add_argument("--out", default=str(harness.RESULTS / "bench_fusion_network.json"))
    args = parser.parse_args(argv)
    arch = args.arch if args.oracle == "systolic" else ""
    machines = ["0"] if arch else args.slots.split(",")
    found = [
        measure(spec, int(slots), objective, arch)
        for spec in args.networks.split(",")
        for slots in machines
        for objective in args.objectives.split(",")
    ]
    print_tables(found)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(found, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    harness.run(main)
