"""LLaMA-2-7B on the bundled TPU-like machines: decode at batch 1 against the time to move the
weights over the DRAM link, prefill against the compute bound.

For each GEMM of one decoder layer (the bundled workload files, weight = runs per layer) the
fastest block schedule of `simcore.systolic.blocked.enumerate.fastest`: its cycles, stall share,
DRAM bytes and energy (default technology table). Decode: each GEMM's cycles over its B
operand's bytes (weights, or the KV cache) over the link's bandwidth (plus the link's latency);
prefill: over the compute bound. Totals over the layer, and per token for 32 layers (GEMMs only:
the other ops of a layer and the LM head are left out).

Usage: python benchmarks/bench_memory_llama.py [--machines tpu-v1,tpuv4i] [--budget N]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simcore.energy.memory import memory_cost  # noqa: E402
from simcore.energy.technology import default_technology  # noqa: E402
from simcore.shape import Shape  # noqa: E402
from simcore.systolic.archs import load_arch  # noqa: E402
from simcore.systolic.blocked.enumerate import fastest  # noqa: E402
from simcore.systolic.model import SystolicDesign  # noqa: E402

LAYERS = 32
WORKLOADS = ("llama2_7b_decode_b1", "llama2_7b_prefill")


def workload(name: str) -> list[tuple[str, Shape, int]]:
    for folder in ("workloads/networks", "search_spaces/workloads"):
        path = ROOT / folder / f"{name}.toml"
        if path.exists():
            data = tomllib.loads(path.read_text())
            return [
                (g["name"], Shape(*map(int, g["shape"].split("x"))), int(g.get("weight", 1)))
                for g in data["gemm"]
            ]
    raise SystemExit(f"workload {name} not found")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", default="tpu-v1,tpuv4i")
    parser.add_argument("--budget", type=int, default=150)
    args = parser.parse_args()
    tech = default_technology()
    for arch in args.machines.split(","):
        machine = load_arch(arch)
        design = SystolicDesign(machine.array, machine.dataflow)
        link = machine.memory.dram
        for name in WORKLOADS:
            decode = "decode" in name
            print(f"\n{arch} {name}")
            print(
                "| GEMM | M x K x N | runs | schedule | cycles | stall | DRAM MB | "
                f"{'B over link' if decode else 'compute bound'} | ratio | energy uJ |"
            )
            print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
            total = [0, 0, 0.0, 0.0]  # cycles, reference, bytes, pJ
            for gemm, shape, runs in workload(name):
                start = time.process_time()
                run, _n = fastest(machine, design, shape, args.budget)
                if decode:
                    words = shape.k * shape.n  # B: the weights or the cached keys and values
                    reference = math.ceil(words / link.words_per_cycle) + link.latency
                else:
                    reference = run.bound.compute_cycles
                dram = float(sum(run.counts.dram.bytes(machine).values()))
                pj = memory_cost(run, tech).energy_pj
                for n, v in enumerate((run.cycles, reference, dram, pj)):
                    total[n] += runs * v
                print(
                    f"| {gemm.split('.')[-1]} | {shape.m}x{shape.k}x{shape.n} | {runs} | "
                    f"{run.schedule.describe()} | {run.cycles:,} | {run.stall_share:.1%} | "
                    f"{dram / 1e6:,.2f} | {reference:,} | {run.cycles / reference:.3f} | "
                    f"{pj / 1e6:,.1f} |  ({time.process_time() - start:.1f} s)",
                    flush=True,
                )
            cycles, reference, dram, pj = total
            seconds = LAYERS * cycles / float(machine.clock_hz)
            tokens = 1 if decode else 2048
            print(
                f"layer: {cycles:,.0f} cycles, {cycles / reference:.3f} x the "
                f"{'weights-over-link' if decode else 'compute'} figure; {LAYERS} layers: "
                f"{tokens / seconds:,.1f} tokens/s, {LAYERS * pj * 1e-12 / tokens:.4f} J/token, "
                f"{LAYERS * dram / 1e9:,.2f} GB of DRAM traffic"
            )


if __name__ == "__main__":
    main()
