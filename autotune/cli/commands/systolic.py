"""`autotune systolic`: one GEMM on an R x C systolic array in each dataflow (ws, os, is): the
cycles of the best mapping (or the one given), MAC utilization and buffer traffic, under named
modelling assumptions; `--assume scalesim` takes SCALE-Sim 3.0's. Small problems, and any with
`--check`, are also run on each dataflow's own cycle model.

The top-level `cycles`, `mac_utilization` and `tiles` are the first dataflow's; `words_per_mac`
and `dataflows` give every dataflow run.

`--arch NAME|FILE` runs on a machine with its memory system instead (systolic_memory.py), or,
for a SCALE-Sim .cfg, SCALE-Sim's own memory model (systolic_scalesim.py).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING

from autotune.cli.args import add_setting, positive_int, shape_arg
from autotune.cli.commands.systolic_memory import DEFAULT_EVALUATIONS
from autotune.cli.errors import UsageError
from autotune.cli.limits import add_memory_limit
from autotune.cli.strict import strict_float
from autotune.cli.systolic_mapping import array_arg, assumptions_of, chosen_mapping
from autotune.cli.workloads import add_input_shape, check_input_shape, workload_help
from simcore.shape import Shape
from simcore.systolic.model import (
    DATAFLOWS,
    ORDERS,
    PRESETS,
    Assumptions,
    HbmLink,
    SystolicArray,
    SystolicDesign,
    Traffic,
    compulsory_words,
)
from simcore.systolic.reports import report as systolic_report

if TYPE_CHECKING:
    from search_spaces.base import Verdict
    from simcore.energy import Technology

HELP = (
    "cycles, MAC utilization, buffer traffic, energy and area of one GEMM on a systolic array "
    "(ws, os, is), or with --arch on a machine with its buffers and DRAM"
)
# Problems up to this many MACs are checked against the cycle models without asking.
AUTO_CHECK_MACS = 2**22
CHECK_HELP = (
    "run each dataflow's own cycle model on the design itself, with random integer matrices: its cycles must "
    "equal the closed form, its product numpy's and its buffer words the traffic formula (reported 'exact'). "
    "The model is the event engine, which the test suite holds equal to the cycle-stepped reference model. A "
    "problem too large for the check's budget (about 5 s) runs on a smaller problem with the same array, "
    "mapping and tile kinds instead, reported 'scaled'. Problems up to 2^22 MACs are checked without asking"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("systolic", help=HELP, description=HELP + ".")
    add_setting(parser, "shape", default=None, metavar="MxKxN", help="A is M x K, B is K x N")
    add_setting(
        parser,
        "workload",
        default=None,
        metavar="FILE",
        help="every GEMM of a workload instead of --shape, one result per GEMM and the weighted "
        f"total: {workload_help()}",
    )
    add_input_shape(parser)
    parser.add_argument(
        "--array",
        default=None,
        metavar="RxC",
        help="array rows x columns, e.g. 8x8 (or --arch: a machine with its memory)",
    )
    add_setting(parser, "arch")
    add_setting(
        parser,
        "machine",
        help="with --arch NAME|FILE: changes to the architecture by its dotted keys, e.g. "
        '"dram.bandwidth=68 GB/s,buffers.unified.capacity=8 MiB"',
    )
    parser.add_argument(
        "--dataflow",
        default="all",
        choices=(*DATAFLOWS, "all"),
        help="ws: weights stay in the PEs; os: results; is: inputs (default: all three)",
    )
    parser.add_argument(
        "--mapping",
        default=None,
        metavar="RxC",
        help="the sub-array to map the GEMM on (default: the best one; the whole array "
        "with --assume scalesim)",
    )
    parser.add_argument(
        "--order",
        default=None,
        choices=ORDERS,
        help="tile order: col-outer runs the column folds outermost (SCALE-Sim's order), "
        "row-outer the row folds (default: the better one; col-outer with --assume scalesim)",
    )
    parser.add_argument(
        "--assume",
        default=None,
        choices=tuple(PRESETS),
        help="modelling assumptions: default (shadow registers, edge tiles bypassed, os drain "
        "charged, folds overlapped) or scalesim (SCALE-Sim 3.0: none of these, edge tiles "
        "padded, folds in sequence, the whole array; with a SCALE-Sim .cfg as --arch, its "
        "memory system too); the options below override them",
    )
    parser.add_argument(
        "--shadow",
        choices=("on", "off"),
        default=None,
        help="a second register per PE, so the next tile's stationary data loads (ws, is) or "
        "the last tile's results drain (os) while the array computes",
    )
    parser.add_argument(
        "--edges",
        choices=("bypass", "pad"),
        default=None,
        help="edge tiles bypass the unused rows and columns, or are padded to the sub-array",
    )
    parser.add_argument(
        "--drain",
        choices=("charged", "free"),
        default=None,
        help="os: shifting the results out of the array costs cycles (charged) or none (free)",
    )
    parser.add_argument(
        "--folds",
        choices=("overlap", "sequence"),
        default=None,
        help="consecutive tiles overlap in the array, or each starts once the previous has finished",
    )
    parser.add_argument(
        "--hbm-words",
        default=None,
        metavar="W",
        help="move each stationary tile over HBM at W words per cycle: ws and is fetch their "
        "weight or input tiles, os writes its result tiles back (default: on chip)",
    )
    parser.add_argument(
        "--buffers",
        "--weight-buffers",
        dest="buffers",
        default="2",
        metavar="1|2",
        help="on-chip buffers of the HBM link (default 2)",
    )
    add_setting(
        parser,
        "technology",
        help="a technology table (TOML) to cost energy and area with, instead of the shipped "
        "45 nm one (see docs/energy.md)",
    )
    parser.add_argument(
        "--evaluations",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --arch: block schedules timed per GEMM, fastest first by their own lower "
        f"bound (default {DEFAULT_EVALUATIONS})",
    )
    parser.add_argument(
        "--tokens",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --arch and --workload: tokens one run of the workload produces, for tokens "
        "per second and joules per token (default 1; a prefill of 2048 tokens: 2048)",
    )
    parser.add_argument(
        "--layers",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --arch and --workload: runs of the workload per token, when it is one of N "
        "identical layers (default 1; LLaMA-2-7B: 32)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (with --workload: one per GEMM and dataflow, then each total)",
    )
    parser.add_argument("--check", action="store_true", help=CHECK_HELP)
    add_memory_limit(parser)  # every path's work is priced against it
    parser.set_defaults(run=run)


def _hbm(words: str | None, buffers: str) -> HbmLink:
    if buffers.strip() not in ("1", "2"):
        raise UsageError(f"--buffers must be 1 or 2, got {buffers!r}")
    if words is None:
        return HbmLink(None, int(buffers))
    try:
        rate = strict_float(words)
    except argparse.ArgumentTypeError:
        raise UsageError(f"--hbm-words needs a number of words per cycle, got {words!r}") from None
    if not math.isfinite(rate) or rate <= 0:
        raise UsageError(f"--hbm-words must be positive and finite, got {words!r}")
    return HbmLink(
        int(rate) if rate.is_integer() else rate, int(buffers)
    )  # whole rates print as ints


def _traffic_dict(t: Traffic) -> dict[str, int]:
    return {
        "a_reads": t.a_reads,
        "b_reads": t.b_reads,
        "psum_writes": t.psum_writes,
        "psum_readbacks": t.psum_readbacks,
        "c_writes": t.c_writes,
        "total": t.total,
    }


def priced_check(args: argparse.Namespace, design: SystolicDesign, shape: Shape) -> bool:
    """Whether the cycle model's check of `design` runs: within --max-memory (on a scaled-down
    problem when the full one would not fit). An asked --check that cannot fit is refused before
    anything runs; the automatic one is left out."""
    from autotune.cli.limits import memory
    from autotune.oracles.capabilities import size
    from autotune.oracles.systolic_check import check_bytes, check_words

    most = memory(args)
    needs = check_bytes(design, shape, check_words(most))
    if needs <= most:
        return True
    if not args.check:
        return False
    raise UsageError(
        f"--check: {shape} on the {design.used.rows}x{design.used.cols} mapping "
        f"({design.dataflow}) needs about {size(needs)} to run its cycle model; the limit is "
        f"{size(most)} (--max-memory)"
    )


def _run_one(
    args: argparse.Namespace,
    design: SystolicDesign,
    chosen: str,
    shape: Shape,
    check: bool,
    tech: Technology,
) -> dict[str, object]:
    from autotune.cli.limits import memory
    from autotune.oracles.systolic_check import (  # the cycle models: loaded when the command runs
        check_words,
        verify_design,
    )
    from simcore.energy.systolic import systolic_cost_of

    mapping = design.used
    found = systolic_report(design, shape)
    verdict: Verdict | None = (
        verify_design(design, shape, most_words=check_words(memory(args))) if check else None
    )
    cost = systolic_cost_of(design, shape, tech, found.cycles)
    return {
        "mapping": {
            "rows": mapping.rows,
            "cols": mapping.cols,
            "order": mapping.order,
            "chosen": chosen,
        },
        "cycles": found.cycles,
        "mac_utilization": found.mac_utilization,
        "tiles": found.tiles,
        "words_per_mac": found.words_per_mac,
        "traffic": _traffic_dict(found.traffic),
        "energy_pj": cost.energy_pj,
        "energy_per_mac_pj": cost.energy_per_mac_pj,
        "energy_breakdown": cost.breakdown(),
        "area_mm2": cost.area_mm2,
        "verification": None
        if verdict is None
        else {
            "ok": verdict.ok,
            "level": verdict.level,
            "detail": verdict.detail,
            "verified": verdict.verified,
        },
    }


def report(
    args: argparse.Namespace,
    shape: Shape,
    array: SystolicArray,
    assume: Assumptions,
    hbm: HbmLink,
    check: bool,
    tech: Technology,
) -> dict[str, object]:
    """The JSON object: every dataflow under `dataflows`, the first one's figures at the top."""
    flows = DATAFLOWS if args.dataflow == "all" else (args.dataflow,)
    designs = {}
    for d in flows:  # every mapping chosen and every check priced before any runs
        base = SystolicDesign(array, d, None, assume, hbm)
        mapping, chosen = chosen_mapping(args, base, shape)
        design = base.with_mapping(mapping)
        designs[d] = (design, chosen, check and priced_check(args, design, shape))
    runs = {d: _run_one(args, *designs[d][:2], shape, designs[d][2], tech) for d in flows}
    first = runs[flows[0]]
    checks = [r["verification"] for r in runs.values() if r["verification"] is not None]
    return {
        "shape": str(shape),
        "array": str(array),
        "pes": array.pes,
        "macs": shape.m * shape.k * shape.n,
        "compulsory_words": compulsory_words(shape),
        "assumptions": {
            "preset": args.assume,
            "shadow": assume.shadow,
            "edges": assume.edges,
            "drain": "charged" if assume.drain else "free",
            "folds": assume.folds,
        },
        "hbm_words": hbm.hbm_words_per_cycle,
        "buffers": hbm.buffers,
        "cycles": first["cycles"],
        "mac_utilization": first["mac_utilization"],
        "tiles": first["tiles"],
        "energy_pj": first["energy_pj"],
        "area_mm2": first["area_mm2"],
        "technology": tech.name,
        "words_per_mac": {d: r["words_per_mac"] for d, r in runs.items()},
        "dataflows": runs,
        "verified": all(c["verified"] for c in checks) if checks else None,  # type: ignore[index]
        "verification": [c["detail"] for c in checks],  # type: ignore[index]
        "verification_level": [c["level"] for c in checks],  # type: ignore[index]
    }


