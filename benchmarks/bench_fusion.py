"""Fusion, measured: the GPT-2 MLP fused and unfused on a systolic machine with its memory, and
one LLaMA-2-7B layer's attention fused and unfused on GA-1.

(a) GPT-2 MLP (seq 1024, 768 -> 3072 -> 768, GELU, biases) on a 128x128 weight-stationary
    array at 1 GHz with one global buffer (A, B and 32-bit partial sums; 256 words a cycle each
    way), 8-bit operands and outputs, DRAM latency 100 cycles: a 4 MiB buffer at 512 bits a
    cycle, 4 MiB at 128 bits a cycle, and 1 MiB at 128 bits a cycle. For each, the best
    schedule by energy (the default technology table) of: the group fused (one event schedule,
    the hidden block on chip); the two products each with its own epilogue, the hidden tensor
    written to DRAM and read back ("unfused"); every operation its own kernel ("separate").
    Reported: cycles, DRAM bytes read and written, pJ per MAC, the cycles over the group's
    lower bound, and the CPU time of the search.
(b) LLaMA-2-7B attention (32 heads, head_dim 128): prefill over 2048 tokens (causal) and decode
    against a KV cache of 2048 tokens, on GA-1 with 64 and 256 slots (the chapter's other
    parameters). Fused: the best schedule of the attention's domains; unfused: Q K^T, the
    softmax and P V as separate programs, each at its best schedule. Reported: cycles, DRAM
    tiles, the cycles and tiles over the bound, the CPU time of timing the best fused program
    (its tree built and timed) and of the whole search.
(c) Verification of the chosen fused schedules: GA-1's on the reduced stand-in (labelled so),
    the systolic one on a smaller MLP under the same machine and schedule.

CPU times are time.process_time. Usage:
    python benchmarks/bench_fusion.py [--quick] [--out FILE]
--quick searches a few points per kind. Writes FILE (results/bench_fusion.json by default).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simcore.energy.fused import fused_cost  # noqa: E402
from simcore.energy.technology import default_technology  # noqa: E402
from simcore.fusion.groups import FusedMlp, decode, prefill  # noqa: E402
from simcore.ga1.fused import AttentionParams, fused_program  # noqa: E402
from simcore.ga1.fused.bounds import bound as ga1_bound  # noqa: E402
from simcore.ga1.fused.search import best_schedule  # noqa: E402
from simcore.ga1.fused.unfused import unfused  # noqa: E402
from simcore.ga1.machine import Machine  # noqa: E402
from simcore.systolic.fused.search import best_fused, best_unfused, by_energy  # noqa: E402
from simcore.systolic.fused.verify import verify_fused  # noqa: E402
from simcore.systolic.machine import SystolicMachine, machine_from_dict  # noqa: E402
from simcore.systolic.model import SystolicDesign  # noqa: E402

GPT2_MLP = FusedMlp(1024, 768, 3072, 768, activation="gelu", bias=True)
MACHINES = (("4 MiB", "512 bits"), ("4 MiB", "128 bits"), ("1 MiB", "128 bits"))
QUICK_ATTENTION = [
    AttentionParams(bq=1, bk=2, buffers=2, s_buffers=1),
    AttentionParams(bq=2, bk=4, buffers=2, s_buffers=2),
    AttentionParams(bq=4, bk=4, buffers=3, s_buffers=2),
]


def global_buffer_machine(capacity: str, bandwidth: str) -> SystolicMachine:
    bits = int(bandwidth.split()[0])
    return machine_from_dict(
        {
            "name": f"global buffer {capacity}, DRAM {bandwidth}/cycle",
            "array": {"rows": 128, "cols": 128, "dataflow": "ws", "clock": "1 GHz"},
            "words": {"operand_bits": 8, "accumulator_bits": 32, "output_bits": 8},
            "buffers": {
                "global": {
                    "holds": ["a", "b", "c"],
                    "capacity": capacity,
                    "read_width": "256 words/cycle",
                    "write_width": "256 words/cycle",
                }
            },
            "dram": {"bandwidth": f"{bits // 8} B/cycle", "latency": "100 cycles"},
        }
    )


def mlp_row(name: str, best: Any, seconds: float, tech: Any) -> dict[str, Any]:
    run = best.run
    cost = fused_cost(run, tech)
    return {
        "variant": name,
        "cycles": run.cycles,
        "dram_read_bytes": float(run.dram_bytes - run.dram_write_bytes),
        "dram_write_bytes": float(run.dram_write_bytes),
        "pj_per_mac": cost.energy_per_mac_pj,
        "bound_cycles": run.bound.cycles,
        "bound_ratio": run.bound_ratio,
        "kernels": len(run.kernels),
        "schedules": [s.describe() for s in best.schedules],
        "tried": best.tried,
        "search_cpu_s": seconds,
    }


def gpt2_mlp() -> list[dict[str, Any]]:
    tech = default_technology()
    rows = []
    for capacity, bandwidth in MACHINES:
        machine = global_buffer_machine(capacity, bandwidth)
        design = SystolicDesign(machine.array, machine.dataflow)
        objective = by_energy(tech)
        for name, search in (
            ("fused", lambda: best_fused(machine, design, GPT2_MLP, objective)),
            ("unfused", lambda: best_unfused(machine, design, GPT2_MLP, objective, epilogues=True)),
            ("separate", lambda: best_unfused(machine, design, GPT2_MLP, objective)),
        ):
            start = time.process_time()
            best = search()
            row = mlp_row(name, best, time.process_time() - start, tech)
            rows.append({"machine": f"{capacity}, {bandwidth}/cycle", **row})
            if name == "fused":
                small = dataclasses.replace(GPT2_MLP, m=256, hidden=1024)
                verdict = verify_fused(machine, design, small, best.schedules[0], seed=1)
                rows[-1]["verified_on"] = f"{small.describe()}: {verdict.detail}"
    return rows


def attention(quick: bool) -> list[dict[str, Any]]:
    rows = []
    for slots in (64, 256):
        machine = Machine(slots=slots)
        for phase, group in (
            ("prefill", prefill(32, 2048, 128)),
            ("decode", decode(32, 2048, 128)),
        ):
            start = time.process_time()
            points = None
            if quick:
                points = [
                    p
                    for p in QUICK_ATTENTION
                    if fused_program(group, machine.replace(slots=1 << 30), p).slots_needed <= slots
                ]
            best = best_schedule(group, machine, points)
            search = time.process_time() - start
            start = time.process_time()
            timed = fused_program(group, machine, best.program.params).timing()
            timing_cpu = time.process_time() - start
            start = time.process_time()
            apart = unfused(group, machine)
            unfused_cpu = time.process_time() - start
            b = ga1_bound(group, machine)
            verdict = best.program.verify(seed=2)
            rows.append(
                {
                    "machine": f"GA-1, {slots} slots",
                    "phase": phase,
                    "fused_cycles": timed.cycles,
                    "fused_tiles": timed.tiles_moved,
                    "fused_schedule": str(best.program.params),
                    "unfused_cycles": apart.cycles,
                    "unfused_tiles": apart.tiles,
                    "unfused_parts": [dataclasses.asdict(p) for p in apart.parts],
                    "bound_cycles": b.cycles,
                    "bound_tiles": b.tiles,
                    "fused_timing_cpu_ms": 1000 * timing_cpu,
                    "search_cpu_s": search,
                    "unfused_cpu_s": unfused_cpu,
                    "tried": best.tried,
                    "verification": verdict.describe(),
                }
            )
    return rows


def print_tables(mlp: list[dict[str, Any]], attn: list[dict[str, Any]]) -> None:
    print("GPT-2 MLP (1024 x 768 -> 3072 -> 768) on a 128x128 array with a global buffer")
    print(
        f"{'machine':<22} {'variant':<9} {'cycles':>11} {'DRAM read MB':>13} {'DRAM write MB':>14} {'pJ/MAC':>7} {'/bound':>7} {'search s':>9}"
    )
    for r in mlp:
        print(
            f"{r['machine']:<22} {r['variant']:<9} {r['cycles']:>11,} {r['dram_read_bytes'] / 1e6:>13.3f} "
            f"{r['dram_write_bytes'] / 1e6:>14.3f} {r['pj_per_mac']:>7.4f} {r['bound_ratio']:>7.3f} {r['search_cpu_s']:>9.1f}"
        )
        print(f"{'':<32} {'; '.join(r['schedules'])}")
    print()
    print("LLaMA-2-7B attention, one layer (32 heads, head_dim 128) on GA-1")
    print(
        f"{'machine':<16} {'phase':<8} {'fused cycles':>13} {'tiles':>10} {'unfused cycles':>15} {'tiles':>10} {'speed-up':>8} {'/bound':>7} {'timing ms':>9}"
    )
    for r in attn:
        print(
            f"{r['machine']:<16} {r['phase']:<8} {r['fused_cycles']:>13,} {r['fused_tiles']:>10,} "
            f"{r['unfused_cycles']:>15,} {r['unfused_tiles']:>10,} {r['unfused_cycles'] / r['fused_cycles']:>8.2f} "
            f"{r['fused_cycles'] / r['bound_cycles']:>7.3f} {r['fused_timing_cpu_ms']:>9.1f}"
        )
        print(f"{'':<26} {r['fused_schedule']}; {r['verification']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="search a few points per kind")
    parser.add_argument("--out", default=str(ROOT / "results" / "bench_fusion.json"))
    args = parser.parse_args()
    mlp = gpt2_mlp()
    attn = attention(args.quick)
    print_tables(mlp, attn)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"gpt2_mlp": mlp, "llama_attention": attn}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
