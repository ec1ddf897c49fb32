"""`autotune export`: one leaderboard entry as a schedule file (JSON, which `tune --enqueue`
takes as a starting point) or as its GA-1 program (text, the chapter's instruction vocabulary)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autotune.cli.args import add_setting, add_source, positive_int
from autotune.cli.errors import UsageError
from autotune.cli.limits import add_limits, check_work
from simcore.shape import Shape

HELP = "export a leaderboard entry: its schedule as JSON, or its GA-1 program as text (asm)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help=HELP,
        description=HELP + ". asm is one instruction per line: "
        "load SLOT TENSOR TI TJ, store SLOT TENSOR TI TJ, zero SLOT, mxu C A B (simcore/ga1/asm.py).",
    )
    add_source(parser)
    parser.add_argument("--rank", type=positive_int, default=1, help="leaderboard rank (default 1)")
    parser.add_argument(
        "--format",
        choices=("json", "asm"),
        default="json",
        help="json (default; `tune --enqueue` reads it) or asm",
    )
    add_setting(
        parser,
        "out",
        type=Path,
        default=None,
        help="write to FILE (default: standard output); never a study's own file",
    )
    add_setting(parser, "force", action="store_true", help="replace FILE if it exists")
    add_limits(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from autotune.results import load, readback
    from autotune.results.files import check_output, to_stdout, write_text

    if to_stdout(args.out):
        args.out = None  # standard output, as without --out
    if args.out is not None:
        check_output(args.out, args.force)
    loaded = load.load(args.path_or_study, args.results, args.storage)
    row = readback.entry(loaded, args.rank)
    write = readback.export_asm if args.format == "asm" else readback.export_json
    if not row.get("feasible"):
        raise UsageError(
            f"rank {args.rank} is infeasible: it was never simulated, there is nothing to export"
        )
    if args.format == "asm":
        check_program(args, row, loaded.path.parent)
    text = write(row, loaded.metadata, args.rank, loaded.path.parent)
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_text(text, args.out)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def check_program(args: argparse.Namespace, row: dict, study_folder: Path) -> None:
    """Price the program before building it: its text grows with the instructions, so a large
    shape is refused in one line (as `show` refuses its timeline) instead of filling the disk."""
    from autotune.results import leaderboard as board

    found = board.family_of(str(row["family"]), study_folder=study_folder)
    if found is None:
        return  # export_asm says the family is unknown
    oracle = found[0]
    shape = Shape(int(row["m"]), int(row["k"]), int(row["n"]))  # type: ignore[call-overload]
    machine = board.machine_of(row, oracle)
    check_work(args, oracle, shape, machine, verify=False, program=True)
