"""LLaMA-2-7B on the bundled TPU-like machines: decode at batch 1 against the time to move the
weights over the DRAM link, prefill against the compute bound.

For each GEMM of one decoder layer (the bundled workload files, weight = runs per layer) the
fastest block schedule of `simcore.systolic.blocked.enumerate.fastest` (the runs of one operation,
an einsum's heads, as one batch over the machine's arrays: `batch.fastest_batch`, as the
systolic command times them): its cycles, stall share,
DRAM bytes and energy (default technology table). Decode: each GEMM's cycles over its B
operand's bytes (weights, or the KV cache) over the link's bandwidth (plus the link's latency);
prefill: over the compute bound. Totals over the layer, and per token for 32 layers (GEMMs only:
the other ops of a layer and the LM head are left out).

Usage: python -m benchmarks.workloads.bench_memory_llama [--machines tpu-v1,tpuv4i] [--budget N] [--workloads A,B] [--quick]
"""

from __future__ import annotations

import math
import time

import tomllib

from benchmarks import harness
from benchmarks.harness import ROOT
from simcore.energy.memory import memory_cost
from simcore.energy.technology import default_technology
from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked.batch import BatchRun, fastest_batch
from simcore.systolic.blocked.enumerate import fastest
from simcore.systolic.blocked.evaluate import MemoryRun
from simcore.systolic.model import SystolicDesign

LAYERS = 32
WORKLOADS = ("llama2_7b_decode_b1", "llama2_7b_prefill")


def workload(name: str) -> list[tuple[str, Shape, int, int]]:
    """(name, shape, runs per layer, runs timed together) of each GEMM."""
    data = tomllib.loads((ROOT / "workloads" / "networks" / f"{name}.toml").read_text())
    out = []
    for g in data["gemm"]:
        runs = int(g.get("weight", 1))
        together = runs if len(g.get("layers", [])) == 1 else 1
        out.append((g["name"], Shape(*map(int, g["shape"].split("x"))), runs, together))
    return out


QUICK = {"machines": "tpu-v1", "budget": 3, "workloads": "llama2_7b_decode_b1"}


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick=QUICK)
    parser.add_argument("--machines", default="tpu-v1,tpuv4i")
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    args = parser.parse_args(argv)
    tech = default_technology()
    for arch in args.machines.split(","):
        machine = load_arch(arch)
        design = SystolicDesign(machine.array, machine.dataflow)
        link = machine.memory.dram
        for name in args.workloads.split(","):
            decode = "decode" in name
            print(f"\n{arch} {name}")
            print(
                "| GEMM | M x K x N | runs | schedule | cycles | stall | DRAM MB | "
                f"{'B over link' if decode else 'compute bound'} | ratio | energy uJ |"
            )
            print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
            total = [0, 0, 0.0, 0.0]  # cycles, reference, bytes, pJ
            for gemm, shape, runs, together in workload(name):
                start = time.process_time()
                run: MemoryRun | BatchRun
                if together == 1:
                    one, _n = fastest(machine, design, shape, args.budget)
                    run = one
                else:
                    batch, _n = fastest_batch(machine, design, shape, together, args.budget)
                    run, one = batch, batch.one
                if decode:  # B: the weights or the cached keys and values
                    words = together * shape.k * shape.n
                    reference = math.ceil(words / link.words_per_cycle) + link.latency
                else:
                    reference = run.bound.compute_cycles
                dram = together * float(sum(one.counts.dram.bytes(machine).values()))
                pj = together * memory_cost(one, tech).energy_pj
                for n, v in enumerate((run.cycles, reference, dram, pj)):
                    total[n] += runs // together * v
                print(
                    f"| {gemm.split('.')[-1]} | {shape.m}x{shape.k}x{shape.n} | {runs} | "
                    f"{one.schedule.describe()} | {run.cycles:,} | {run.stall_share:.1%} | "
                    f"{dram / 1e6:,.2f} | {reference:,} | {run.cycles / reference:.3f} | "
                    f"{pj / 1e6:,.1f} |  ({time.process_time() - start:.1f} s)",
                    flush=True,
                )
            cycles, figure, dram, pj = total
            seconds = LAYERS * cycles / float(machine.clock_hz)
            tokens = 1 if decode else 2048
            print(
                f"layer: {cycles:,.0f} cycles, {cycles / figure:.3f} x the "
                f"{'weights-over-link' if decode else 'compute'} figure; {LAYERS} layers: "
                f"{tokens / seconds:,.1f} tokens/s, {LAYERS * pj * 1e-12 / tokens:.4f} J/token, "
                f"{LAYERS * dram / 1e9:,.2f} GB of DRAM traffic"
            )
    return 0


if __name__ == "__main__":
    harness.run(main)
