"""`autotune gemms FILE`: the GEMMs a workload file becomes, whatever its format (TOML, CSV, an
ONNX model, a SCALE-Sim topology, or a bundled network's name): one line per GEMM and the totals.
The workload loading that the commands share (`--input-shape`, the warnings) is in
autotune.cli.workloads."""

from __future__ import annotations

import argparse
import json

from autotune.cli.workloads import add_input_shape, load
from search_spaces.gemm_list import format_listing, listing

HELP = (
    "list the GEMMs a workload becomes (TOML, CSV, ONNX, SCALE-Sim topology or a bundled network)"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("gemms", help=HELP, description=HELP + ".")
    parser.add_argument(
        "workload", metavar="FILE", help="a .toml, .csv or .onnx file, or a bundled workload's name"
    )
    add_input_shape(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    workload = load(args.workload, args.input_shape)
    print(json.dumps(listing(workload)) if args.json else format_listing(workload))
    return 0
