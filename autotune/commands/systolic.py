"""`autotune systolic`: one GEMM on an R x C systolic array, both dataflows, closed form.

ws is the systolic chapter's weight-stationary model; os keeps an output tile in the array
while K streams, timed by the same recurrence with M and K swapped (search_spaces.systolic).
The top-level `cycles`, `mac_utilization` and `tiles` are the ws run's (the array's own
dataflow); `words_per_mac` and `dataflows` give both.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

from simcore.shape import Shape
from simcore.systolic.model import SystolicArray, WeightFetch
from simcore.systolic.tie import parse_array

from search_spaces.systolic import DATAFLOWS, DataflowRun, dataflow_run, verify_dataflow

from autotune.args import shape_arg
from autotune.errors import UsageError

HELP = "cycles, MAC utilization and buffer traffic of one GEMM on a systolic array (ws and os)"
# Shapes up to this many MACs are checked against the cycle model without asking.
AUTO_CHECK_MACS = 2**18


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "systolic", help=HELP, description=HELP + ". Small shapes (M*K*N <= 2^18) are also run "
        "cycle by cycle on random integer matrices; --check forces that for any shape.")
    parser.add_argument("--shape", required=True, metavar="MxKxN", help="A is M x K, B is K x N")
    parser.add_argument("--array", required=True, metavar="RxC", help="array rows x columns, e.g. 8x8")
    parser.add_argument("--no-shadow", action="store_true",
                        help="no shadow weight registers: tiles run in sequence (chapter 4)")
    parser.add_argument("--hbm-words", default=None, metavar="W",
                        help="fetch each tile from HBM at W words per cycle (default: weights on chip)")
    parser.add_argument("--weight-buffers", default="2", metavar="1|2",
                        help="on-chip weight buffers for the HBM fetch (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--check", action="store_true",
                        help="run the cycle-by-cycle model and compare with the closed form and numpy")
    parser.set_defaults(run=run)


def _array(text: str, shadow: bool) -> SystolicArray:
    try:
        rows, cols = parse_array(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return SystolicArray(rows, cols, shadow)


def _fetch(words: str | None, buffers: str) -> WeightFetch:
    if buffers.strip() not in ("1", "2"):
        raise UsageError(f"--weight-buffers must be 1 or 2, got {buffers!r}")
    if words is None:
        return WeightFetch(None, int(buffers))
    try:
        rate = float(words)
    except ValueError:
        raise UsageError(f"--hbm-words needs a number of words per cycle, got {words!r}") from None
    if not math.isfinite(rate) or rate <= 0:
        raise UsageError(f"--hbm-words must be positive and finite, got {words!r}")
    # Whole rates stay ints so they print and compare as such.
    return WeightFetch(int(rate) if rate.is_integer() else rate, int(buffers))


def _dataflow_dict(run: DataflowRun) -> dict[str, object]:
    t = run.traffic
    return {
        "cycles": run.cycles, "mac_utilization": run.mac_utilization, "tiles": run.tiles,
        "words_per_mac": run.words_per_mac,
        "traffic": {"a_reads": t.a_reads, "b_reads": t.b_reads, "psum_writes": t.psum_writes,
                    "psum_readbacks": t.psum_readbacks, "c_writes": t.c_writes, "total": t.total},
    }


def report(shape: Shape, array: SystolicArray, fetch: WeightFetch, runs: dict[str, DataflowRun]) -> dict[str, object]:
    """The JSON object: the ws run at the top level, both dataflows under `dataflows`."""
    ws = runs["ws"]
    return {
        "shape": str(shape), "array": f"{array.rows}x{array.cols}", "pes": array.pes,
        "shadow": array.shadow, "hbm_words": fetch.hbm_words_per_cycle, "weight_buffers": fetch.buffers,
        "macs": shape.m * shape.k * shape.n,
        "cycles": ws.cycles, "mac_utilization": ws.mac_utilization, "tiles": ws.tiles,
        "words_per_mac": {name: run.words_per_mac for name, run in runs.items()},
        "dataflows": {name: _dataflow_dict(run) for name, run in runs.items()},
    }


def format_text(shape: Shape, array: SystolicArray, fetch: WeightFetch, runs: dict[str, DataflowRun]) -> str:
    weights = ("weights on chip" if fetch.on_chip
               else f"HBM {fetch.hbm_words_per_cycle} words/cycle, {fetch.buffers} weight buffer(s)")
    regs = "shadow registers" if array.shadow else "no shadow registers"
    lines = [f"{shape} on a {array.rows}x{array.cols} array ({array.pes} PEs, {regs}, {weights})",
             f"{'':24}{'ws':>14}{'os':>14}"]

    def row(label: str, values: list[str]) -> None:
        lines.append(f"{label:24}" + "".join(f"{v:>14}" for v in values))

    order = [runs[d] for d in DATAFLOWS]
    row("cycles", [str(r.cycles) for r in order])
    row("MAC slots busy", [f"{r.mac_utilization:.1%}" for r in order])
    row("tiles", [str(r.tiles) for r in order])
    row("words per MAC", [f"{r.words_per_mac:.4g}" for r in order])
    row("  A reads", [str(r.traffic.a_reads) for r in order])
    row("  B reads", [str(r.traffic.b_reads) for r in order])
    row("  partial-sum writes", [str(r.traffic.psum_writes) for r in order])
    row("  partial-sum readbacks", [str(r.traffic.psum_readbacks) for r in order])
    row("  C writes", [str(r.traffic.c_writes) for r in order])
    row("  total words", [str(r.traffic.total) for r in order])
    lines.append("(os: output tiles stay in the array while K streams; same recurrence, M and K swapped)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    shape = shape_arg(args.shape)
    array = _array(args.array, shadow=not args.no_shadow)
    fetch = _fetch(args.hbm_words, args.weight_buffers)
    runs = {d: dataflow_run(array, shape.m, shape.k, shape.n, d, fetch) for d in DATAFLOWS}
    check = args.check or shape.m * shape.k * shape.n <= AUTO_CHECK_MACS
    checks = [verify_dataflow(array, shape, d, fetch) for d in DATAFLOWS] if check else []
    ok = all(verdict.ok for verdict in checks)
    if args.json:
        out = report(shape, array, fetch, runs)
        out["verified"] = all(verdict.verified for verdict in checks) if checks else None
        out["verification"] = [verdict.detail for verdict in checks]
        out["verification_level"] = [verdict.level for verdict in checks]
        print(json.dumps(out))
    else:
        print(format_text(shape, array, fetch, runs))
        for verdict in checks:
            status = "FAILED" if not verdict.ok else "verified (exact)" if verdict.verified else f"checked ({verdict.level})"
            print(f"{status}: {verdict.detail}")
    if not ok:
        print("autotune: error: the cycle model disagrees with the closed form", file=sys.stderr)
        return 1
    return 0
