"""`autotune leaderboard`: print a leaderboard written by a run."""
from __future__ import annotations

import argparse
import json

from autotune import leaderboard as board
from autotune.args import positive_int

HELP = "print a study's leaderboard (a parquet path, a results folder or a study name)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("leaderboard", help=HELP, description=HELP + ".")
    parser.add_argument("path_or_study", metavar="PATH_OR_STUDY")
    parser.add_argument("--top", type=positive_int, default=20, help="entries to print (default 20)")
    parser.add_argument("--json", action="store_true", help="one JSON object per entry")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    frame, metadata = board.load(args.path_or_study)
    if args.json:
        for row in board.json_rows(frame.head(args.top)):
            print(json.dumps(row))
        return 0
    print(f"study {metadata.get('study')!r}, shape {metadata.get('shape')}, {len(frame)} distinct entries")
    print(board.format_rows(frame, args.top, tuple(metadata.get("objectives") or ("cycles",))))  # type: ignore[arg-type]
    return 0
