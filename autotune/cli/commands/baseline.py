"""`autotune baseline`: the chapter's hand-written sweep, as a table and a parquet file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from autotune.cli.args import (
    add_machine,
    add_results,
    add_setting,
    add_shape,
    build_machine,
    check_stdout,
    default_out,
    schedule_list,
    shape_arg,
    slots_list,
)
from autotune.cli.errors import UsageError
from autotune.cli.limits import add_limits, check_work

HELP = "run the chapter's hand-written schedules (blocked, k-outermost) and print its table"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "baseline",
        help=HELP,
        description=HELP + ". Every result is checked against numpy's product "
        "and the hazard replay. Writes the table to parquet.",
    )
    add_shape(parser)
    add_setting(
        parser,
        "slots",
        type=slots_list,
        default=None,
        metavar="S[,S...]",
        help="scratchpad slot counts; one table per value (default 64, or --machine slots=N)",
    )
    add_machine(parser, slots=False)
    parser.add_argument(
        "--schedules",
        default=None,
        metavar="LIST",
        help="subset of the sweep, e.g. 1x1:2,2x4:2,4x8:2 (BIxBJ:BUFFERS, BIxrow:BUFFERS, kouter:BUFFERS)",
    )
    add_setting(
        parser,
        "out",
        type=Path,
        default=None,
        help="parquet output (default <results>/baseline/<shape>-s<slots>-<digest of the machines and "
        "schedules>.parquet)",
    )
    add_setting(parser, "force", action="store_true", help="replace the --out file if it exists")
    add_results(parser)
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per row instead of the table"
    )
    add_limits(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd  # with numba (the oracle): loaded when the command runs, not at start-up

    from autotune.oracles.ga1 import ORACLE as GA1
    from autotune.oracles.ga1 import padding_note
    from autotune.oracles.ga1.sweep import SHOWN, format_table, sweep_frame, sweep_rows
    from autotune.results import tables
    from autotune.results.files import check_output, to_stdout

    shape = shape_arg(args.shape)
    schedules = schedule_list(args.schedules)
    frames, texts, json_rows = [], [], []
    machines = [build_machine(GA1, args.machine, slots=slots) for slots in args.slots or [None]]
    if len({m.key() for m in machines}) < len(machines):
        raise UsageError(
            f"--slots {','.join(str(m.slots) for m in machines)} names a scratchpad size twice"
        )
    if args.out is not None:
        check_output(args.out, args.force)
    check_stdout(args)
    for machine in machines:  # every size refused or announced before anything is generated
        check_work(args, GA1, shape, machine)
    for index, machine in enumerate(machines):
        note = padding_note(shape, machine)
        if note and index == 0:
            print(note, file=sys.stderr)
        rows = sweep_rows(shape, machine, schedules)
        frames.append(sweep_frame(shape, machine, rows))
        texts.append(format_table(shape, machine, rows))
        json_rows += [dict(row, slots=machine.slots) for row in rows]
    out = args.out or default_out(args.results / "baseline", shape, machines, schedules)
    frame = pd.concat(frames, ignore_index=True)
    tables.write("baseline", frame, out, {"shape": str(shape), "columns": list(SHOWN)})
    shown = sys.stderr if to_stdout(out) else sys.stdout  # stdout carries the table file
    if args.json:
        for row in json_rows:
            print(json.dumps(row))
    else:
        print("\n\n".join(texts), file=shown)
        if not to_stdout(out):
            print(f"\nwrote {out}")
    failed = [row["schedule"] for row in json_rows if row["verified"] is False]
    if failed:
        print(
            f"autotune: error: verification failed for {', '.join(map(str, failed))}",
            file=sys.stderr,
        )
        return 1
    return 0
