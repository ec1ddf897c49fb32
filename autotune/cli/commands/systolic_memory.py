"""`autotune systolic --arch NAME|FILE`: one GEMM (or every GEMM of a workload) on a systolic
machine with its memory system: the fastest block schedule an enumeration finds
(simcore.systolic.blocked.enumerate), its cycles and stall cycles, DRAM traffic per operand, energy
with the DRAM line and area (simcore.energy.memory, the technology table of --tech), and the lower
bound it is held to. A workload's total adds runs per second, tokens per second and joules per
token at the machine's clock (--tokens a run produces, --layers runs per token)."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

from autotune.cli.args import shape_arg
from autotune.cli.errors import UsageError
from autotune.cli.systolic_machine import technology
from autotune.cli.workloads import load
from workloads.listing import weight_text

if TYPE_CHECKING:
    from simcore.energy import Technology
    from simcore.shape import Shape
    from simcore.systolic.blocked.batch import BatchRun
    from simcore.systolic.blocked.evaluate import MemoryRun
    from simcore.systolic.machine import SystolicMachine
    from simcore.systolic.model import Assumptions, SystolicDesign
    from workloads.model import Gemm

DEFAULT_EVALUATIONS = 400
DRAM_KEYS = ("a_reads", "b_reads", "c_reads", "c_partial_writes", "c_final_writes")


def design_of(
    args: argparse.Namespace, machine: SystolicMachine, assumptions: Assumptions
) -> SystolicDesign:
    from simcore.systolic.model import SystolicDesign

    if args.dataflow not in ("all", machine.dataflow):
        raise UsageError(
            f"--dataflow {args.dataflow}: machine {machine.name} is a {machine.dataflow} array"
        )
    return SystolicDesign(machine.array, machine.dataflow, None, assumptions)


# A search keeps the run key of every candidate it has seen (about 250 bytes each) and its best
# few hundred; the process's own start-up besides.
CANDIDATE_BYTES = 256
PROCESS_BYTES = 96 << 20


def check_size(
    args: argparse.Namespace, machine: SystolicMachine, shape: Shape, what: str, runs: int = 1
) -> None:
    """A one-line error for a GEMM whose counts could pass 64 bits on this machine, or whose
    search could hold more candidates than --max-memory allows."""
    from autotune.cli.limits import memory
    from autotune.errors import SizeError
    from autotune.oracles.base import check_counts
    from autotune.oracles.capabilities import size
    from autotune.oracles.systolic_check import largest_counts
    from simcore.systolic.blocked.batch import most_batch_candidates

    rate = float(machine.memory.dram.words_per_cycle)
    try:
        check_counts(shape, largest_counts(shape, machine.array.pes, min(rate, 1.0)))
    except SizeError as exc:
        raise UsageError(f"{what}: {exc}") from None
    most, count = memory(args), most_batch_candidates(machine, shape, runs)
    needs = PROCESS_BYTES + CANDIDATE_BYTES * count
    if needs > most:
        raise UsageError(
            f"{what}: {shape} on {machine.name}: its block schedules ({count:.3g} candidates "
            f"at most) need up to {size(needs)}; the limit is {size(most)} (--max-memory)"
        )


def weights_over_link(machine: SystolicMachine, shape: Shape, runs: int = 1) -> int:
    """Cycles to move B (the weights) of `runs` GEMMs once over the link, plus its latency."""
    link = machine.memory.dram
    return math.ceil(runs * shape.k * shape.n / link.words_per_cycle) + link.latency


def gemm_figures(
    machine: SystolicMachine,
    design: SystolicDesign,
    shape: Shape,
    evaluations: int,
    tech: Technology,
    runs: int = 1,
) -> dict[str, Any]:
    """The fastest schedule found for one GEMM, or for `runs` independent ones timed together
    (a batch, spread over lanes of the machine's arrays), in figures (a batch's: all its runs)."""
    from simcore.energy.memory import memory_cost
    from simcore.systolic.blocked.batch import fastest_batch
    from simcore.systolic.blocked.enumerate import fastest

    run: MemoryRun | BatchRun
    if runs == 1:
        one, evaluated = fastest(machine, design, shape, evaluations)
        run, lanes = one, 1
    else:
        batch, evaluated = fastest_batch(machine, design, shape, runs, evaluations)
        run, one, lanes = batch, batch.one, batch.batch.lanes
    cost = memory_cost(one, tech)
    dram = one.counts.dram
    s = one.schedule
    b = run.bound
    return {
        "m": shape.m,
        "k": shape.k,
        "n": shape.n,
        "macs": shape.macs,
        "schedule": {
            "describe": s.describe(),
            "bm": s.bm,
            "bk": s.bk,
            "bn": s.bn,
            "order": s.order,
            "buffering": list(s.buffering),
            "span": list(s.span),
            "evaluated": evaluated,
        },
        "runs": runs,
        "lanes": lanes,
        "cycles": run.cycles,
        "compute_cycles": run.compute_cycles,
        "stall_cycles": run.stall_cycles,
        "stall_share": run.stall_share,
        "seconds": float(run.seconds),
        "mac_utilization": run.mac_utilization,
        "dram": {
            **{key: runs * getattr(dram, key) for key in DRAM_KEYS},
            "requests": runs * dram.requests,
            "bytes": runs * float(sum(dram.bytes(machine).values())),
            "link_words": runs * float(dram.link_words(machine)),
        },
        "energy_pj": runs * cost.energy_pj,
        "energy_per_mac_pj": cost.energy_per_mac_pj,
        "energy_breakdown": {
            key: None if v is None else runs * v for key, v in cost.breakdown().items()
        },
        "energy_lines": {
            c.name: {item.name: runs * item.total for item in c.items} for c in cost.categories
        },
        "area_mm2": cost.area_mm2,
        "bound": {
            "cycles": b.cycles,
            "by": b.bound_by,
            "compute": b.compute_cycles,
            "array": b.array_cycles,
            "ports": b.port_cycles,
            "memory": b.link_cycles,
            "traffic_elements": b.traffic_elements,
        },
        "bound_ratio": run.bound_ratio,
        "weights_over_link": weights_over_link(machine, shape, runs),
    }


def machine_summary(machine: SystolicMachine, tech: Technology) -> dict[str, Any]:
    link = machine.memory.dram
    return {
        "arch": machine.name,
        "array": str(machine.array),
        "arrays": machine.arrays,
        "dataflow": machine.dataflow,
        "clock_hz": float(machine.clock_hz),
        "dram_kind": machine.memory.dram_kind,
        "dram_bytes_per_second": float(machine.dram_bytes_per_second),
        "dram_words_per_cycle": float(link.words_per_cycle),
        "dram_latency": link.latency,
        "technology": tech.name,
    }


def _arrays(machine: SystolicMachine) -> str:
    return "" if machine.arrays == 1 else f" ({machine.arrays} side by side)"


def _headline(machine: SystolicMachine) -> str:
    link = machine.memory.dram
    return (
        f"{machine.name}: {machine.array} {machine.dataflow} array{_arrays(machine)} at "
        f"{float(machine.clock_hz) / 1e6:g} MHz, {machine.memory.dram_kind.upper()} "
        f"{float(machine.dram_bytes_per_second) / 1e9:g} GB/s "
        f"({float(link.words_per_cycle):.4g} words/cycle, latency {link.latency} cycles)"
    )


def format_gemm(out: dict[str, Any]) -> str:
    d, b, e = out["dram"], out["bound"], out["energy_breakdown"]
    dram_line = next(iter(k for k in out["energy_lines"]["off_chip"]), "DRAM").split()[0]
    return "\n".join(
        [
            f"{out['shape']} on {out['headline']}",
            f"schedule   {out['schedule']['describe']} (blocks M x K x N, loop order, buffering "
            f"s/d per operand, span; best of {out['schedule']['evaluated']} evaluated)",
            f"cycles     {out['cycles']:,} ({out['seconds'] * 1e3:.4g} ms): compute "
            f"{out['compute_cycles']:,}, stalled {out['stall_cycles']:,} "
            f"({out['stall_share']:.1%}), MAC slots busy {out['mac_utilization']:.1%}",
            f"DRAM       A {d['a_reads']:,} reads, B {d['b_reads']:,} reads, C {d['c_reads']:,} "
            f"read back, {d['c_partial_writes']:,} partial + {d['c_final_writes']:,} final writes "
            f"(elements); {d['bytes'] / 1e6:,.2f} MB in {d['requests']:,} requests",
            f"bound      {b['cycles']:,} ({b['by']}): cycles / bound = {out['bound_ratio']:.3f}; "
            f"B over the link {out['weights_over_link']:,}",
            f"energy     {out['energy_pj'] / 1e6:,.2f} uJ ({out['energy_per_mac_pj']:.4g} pJ/MAC): "
            f"compute {e['compute'] / 1e6:,.2f}, registers {e['register'] / 1e6:,.2f}, "
            f"on chip {e['on_chip'] / 1e6:,.2f}, off chip ({dram_line}) {e['off_chip'] / 1e6:,.2f} uJ",
            f"area       {out['area_mm2']:,.3f} mm2 ({out['technology']})",
        ]
    )


def run_shape(args: argparse.Namespace, machine: SystolicMachine, assumptions: Assumptions) -> int:
    shape = shape_arg(args.shape)
    check_size(args, machine, shape, "--shape")
    tech = technology(args.tech)
    design = design_of(args, machine, assumptions)
    out = {
        "shape": str(shape),
        **machine_summary(machine, tech),
        **gemm_figures(machine, design, shape, args.evaluations or DEFAULT_EVALUATIONS, tech),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(format_gemm({**out, "headline": _headline(machine)}))
    return 0


def workload_total(
    rows: list[dict[str, Any]], machine: SystolicMachine, tokens: int, layers: int
) -> dict[str, Any]:
    def weighted(get: Any) -> float:  # a row's figures are for its runs timed together
        return float(sum(row["weight"] / row["runs"] * get(row) for row in rows))

    cycles = weighted(lambda r: r["cycles"])
    seconds = cycles / float(machine.clock_hz)
    joules = weighted(lambda r: r["energy_pj"]) * 1e-12
    link = weighted(lambda r: r["weights_over_link"])
    return {
        "total": True,
        "gemms": weighted(lambda r: r["runs"]),
        "macs": weighted(lambda r: r["runs"] * r["macs"]),
        "cycles": cycles,
        "stall_cycles": weighted(lambda r: r["stall_cycles"]),
        "stall_share": weighted(lambda r: r["stall_cycles"]) / cycles,
        "seconds": seconds,
        "dram": {key: weighted(lambda r, key=key: r["dram"][key]) for key in (*DRAM_KEYS, "bytes")},
        "energy_pj": joules * 1e12,
        "bound_cycles": weighted(lambda r: r["bound"]["cycles"]),
        "bound_ratio": cycles / weighted(lambda r: r["bound"]["cycles"]),
        "weights_over_link": link,
        "weights_over_link_ratio": cycles / link,
        "tokens": tokens,
        "layers": layers,
        "runs_per_second": 1 / seconds,
        "tokens_per_second": tokens / (layers * seconds),
        "joules_per_token": layers * joules / tokens,
    }


def _short(name: str, width: int) -> str:
    """A GEMM's name in `width` characters: its last dotted parts that fit."""
    parts = name.split(".")
    while len(parts) > 1 and len(".".join(parts)) > width:
        parts.pop(0)
    return ".".join(parts)[:width]


