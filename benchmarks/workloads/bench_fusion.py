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
(c) The LLaMA-2-7B MLP (4096 -> 11008 -> 4096, one up projection with SiLU: the gate
    projection is not a fused kind) fused and unfused on the systolic machine of (a) with a
    4 MiB and a 1 MiB buffer at 128 bits a cycle, prefill (2048 tokens) and decode (one), each
    the best by energy; and the least GA-1 slots its fused program needs.
(d) Verification of the chosen fused schedules: GA-1's on the reduced stand-in (labelled so),
    the systolic one on a smaller MLP under the same machine and schedule.

CPU times are time.process_time. Usage:
    python -m benchmarks.workloads.bench_fusion [--machines N] [--slots 64,256] [--tokens M]
        [--hidden H] [--parts gpt2 attention llama-mlp] [--out FILE]
--quick (a smoke test) takes the first machine, a 256 x 768 -> 1024 -> 768 MLP, 256 slots, a few
attention schedules and (c)'s decode on the 1 MiB buffer only. Writes FILE
(results/bench_fusion.json by default).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from simcore.energy.fused import fused_cost
from simcore.energy.technology import default_technology
from simcore.fusion.groups import FusedMlp, decode, prefill
from simcore.ga1.fused import AttentionParams, FusedParams, fused_program
from simcore.ga1.fused.bounds import bound as ga1_bound
from simcore.ga1.fused.program import slots_needed as ga1_slots_needed
from simcore.ga1.fused.search import all_points, best_schedule
from simcore.ga1.fused.unfused import unfused
from simcore.ga1.machine import Machine
from simcore.systolic.fused.search import best_fused, best_unfused, by_energy
from simcore.systolic.fused.verify import verify_fused
from simcore.systolic.machine import SystolicMachine, machine_from_dict
from simcore.systolic.model import SystolicDesign

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


def gpt2_mlp(machines: int, mlp: FusedMlp = GPT2_MLP) -> list[dict[str, Any]]:
    tech = default_technology()
    rows = []
    for capacity, bandwidth in MACHINES[:machines]:
        machine = global_buffer_machine(capacity, bandwidth)
        design = SystolicDesign(machine.array, machine.dataflow)
        objective = by_energy(tech)
        for name, search in (
            ("fused", lambda: best_fused(machine, design, mlp, objective)),
            ("unfused", lambda: best_unfused(machine, design, mlp, objective, epilogues=True)),
            ("separate", lambda: best_unfused(machine, design, mlp, objective)),
        ):
            start = time.process_time()
            best = search()
            row = mlp_row(name, best, time.process_time() - start, tech)
            rows.append({"machine": f"{capacity}, {bandwidth}/cycle", **row})
            if name == "fused":
                small = dataclasses.replace(mlp, m=min(mlp.m, 256), hidden=min(mlp.hidden, 1024))
                verdict = verify_fused(machine, design, small, best.schedules[0], seed=1)
                rows[-1]["verified_on"] = f"{small.describe()}: {verdict.detail}"
    return rows


def attention(quick: bool, slot_counts: list[int]) -> list[dict[str, Any]]:
    rows = []
    for slots in slot_counts:
        machine = Machine(slots=slots)
        for phase, group in (
            ("prefill", prefill(32, 2048, 128)),
            ("decode", decode(32, 2048, 128)),
        ):
            start = time.process_time()
            points: list[FusedParams] | None = None
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
            words = machine.T * machine.T
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
                    "fused_dram_words": timed.tiles_moved * words,
                    "unfused_dram_words": apart.tiles * words,
                    "fused_energy_pj": best.program.cost(None, timed).energy_pj,
                    "unfused_energy_pj": apart.energy_pj,
                    "macs": group.macs,
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


