"""`autotune show`: one leaderboard entry's parameters and its engine timeline."""
from __future__ import annotations

import argparse

from simcore.ga1.machine import Machine
from simcore.shape import parse_shape

from search_spaces.registry import SpaceError, find_family

from autotune import leaderboard as board
from autotune.args import positive_int
from autotune.errors import UsageError
from autotune.limits import add_limits, check_work

HELP = "show one leaderboard entry: its parameters, its machine and the engine timeline"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("show", help=HELP, description=HELP + " (D = DMA transfer, M = matrix-unit product).")
    parser.add_argument("path_or_study", metavar="PATH_OR_STUDY")
    parser.add_argument("--rank", type=positive_int, default=1, help="leaderboard rank (default 1)")
    parser.add_argument("--per-char", type=positive_int, default=None, help="cycles per timeline character (default: fit 120 columns)")
    add_limits(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    frame, metadata = board.load(args.path_or_study)
    if args.rank > len(frame):
        raise UsageError(f"rank {args.rank} is past the end of the leaderboard ({len(frame)} entries)")
    row = frame.iloc[args.rank - 1].to_dict()
    shape = parse_shape(f"{row['m']}x{row['k']}x{row['n']}")
    print(f"rank {args.rank} of study {metadata.get('study')!r}, shape {shape}")
    for key, value in board.json_rows(frame.iloc[[args.rank - 1]])[0].items():
        if value is not None:
            print(f"  {key:<24} {value}")
    if not row["feasible"]:
        print("infeasible: never simulated")
        return 0
    try:
        family = find_family(str(row["family"]))
    except SpaceError as exc:
        raise UsageError(str(exc)) from None
    machine = board.machine_of(row) if "T" in row else Machine()  # other oracles: the point is the machine
    if "T" in row:
        check_work(args, shape, machine, verify=False, program=True)
    print(family.describe(board.schedule_point(row), shape, machine, per_char=args.per_char))
    return 0