def _schedule_text(row: dict[str, Any]) -> str:
    text = row["schedule"]["describe"]
    lanes = f"{row['lanes']} lane" + ("s" if row["lanes"] > 1 else "")
    return text if row["runs"] == 1 else f"{text}, {row['runs']} on {lanes}"


def format_workload(name: str, headline: str, objects: list[dict[str, Any]]) -> str:
    lines = [
        f"{name} on {headline}",
        f"{'name':28} {'m x k x n':>18} {'weight':>6} {'schedule':>30} {'cycles':>12} "
        f"{'stall':>6} {'DRAM MB':>9} {'energy uJ':>11} {'/bound':>7}",
    ]
    for row in objects[:-1]:
        shape = f"{row['m']}x{row['k']}x{row['n']}"
        lines.append(
            f"{_short(row['name'], 28):28} {shape:>18} {weight_text(row['weight']):>6} "
            f"{_schedule_text(row):>30} {row['cycles']:>12,} {row['stall_share']:>6.1%} "
            f"{row['dram']['bytes'] / 1e6:>9,.2f} {row['energy_pj'] / 1e6:>11,.1f} "
            f"{row['bound_ratio']:>7.3f}"
        )
    t = objects[-1]
    lines += [
        f"total (weighted): {t['cycles']:,.0f} cycles ({t['seconds'] * 1e3:.4g} ms), stalled "
        f"{t['stall_share']:.1%}, DRAM {t['dram']['bytes'] / 1e9:,.3f} GB, energy "
        f"{t['energy_pj'] / 1e6:,.1f} uJ; {t['bound_ratio']:.3f} x the bound, "
        f"{t['weights_over_link_ratio']:.3f} x B over the link",
        f"{t['layers']} run(s) a token, {t['tokens']} token(s) a run: "
        f"{t['tokens_per_second']:,.1f} tokens/s, {t['joules_per_token']:.4g} J/token",
    ]
    return "\n".join(lines)