def llama_mlp(quick: bool) -> list[dict[str, Any]]:
    """The LLaMA-2-7B MLP (one up projection, SiLU) fused and unfused on the systolic machine,
    prefill over 2048 tokens and decode of one; on GA-1 the fused group's least slots."""
    tech = default_technology()
    objective = by_energy(tech)
    rows = []
    for phase, tokens in (("prefill", 2048), ("decode", 1)):
        if quick and phase == "prefill":
            continue
        group = FusedMlp(tokens, 4096, 11008, 4096, activation="silu", bias=False)
        ga1_slots = min(
            ga1_slots_needed(group, Machine(slots=1 << 30), p) for p in all_points(group)
        )
        for capacity in ("1 MiB",) if quick else ("4 MiB", "1 MiB"):
            machine = global_buffer_machine(capacity, "128 bits")
            design = SystolicDesign(machine.array, machine.dataflow)
            for name, search in (
                ("fused", lambda: best_fused(machine, design, group, objective)),
                (
                    "unfused",
                    lambda: best_unfused(machine, design, group, objective, epilogues=True),
                ),
            ):
                start = time.process_time()
                best = search()
                row = mlp_row(name, best, time.process_time() - start, tech)
                row["dram_words"] = float(best.run.dram_words)
                row["energy_pj"] = fused_cost(best.run, tech).energy_pj
                rows.append(
                    {"machine": f"{capacity}, 128 bits/cycle", "phase": phase, **row,
                     "ga1_fused_least_slots": ga1_slots}
                )  # fmt: skip
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
        print(
            f"{'':<26} DRAM words {r['fused_dram_words']:,} / {r['unfused_dram_words']:,}, "
            f"energy {r['fused_energy_pj'] / 1e6:,.1f} / {r['unfused_energy_pj'] / 1e6:,.1f} uJ"
        )


def print_llama_mlp(rows: list[dict[str, Any]]) -> None:
    print("LLaMA-2-7B MLP (4096 -> 11008 SiLU -> 4096) on the 128x128 array, 128 bits/cycle")
    print(
        f"{'machine':<22} {'phase':<8} {'variant':<8} {'cycles':>12} {'DRAM words':>14} "
        f"{'energy uJ':>11} {'pJ/MAC':>7} {'/bound':>7} {'search s':>9}"
    )
    for r in rows:
        print(
            f"{r['machine']:<22} {r['phase']:<8} {r['variant']:<8} {r['cycles']:>12,} "
            f"{r['dram_words']:>14,.0f} {r['energy_pj'] / 1e6:>11,.1f} {r['pj_per_mac']:>7.3f} "
            f"{r['bound_ratio']:>7.3f} {r['search_cpu_s']:>9.1f}"
        )
        print(f"{'':<32} {'; '.join(r['schedules'])}")
    if rows:
        print(f"on GA-1 the fused MLP needs at least {rows[0]['ga1_fused_least_slots']} slots")


PARTS = ("gpt2", "attention", "llama-mlp")


# --quick: the first machine, a smaller MLP, 256 slots, a few attention schedules and the LLaMA
# MLP's decode on 1 MiB (attention(quick), llama_mlp(quick)); written to a temporary file
QUICK = {
    "machines": 1,
    "tokens": 256,
    "hidden": 1024,
    "slots": "256",
    "out": str(Path(tempfile.gettempdir()) / "bench_fusion_quick.json"),
}


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick=QUICK)
    parser.add_argument("--out", default=str(harness.RESULTS / "bench_fusion.json"))
    parser.add_argument("--machines", type=int, default=len(MACHINES), help="the first N machines")
    parser.add_argument("--slots", default="64,256", help="GA-1's slot counts")
    parser.add_argument("--tokens", type=int, default=GPT2_MLP.m, help="the MLP's rows")
    parser.add_argument(
        "--hidden", type=int, default=GPT2_MLP.hidden, help="the MLP's hidden width"
    )
    parser.add_argument(
        "--parts", nargs="+", choices=PARTS, default=list(PARTS), help="default: every part"
    )
    args = parser.parse_args(argv)
    mlp = (
        gpt2_mlp(args.machines, dataclasses.replace(GPT2_MLP, m=args.tokens, hidden=args.hidden))
        if "gpt2" in args.parts
        else []
    )
    slot_counts = [int(n) for n in args.slots.split(",")]
    attn = attention(args.quick, slot_counts) if "attention" in args.parts else []
    print_tables(mlp, attn)
    llama = llama_mlp(args.quick) if "llama-mlp" in args.parts else []
    print()
    print_llama_mlp(llama)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"gpt2_mlp": mlp, "llama_attention": attn, "llama_mlp": llama}, indent=1)
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    harness.run(main)
