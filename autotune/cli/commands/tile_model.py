"""`autotune tile-model`: every member of the analytic tile model (simcore.tile_model.MatmulTile).

--shape is MxKxN like everywhere else; --tile is tile_m x tile_n x tile_k (MxNxK), the issue's
order. fits(capacity) is printed with --capacity; row_b_reads(cells) always, with cells =
tile_m unless --cells is given (each B value passes along the tile_m cells of a tile column
that hold A values).
"""

from __future__ import annotations

import argparse
import json
import re

from autotune.cli.args import add_setting, positive_int, shape_arg
from autotune.cli.errors import UsageError
from simcore.tile_model import MatmulTile

HELP = "print every member of the analytic tile model of C = A B"
_TILE = re.compile(r"^\s*(-?[0-9]+)\s*[xX]\s*(-?[0-9]+)\s*[xX]\s*(-?[0-9]+)\s*$", re.ASCII)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tile-model",
        help=HELP,
        description=HELP + " (the matmul tile model's members, one per line).",
    )
    add_setting(parser, "shape", required=True, metavar="MxKxN", help="A is M x K, B is K x N")
    parser.add_argument(
        "--tile",
        required=True,
        metavar="MxNxK",
        help="tile_m x tile_n x tile_k (note the order: output tile first, then the reduction step)",
    )
    parser.add_argument(
        "--operand-bytes",
        required=True,
        type=positive_int,
        metavar="B",
        help="bytes per A or B element",
    )
    parser.add_argument(
        "--accumulator-bytes",
        required=True,
        type=positive_int,
        metavar="B",
        help="bytes per accumulator element",
    )
    parser.add_argument(
        "--double-buffered", action="store_true", help="two copies of each operand tile"
    )
    parser.add_argument(
        "--capacity",
        type=int,
        default=None,
        metavar="BYTES",
        help="on-chip capacity: also print fits(capacity)",
    )
    parser.add_argument(
        "--cells",
        type=positive_int,
        default=None,
        metavar="N",
        help="cells sharing each B value, for row_b_reads (default tile_m)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def parse_tile(text: str) -> tuple[int, int, int]:
    """'MxNxK' -> (tile_m, tile_n, tile_k), all positive."""
    match = _TILE.match(text)
    if not match:
        raise UsageError(
            f"malformed tile {text!r}: expected MxNxK (tile_m x tile_n x tile_k), for example 64x64x32"
        )
    values = tuple(int(g) for g in match.groups())
    for name, value in zip(("tile_m", "tile_n", "tile_k"), values):
        if value <= 0:
            raise UsageError(f"tile dimension {name} must be positive, got {value}")
    return values  # type: ignore[return-value]


def members(args: argparse.Namespace) -> dict[str, object]:
    """Validated inputs -> MatmulTile.as_dict, with fits and row_b_reads."""
    shape = shape_arg(args.shape)
    tile_m, tile_n, tile_k = parse_tile(args.tile)
    if args.capacity is not None and args.capacity < 0:
        raise UsageError(f"--capacity must not be negative, got {args.capacity}")
    model = MatmulTile(
        m=shape.m,
        n=shape.n,
        k=shape.k,
        tile_m=tile_m,
        tile_n=tile_n,
        tile_k=tile_k,
        operand_bytes=args.operand_bytes,
        accumulator_bytes=args.accumulator_bytes,
        double_buffered=args.double_buffered,
    )
    cells = args.cells if args.cells is not None else tile_m
    return model.as_dict(capacity=args.capacity, cells=cells)


def run(args: argparse.Namespace) -> int:
    values = members(args)
    if args.json:
        print(json.dumps(values))
        return 0
    for name, value in values.items():
        print(f"{name} = {value}")
    return 0
