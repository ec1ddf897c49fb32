"""How close the best block schedule comes to its lower bound, on GEMMs whose blocking a buffer
constrains (ResNet-50, BERT-base and LLaMA-2-7B layers) on the bundled machines.

For each machine and GEMM: the fastest schedule of `simcore.systolic.blocked.enumerate.fastest`
(candidates ranked by a bound of their own, evaluated until none left can beat the best, or
--budget), its cycles, stall share and DRAM words, the bound's terms (compute, array, link) and
the ratio; and the fewest DRAM words of any candidate (`least_traffic`, counts alone) against
the compulsory and red-blue pebbling traffic; and the search's bound (`space_bound.search_bound`:
the least of every candidate's own bound) with the ratio to it. CPU time per case is printed.

Usage: python -m benchmarks.optimum.bench_memory_bounds [--machines tpu-v1,...] [--budget N] [--gemms N] [--json F] [--quick]
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from benchmarks import harness
from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked.enumerate import fastest, least_traffic
from simcore.systolic.blocked.space_bound import search_bound
from simcore.systolic.model import SystolicDesign

MACHINES = ("gemmini", "edge-npu", "tpu-v1", "tpuv4i")
GEMMS = {
    "resnet50 conv2 3x3": (3136, 576, 64),
    "resnet50 conv4 3x3": (196, 2304, 256),
    "resnet50 conv5 1x1": (49, 512, 2048),
    "bert-base ffn up": (512, 768, 3072),
    "llama2-7b q proj (2048 tokens)": (2048, 4096, 4096),
    "llama2-7b mlp up (2048 tokens)": (2048, 4096, 11008),
}
LARGE = ("llama2-7b q proj (2048 tokens)", "llama2-7b mlp up (2048 tokens)")
SMALL_ARRAYS = ("gemmini", "edge-npu")  # LLaMA layers take them minutes of search: left out


def measure(arch: str, name: str, dims: tuple[int, int, int], budget: int) -> dict[str, object]:
    machine = load_arch(arch)
    design = SystolicDesign(machine.array, machine.dataflow)
    shape = Shape(*dims)
    start = time.process_time()
    run, evaluated = fastest(machine, design, shape, budget)
    least = least_traffic(machine, design, shape)
    b = run.bound
    search = search_bound(machine, design, shape)
    return {
        "machine": arch,
        "gemm": name,
        "shape": list(dims),
        "schedule": run.schedule.describe(),
        "cycles": run.cycles,
        "compute_cycles": run.compute_cycles,
        "stall_share": round(run.stall_share, 4),
        "dram_words": float(run.counts.dram.link_words(machine)),
        "bound": b.cycles,
        "bound_compute": b.compute_cycles,
        "bound_array": b.array_cycles,
        "bound_link": b.link_cycles,
        "bound_by": b.bound_by,
        "ratio": round(run.cycles / b.cycles, 4),
        "search_bound": search.cycles,
        "search_ratio": round(run.cycles / search.cycles, 4),
        "evaluated": evaluated,
        "least_dram_words": least.value,
        "least_schedule": least.schedule.describe(),
        "compulsory_words": float(b.link_words) if b.pebbling_elements == 0 else None,
        "bound_words": float(b.link_words),
        "cpu_s": round(time.process_time() - start, 1),
    }


QUICK = {"machines": "tpu-v1", "budget": 3, "gemms": 2}


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick=QUICK)
    parser.add_argument("--machines", default=",".join(MACHINES))
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--gemms", type=int, default=len(GEMMS), help="the first N GEMMs")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    rows = []
    print(
        "| machine | GEMM | M x K x N | best schedule | cycles | stall | bound (by) | ratio | "
        "search bound | ratio | DRAM words | fewest words | words bound |"
    )
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for arch in args.machines.split(","):
        for name, dims in list(GEMMS.items())[: args.gemms]:
            if arch in SMALL_ARRAYS and name in LARGE:
                continue
            row = measure(arch, name, dims, args.budget)
            rows.append(row)
            print(
                f"| {arch} | {name} | {'x'.join(map(str, dims))} | {row['schedule']} | "
                f"{row['cycles']:,} | {row['stall_share']:.1%} | {row['bound']:,} "
                f"({row['bound_by']}) | {row['ratio']:.3f} | {row['search_bound']:,} | "
                f"{row['search_ratio']:.3f} | {row['dram_words']:,.0f} | "
                f"{row['least_dram_words']:,.0f} | {row['bound_words']:,.0f} |",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    harness.run(main)