def format_text(out: dict[str, object]) -> str:
    runs: dict[str, dict] = out["dataflows"]  # type: ignore[assignment]
    hbm = (
        "stationary tiles on chip"
        if out["hbm_words"] is None
        else f"HBM {out['hbm_words']} words/cycle, {out['buffers']} buffer(s)"
    )
    a = out["assumptions"]
    lines = [
        f"{out['shape']} on a {out['array']} array ({out['pes']} PEs, {hbm})",
        f"assumptions ({a['preset']}): shadow registers {'on' if a['shadow'] else 'off'}, edge tiles "  # type: ignore[index]
        f"{a['edges']}, os drain {a['drain']}, folds {a['folds']}",  # type: ignore[index]
        f"{'':24}" + "".join(f" {d:>15}" for d in runs),
    ]

    def row(label: str, values: list[str]) -> None:
        lines.append(f"{label:24}" + "".join(f" {v:>15}" for v in values))  # always apart

    order = list(runs.values())
    row(
        "mapping",
        [f"{r['mapping']['rows']}x{r['mapping']['cols']} {r['mapping']['chosen']}" for r in order],
    )
    row("tile order", [r["mapping"]["order"] for r in order])
    row("cycles", [str(r["cycles"]) for r in order])
    row("MAC slots busy", [f"{r['mac_utilization']:.1%}" for r in order])
    row("tiles", [str(r["tiles"]) for r in order])
    row("words per MAC", [f"{r['words_per_mac']:.4g}" for r in order])
    for key, label in (
        ("a_reads", "A reads"),
        ("b_reads", "B reads"),
        ("psum_writes", "partial-sum writes"),
        ("psum_readbacks", "partial-sum readbacks"),
        ("c_writes", "C writes"),
        ("total", "total words"),
    ):
        row("  " + label, [str(r["traffic"][key]) for r in order])
    row("energy (nJ)", [f"{r['energy_pj'] / 1e3:,.1f}" for r in order])
    row("  pJ per MAC", [f"{r['energy_per_mac_pj']:.4g}" for r in order])
    row("area (mm2)", [f"{r['area_mm2']:.4g}" for r in order])
    lines.append(f"compulsory traffic MK + KN + MN = {out['compulsory_words']} words")
    lines.append(f"energy and area: {out['technology']}")
    for d, r in runs.items():
        v = r["verification"]
        if v is not None:
            status = (
                "FAILED"
                if not v["ok"]
                else "verified (exact)"
                if v["verified"]
                else f"checked ({v['level']})"
            )
            lines.append(f"{status}: {v['detail']}")
    return "\n".join(lines)


