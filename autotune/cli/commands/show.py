"""`autotune show`: one leaderboard entry's parameters and its family's picture of it (the
engine timeline for GA-1)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from autotune.cli.args import add_json, add_source, positive_int
from autotune.cli.limits import add_limits, check_work
from simcore.shape import Shape

HELP = "show one leaderboard entry: its parameters, its machine and the engine timeline"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "show", help=HELP, description=HELP + " (D = DMA transfer, M = matrix-unit product)."
    )
    add_source(parser)
    parser.add_argument("--rank", type=positive_int, default=1, help="leaderboard rank (default 1)")
    parser.add_argument(
        "--per-char",
        type=positive_int,
        default=None,
        help="cycles per timeline character (default: fit 120 columns)",
    )
    add_json(parser, "one JSON object: the entry's columns and its description")
    add_limits(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from autotune.results import leaderboard as board
    from autotune.results import readback
    from autotune.run import load

    loaded = load.load(args.path_or_study, args.results, args.storage)
    row = readback.entry(loaded, args.rank)
    shape = Shape(int(row["m"]), int(row["k"]), int(row["n"]))  # type: ignore[call-overload]
    found = (
        board.family_of(str(row["family"])) if row.get("feasible") and row.get("family") else None
    )
    picture = energy = ""
    if found is not None:
        oracle, family = found
        machine = board.machine_of(row, oracle)
        work = oracle.work(shape, machine)
        if work is not None:  # the picture builds the program: refused or announced first
            check_work(args, shape, machine, verify=False, program=True, work=work)
        picture = oracle.report(
            family, board.schedule_point(row), shape, machine, per_char=args.per_char
        )
        energy = energy_breakdown(oracle, family, row, shape, machine, loaded.metadata)
    if args.json:
        print(
            json.dumps({**row, "description": picture or None, "energy_breakdown": energy or None})
        )
        return 0
    print(f"rank {args.rank} of study {loaded.metadata.get('study')!r}, shape {shape}")
    for key, value in row.items():
        if value is not None:
            print(f"  {key:<24} {value}")
    print(picture if picture else "infeasible: never simulated" if not row.get("feasible") else "")
    if energy:
        print(energy)
    return 0


def energy_breakdown(
    oracle: Any, family: Any, row: dict, shape: Shape, machine: Any, metadata: dict
) -> str:
    """The entry's energy and area, every line item with its count, costed with the table the
    study was run with; "" for an oracle that does not cost them."""
    from autotune.results import leaderboard as board
    from simcore.energy import technology_from_dict

    table = metadata.get("technology_table")
    costed = oracle.with_technology(technology_from_dict(table) if table else None)
    cost = costed.cost(family, board.schedule_point(row), shape, machine)
    return cost.describe() if cost is not None else ""
