"""`autotune leaderboard`: print any result autotune wrote (a study's leaderboard, rebuilt from
its storage when the file is missing or older; a Pareto front; a workload; a baseline; a sweep)."""

from __future__ import annotations

import argparse
import json

from autotune.cli.args import add_json, add_source, positive_int
from autotune.results.labels import VERIFIED_LABELS

HELP = "print a study's leaderboard (a parquet path, a results folder or a study name) or any result file"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard", help=HELP, description=HELP + ". " + VERIFIED_LABELS + "."
    )
    add_source(parser)
    parser.add_argument(
        "--top", type=positive_int, default=20, help="entries to print (default 20)"
    )
    add_json(parser, "one JSON object per entry")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from autotune.results import leaderboard as board
    from autotune.results import load, tables

    loaded = load.load(args.path_or_study, args.results, args.storage)
    if args.json:
        for row in board.json_rows(loaded.frame.head(args.top)):
            print(json.dumps(row))
        return 0
    print(tables.describe(loaded.frame, loaded.metadata, args.top))
    return 0
