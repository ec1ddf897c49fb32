"""`autotune systolic --arch FILE.cfg --assume scalesim`: what SCALE-Sim 3.0 runs with its memory
system (USER bandwidth mode), per layer of a topology file (or per GEMM of any workload, or one
`--shape`): SCALE-Sim's Total Cycles, Stall Cycles, Total Cycles incl. prefetch and the DRAM
reads and writes of each operand in words (simcore/systolic/scalesim_memory.py), named for
C = A B: A is the IFMAP, B the filters, C the OFMAP."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autotune.cli.args import shape_arg
from autotune.cli.errors import UsageError
from autotune.cli.workloads import load

if TYPE_CHECKING:
    from simcore.systolic.scalesim_config import ScalesimConfig
    from simcore.systolic.scalesim_layer import ScalesimLayer

DRAM_KEYS = ("a_reads", "b_reads", "c_writes")
MOST_SECONDS = 60  # of the model's CPU time on one layer, as priced before it runs


def _layers(args: argparse.Namespace) -> list[tuple[ScalesimLayer, int]]:
    """The layers as SCALE-Sim runs them, each with how many times it runs."""
    from simcore.systolic.scalesim_layer import ScalesimLayer
    from workloads.scalesim import is_topology, scalesim_layers
    from workloads.text import read_text

    if args.workload is None:
        shape = shape_arg(args.shape)
        return [(ScalesimLayer.gemm(str(shape), shape.m, shape.n, shape.k), 1)]
    path = Path(args.workload)
    if path.is_file() and path.suffix.lower() == ".csv":
        from workloads import WorkloadError

        try:
            text = read_text(path)
            if is_topology(text):
                return scalesim_layers(text, path)
        except (WorkloadError, ValueError) as exc:
            raise UsageError(f"--workload {path}: {str(exc).splitlines()[0]}") from None
    workload = load(args.workload, args.input_shape)
    out = []
    for gemm in workload.gemms:
        if not float(gemm.weight).is_integer():
            raise UsageError(
                f"--workload: GEMM {gemm.name!r} runs {gemm.weight} times: SCALE-Sim runs whole layers"
            )
        shape = gemm.shape
        out.append((ScalesimLayer.gemm(gemm.name, shape.m, shape.n, shape.k), int(gemm.weight)))
    return out


def layer_figures(config: ScalesimConfig, layer: ScalesimLayer, runs: int) -> dict[str, Any]:
    """One layer's figures for one run (`runs` says how many)."""
    from simcore.systolic.scalesim_memory import scalesim_memory_report

    report = scalesim_memory_report(config, layer)
    return {
        "name": layer.name,
        "layer": [
            layer.ifmap_height,
            layer.ifmap_width,
            layer.filter_height,
            layer.filter_width,
            layer.channels,
            layer.filters,
            layer.stride_height,
            layer.stride_width,
        ],
        "m": layer.pixels,
        "k": layer.window,
        "n": layer.filters,
        "runs": runs,
        "cycles": report.total_cycles,
        "stall_cycles": report.stall_cycles,
        "cycles_with_prefetch": report.cycles_with_prefetch,
        "dram": report.dram,
    }


def total(config: ScalesimConfig, rows: list[dict[str, Any]]) -> dict[str, Any]:
    def weighted(get: Any) -> int:
        return sum(row["runs"] * get(row) for row in rows)

    return {
        "total": True,
        "run_name": config.run_name,
        "array": f"{config.array_rows}x{config.array_cols}",
        "dataflow": config.dataflow,
        "layers": len(rows),
        "runs": weighted(lambda row: 1),
        "cycles": weighted(lambda row: row["cycles"]),
        "stall_cycles": weighted(lambda row: row["stall_cycles"]),
        "dram": {key: weighted(lambda row, key=key: row["dram"][key]) for key in DRAM_KEYS},
    }


def format_text(config: ScalesimConfig, objects: list[dict[str, Any]]) -> str:
    lines = [
        f"SCALE-Sim 3.0 memory model: {config.run_name}, {config.array_rows}x{config.array_cols} "
        f"{config.dataflow}, SRAM {config.ifmap_kb}/{config.filter_kb}/{config.ofmap_kb} KB "
        f"(ifmap/filter/ofmap), {config.ofmap_bandwidth} words/cycle (USER)",
        f"{'layer':24} {'runs':>5} {'cycles':>13} {'stalls':>13} {'DRAM A reads':>14} "
        f"{'B reads':>13} {'C writes':>13}",
    ]
    for row in objects:
        name = "total (runs)" if row.get("total") else row["name"][:24]
        dram = row["dram"]
        lines.append(
            f"{name:24} {row['runs']:>5} {row['cycles']:>13,} {row['stall_cycles']:>13,} "
            f"{dram['a_reads']:>14,} {dram['b_reads']:>13,} {dram['c_writes']:>13,}"
        )
    return "\n".join(lines)


def priced(args: argparse.Namespace, config: ScalesimConfig, layer: ScalesimLayer) -> None:
    """Refuse, before any layer runs, a layer the model could not finish within --max-memory or
    about a minute: it keeps each operand's address matrix whole."""
    from autotune.cli.limits import memory
    from autotune.oracles.capabilities import duration, size
    from simcore.systolic.scalesim_memory import model_cost

    cost, most = model_cost(config, layer), memory(args)
    where = (
        f"layer {layer.name!r}: SCALE-Sim's memory model on {config.array_rows}x{config.array_cols}"
    )
    if cost.bytes > most:
        raise UsageError(
            f"{where} needs about {size(cost.bytes)}; the limit is {size(most)} (--max-memory)"
        )
    if cost.seconds > MOST_SECONDS:
        raise UsageError(
            f"{where} would take about {duration(cost.seconds)}; the limit is "
            f"{duration(MOST_SECONDS)}"
        )


def run_scalesim(args: argparse.Namespace, config: ScalesimConfig) -> int:
    from simcore.systolic.scalesim_config import ScalesimConfigError

    layers = _layers(args)
    for layer, _ in layers:
        priced(args, config, layer)
    rows = []
    for layer, runs in layers:
        try:
            rows.append(layer_figures(config, layer, runs))
        except (ScalesimConfigError, ValueError) as exc:
            raise UsageError(f"layer {layer.name!r}: {str(exc).splitlines()[0]}") from None
    objects = rows if args.workload is None else rows + [total(config, rows)]
    if args.json:
        for obj in objects:
            print(json.dumps(obj))
    else:
        print(format_text(config, objects))
    return 0
