"""`autotune studies`: the studies there are, with what each is about and how far it got."""

from __future__ import annotations

import argparse
import json

from autotune.cli.args import add_json, add_results, add_setting

HELP = "list the studies: name, oracle, shape, machine, trials completed, best cycles, last update"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "studies",
        help=HELP,
        description=HELP + " (read from their storage, so a killed run is listed too).",
    )
    add_setting(
        parser,
        "storage",
        default=None,
        help="a journal path or an RDB URL (default: every results/<study>/study.journal or study.db)",
    )
    add_results(parser)
    add_json(parser, "one JSON object per study")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from autotune.results import readback

    rows = readback.studies(args.results, args.storage)
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        print(readback.format_studies(rows))
    return 0
