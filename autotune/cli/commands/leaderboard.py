"""`autotune leaderboard`: print any result autotune wrote (a study's leaderboard, rebuilt from
its storage when the file is missing or older; a Pareto front; a workload; a baseline; a sweep)."""
from __future__ import annotations

import argparse
import json

from autotune.results import leaderboard as board
from autotune.results import readback
from autotune.run import load
from autotune.results import tables
from autotune.cli.args import add_json, add_results, positive_int

HELP = "print a study's leaderboard (a parquet path, a results folder or a study name) or any result file"


def add_source(parser: argparse.ArgumentParser) -> None:
    """The arguments every command that reads a study's results takes."""
    parser.add_argument("path_or_study", metavar="PATH_OR_STUDY",
                        help="a study name, a results/<study>/ folder or a parquet file autotune wrote")
    parser.add_argument("--storage", default=None, help="the study's storage: a journal path or an RDB URL (default results/<study>/study.journal, or study.db)")
    add_results(parser)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("leaderboard", help=HELP, description=HELP + ". " + tables.VERIFIED_LABELS + ".")
    add_source(parser)
    parser.add_argument("--top", type=positive_int, default=20, help="entries to print (default 20)")
    add_json(parser, "one JSON object per entry")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    loaded = load.load(args.path_or_study, args.results, args.storage)
    if args.json:
        for row in board.json_rows(loaded.frame.head(args.top)):
            print(json.dumps(row))
        return 0
    print(tables.describe(loaded.frame, loaded.metadata, args.top))
    return 0
