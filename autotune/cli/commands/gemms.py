"""`autotune gemms FILE`: the GEMMs a workload file becomes, whatever its format (any installed
`workloads.WorkloadFormat`, or a bundled network's name): one line per GEMM and the totals.
The workload loading that the commands share (`--input-shape`, the warnings) is in
autotune.cli.workloads."""

from __future__ import annotations

import argparse
import json

from autotune.cli.workloads import add_input_shape, format_titles, load, workload_help
from workloads.listing import format_listing, listing

HELP = "list the GEMMs a workload becomes"


def register(subparsers: argparse._SubParsersAction) -> None:
    help_text = f"{HELP} ({format_titles()} or a bundled network)"
    parser = subparsers.add_parser("gemms", help=help_text, description=help_text + ".")
    parser.add_argument("workload", metavar="FILE", help=workload_help())
    add_input_shape(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    workload = load(args.workload, args.input_shape)
    print(json.dumps(listing(workload)) if args.json else format_listing(workload))
    return 0