def check_design_size(shape: Shape, array: SystolicArray, hbm: HbmLink) -> None:
    """SizeError for a shape whose cycles or words on this array could pass 64 bits."""
    from autotune.oracles.base import check_counts
    from autotune.oracles.systolic_check import largest_counts

    check_counts(shape, largest_counts(shape, array.pes, hbm.hbm_words_per_cycle))


def run(args: argparse.Namespace) -> int:
    if args.arch is not None:
        from autotune.cli.systolic_machine import run_arch

        return run_arch(args)
    if args.array is None:
        raise UsageError(
            "give --array RxC (an array) or --arch NAME|FILE (a machine with its memory)"
        )
    for flag, value in (
        ("--machine", args.machine),
        ("--evaluations", args.evaluations),
        ("--tokens", args.tokens),
        ("--layers", args.layers),
    ):
        if value is not None:
            raise UsageError(f"{flag} applies with --arch (a machine with its memory)")
    args.assume = args.assume or "default"
    rows, cols = array_arg(args.array, "--array")
    array = SystolicArray(rows, cols)
    hbm = _hbm(args.hbm_words, args.buffers)
    if args.workload is not None:
        from autotune.cli.commands.systolic_workload import run_workload

        if args.tech is not None:
            raise UsageError("--tech costs one --shape, or a workload on --arch (a machine)")
        return run_workload(args, SystolicDesign(array, "ws", None, assumptions_of(args), hbm))
    if args.shape is None:
        raise UsageError("give --shape MxKxN (one GEMM) or --workload FILE (its GEMMs)")
    check_input_shape(args.input_shape, args.workload)
    shape = shape_arg(args.shape)
    check_design_size(shape, array, hbm)
    check = args.check or shape.m * shape.k * shape.n <= AUTO_CHECK_MACS
    from autotune.cli.systolic_machine import technology

    tech = technology(args.tech)
    out = report(args, shape, array, assumptions_of(args), hbm, check, tech)
    print(json.dumps(out) if args.json else format_text(out))
    runs: dict[str, dict] = out["dataflows"]  # type: ignore[assignment]
    if any(r["verification"] is not None and not r["verification"]["ok"] for r in runs.values()):
        print("autotune: error: a cycle model disagrees with the closed form", file=sys.stderr)
        return 1
    return 0
