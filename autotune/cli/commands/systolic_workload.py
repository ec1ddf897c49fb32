"""`autotune systolic --workload FILE`: every GEMM of a workload (a SCALE-Sim topology, an ONNX
model, a TOML or CSV list, a bundled network) on one systolic array: per layer its cycles, MAC
utilization and buffer traffic, and the weighted total.

Under `--assume scalesim` (SCALE-Sim 3.0's assumptions, the whole array, column folds outer) each
layer also carries, under "scalesim", the figures SCALE-Sim 3.0 reports for it, counted its way
(simcore/systolic/scalesim.py): Total Cycles, SRAM IFMAP, Filter reads and OFMAP writes. A
convolution is the GEMM of its im2col operand matrices, as SCALE-Sim maps it
(workloads/scalesim.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from autotune.cli.errors import UsageError
from autotune.cli.systolic_mapping import chosen_mapping
from autotune.cli.workloads import load
from autotune.errors import SizeError
from autotune.oracles.base import check_counts
from autotune.oracles.systolic_check import largest_counts
from simcore.systolic.closed_form import cycles
from simcore.systolic.model import DATAFLOWS, SystolicArray, SystolicDesign, design_traffic
from simcore.systolic.scalesim import is_scalesim, scalesim_report
from workloads import Gemm, Workload
from workloads.listing import totals, weight_text

FIGURES = ("cycles", "a_reads", "b_reads", "psum_writes", "psum_readbacks", "c_writes")
SCALESIM_FIGURES = ("total_cycles", "ifmap_sram_reads", "filter_sram_reads", "ofmap_sram_writes")


def layer_figures(design: SystolicDesign, gemm: Gemm) -> dict[str, object]:
    """One GEMM's figures for one run on the design (the weight says how many runs)."""
    run_cycles = cycles(design, gemm.shape)
    t = design_traffic(design, gemm.shape)
    used = design.used
    out: dict[str, object] = {
        "name": gemm.name,
        "layers": list(gemm.layers),
        "source": gemm.source,
        "m": gemm.shape.m,
        "k": gemm.shape.k,
        "n": gemm.shape.n,
        "weight": int(gemm.weight) if gemm.weight.is_integer() else gemm.weight,
        "dataflow": design.dataflow,
        "mapping": f"{used.rows}x{used.cols} {used.order}",
        "cycles": run_cycles,
        "mac_utilization": gemm.macs / (design.array.pes * run_cycles),
        "a_reads": t.a_reads,
        "b_reads": t.b_reads,
        "psum_writes": t.psum_writes,
        "psum_readbacks": t.psum_readbacks,
        "c_writes": t.c_writes,
    }
    if is_scalesim(design):
        out["scalesim"] = dataclasses.asdict(scalesim_report(design, gemm.shape))
    return out


def total(
    workload: Workload, rows: list[dict[str, object]], array: SystolicArray, dataflow: str
) -> dict[str, object]:
    """The weighted sums over the layers."""

    def weighted(get) -> float | int:  # type: ignore[no-untyped-def]
        value = sum(row["weight"] * get(row) for row in rows)  # type: ignore[operator]
        return int(value) if float(value).is_integer() else value

    t = totals(workload)
    out: dict[str, object] = {
        "total": True,
        "workload": workload.name,
        "array": str(array),
        "dataflow": dataflow,
        "entries": t["entries"],
        "gemms": t["gemms"],
        "macs": t["macs"],
    }
    out.update({key: weighted(lambda row, key=key: row[key]) for key in FIGURES})
    out["mac_utilization"] = t["macs"] / (array.pes * out["cycles"])  # type: ignore[operator]
    if rows and all("scalesim" in row for row in rows):
        out["scalesim"] = {
            key: weighted(lambda row, key=key: row["scalesim"][key]) for key in SCALESIM_FIGURES
        }
    return out


def report(
    args: argparse.Namespace, workload: Workload, base: SystolicDesign
) -> list[dict[str, object]]:
    """Per dataflow: one object per GEMM, then the total."""

    flows = DATAFLOWS if args.dataflow == "all" else (args.dataflow,)
    out: list[dict[str, object]] = []
    for flow in flows:
        design = SystolicDesign(base.array, flow, None, base.assumptions, base.hbm)
        rows = [
            layer_figures(design.with_mapping(chosen_mapping(args, design, g.shape)[0]), g)
            for g in workload.gemms
        ]
        out += rows + [total(workload, rows, base.array, flow)]
    return out


def format_text(objects: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    header = (
        f"{'name':28} {'m':>7} {'k':>7} {'n':>7} {'weight':>7} {'cycles':>12} {'util':>6} "
        f"{'A reads':>13} {'B reads':>13} {'C writes':>12}"
    )
    for row in objects:
        writes = row["psum_writes"] + row["c_writes"]  # every word written to the output buffer
        reads = f"{row['a_reads']:>13,} {row['b_reads']:>13,} {writes:>12,}"
        if row.get("total"):
            lines.append(
                f"{'total (weighted)':52} {weight_text(row['gemms']):>7} {row['cycles']:>12,} "
                f"{row['mac_utilization']:>6.1%} {reads}"
            )
            lines.append("")
            continue
        if not lines or not lines[-1]:
            lines += [f"dataflow {row['dataflow']}", header]
        lines.append(
            f"{row['name'][:28]:28} {row['m']:>7} {row['k']:>7} {row['n']:>7} "
            f"{weight_text(row['weight']):>7} {row['cycles']:>12,} {row['mac_utilization']:>6.1%} "
            f"{reads}"
        )
    return "\n".join(lines).rstrip()


def run_workload(args: argparse.Namespace, base: SystolicDesign) -> int:
    if args.shape is not None:
        raise UsageError("give --shape MxKxN (one GEMM) or --workload FILE, not both")
    if args.check:
        raise UsageError(
            "--check runs one GEMM (--shape); with --workload the closed form is reported"
        )
    workload = load(args.workload, args.input_shape)
    for gemm in workload.gemms:
        try:
            check_counts(
                gemm.shape, largest_counts(gemm.shape, base.array.pes, base.hbm.hbm_words_per_cycle)
            )
        except SizeError as exc:
            raise UsageError(f"--workload: GEMM {gemm.name!r}: {exc}") from None
    objects = report(args, workload, base)
    if args.json:
        for obj in objects:
            print(json.dumps(obj))
    else:
        print(
            f"{workload.name} on a {base.array} array: {len(workload.gemms)} GEMMs, "
            f"assumptions {args.assume} ({base.assumptions.describe()})"
        )
        print(format_text(objects))
    return 0