def together(gemm: Gemm) -> int:
    """The runs timed as one batch: all the runs of one operation (an einsum's heads, a grouped
    convolution's groups) are independent; runs of several layers are timed one at a time,
    since one may need another's result."""
    whole = float(gemm.weight).is_integer() and gemm.weight > 1
    return int(gemm.weight) if whole and len(gemm.layers) == 1 else 1


def run_workload(
    args: argparse.Namespace, machine: SystolicMachine, assumptions: Assumptions
) -> int:
    if args.shape is not None:
        raise UsageError("give --shape MxKxN (one GEMM) or --workload FILE, not both")
    tech = technology(args.tech)
    design = design_of(args, machine, assumptions)
    workload = load(args.workload, args.input_shape)
    for gemm in workload.gemms:
        check_size(args, machine, gemm.shape, f"--workload: GEMM {gemm.name!r}", together(gemm))
    evaluations = args.evaluations or DEFAULT_EVALUATIONS
    rows = []
    for gemm in workload.gemms:
        runs = together(gemm)
        figures = gemm_figures(machine, design, gemm.shape, evaluations, tech, runs)
        weight = int(gemm.weight) if float(gemm.weight).is_integer() else gemm.weight
        rows.append({"name": gemm.name, "weight": weight, **figures})
    summary = {"workload": workload.name, **machine_summary(machine, tech)}
    objects = rows + [
        {**workload_total(rows, machine, args.tokens or 1, args.layers or 1), **summary}
    ]
    if args.json:
        for obj in objects:
            print(json.dumps(obj))
    else:
        print(format_workload(workload.name, _headline(machine), objects))
    return 0
