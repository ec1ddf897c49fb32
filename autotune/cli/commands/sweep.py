"""`autotune sweep`: the chapter's bandwidth sweep, or any grid of machines, for a few
hand-written schedules; optionally with what a short tuning run reaches on each machine."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autotune.cli.args import (
    add_machine,
    add_results,
    add_setting,
    build_machine,
    check_stdout,
    default_out,
    positive_int,
    schedule_list,
    shape_arg,
)
from autotune.cli.errors import UsageError
from autotune.cli.limits import add_limits, limits, say
from autotune.cli.strict import strict_int
from autotune.run.resolve import SHORT_TRIALS
from simcore.ga1.machine import MACHINE_KEYS, Machine, MachineError
from simcore.shape import Shape

if TYPE_CHECKING:
    from simcore.ga1.schedules import ChapterSchedule

HELP = (
    "run hand-written schedules over a grid of machines (the chapter's bandwidth sweep by default)"
)
CHAPTER_GRID = ("dma_setup=16,4", "dma_words_per_cycle=8,16,32,64")
# Each machine of the grid is simulated and verified, and its rows kept until the table is
# written: a grid past this many machines is refused before the first (15,000 took 1.3 GB).
MOST_MACHINES = 4096
CHAPTER_SCHEDULES = "1x1:2,2x4:2,4x8:2"
SHORT = {
    "dma_setup": "setup",
    "dma_words_per_cycle": "words/cycle",
    "mxu_cycles": "mxu cyc",
    "slots": "slots",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help=HELP,
        description=HELP + ". Every result is verified; one parquet file holds every row.",
    )
    add_setting(
        parser,
        "shape",
        default="128x128x128",
        metavar="MxKxN",
        help="product shape (default 128x128x128)",
    )
    add_machine(parser)
    parser.add_argument(
        "--machine-grid",
        action="append",
        default=None,
        metavar="KEY=V1,V2,...",
        help=f"a machine parameter and its values; repeat for a cartesian product (default: {' '.join(CHAPTER_GRID)})",
    )
    parser.add_argument(
        "--schedules",
        default=CHAPTER_SCHEDULES,
        metavar="LIST",
        help=f"hand-written schedules, BIxBJ:BUFFERS,... (default {CHAPTER_SCHEDULES}, the chapter's)",
    )
    add_setting(
        parser,
        "out",
        type=Path,
        default=None,
        help="parquet output (default <results>/sweep/<shape>-s<slots>-<digest of the grid, machine and "
        "schedules>.parquet)",
    )
    add_setting(parser, "force", action="store_true", help="replace the --out file if it exists")
    add_results(parser)
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per row instead of the table"
    )
    parser.add_argument(
        "--tuned", action="store_true", help="also run a short in-memory tuning study per machine"
    )
    add_setting(
        parser,
        "trials",
        type=positive_int,
        default=None,
        help=f"--tuned: trials per machine, the chapter's sweep included (default {SHORT_TRIALS})",
    )
    add_limits(parser)
    parser.set_defaults(run=run)


def parse_grid(items: list[str]) -> list[tuple[str, tuple[int, ...]]]:
    """['dma_setup=16,4', ...] -> [('dma_setup', (16, 4)), ...], keys unique and known, at most
    MOST_MACHINES machines in all."""
    grid = [_grid_key(item, i, items) for i, item in enumerate(items)]
    count = math.prod(len(values) for _, values in grid)
    if count > MOST_MACHINES:
        raise UsageError(
            f"--machine-grid: {count:,} machines, at most {MOST_MACHINES:,} (each is simulated "
            "and verified): sweep fewer values"
        )
    return grid


def _grid_key(item: str, index: int, items: list[str]) -> tuple[str, tuple[int, ...]]:
    """One KEY=V1,V2,... of the grid; an error echoes at most 60 characters of it."""
    key, eq, raw = item.partition("=")
    key = key.strip()
    shown = repr(item if len(item) <= 60 else item[:28] + "..." + item[-28:])
    if not eq or key not in MACHINE_KEYS:
        raise UsageError(
            f"--machine-grid {shown}: expected KEY=V1,V2,... with KEY one of {', '.join(MACHINE_KEYS)}"
        )
    if any(key == other.partition("=")[0].strip() for other in items[:index]):
        raise UsageError(f"--machine-grid gives {key} twice")
    try:
        values = tuple(strict_int(v) for v in raw.split(",") if v.strip())
    except argparse.ArgumentTypeError:
        raise UsageError(f"--machine-grid {shown}: values must be integers") from None
    if not values:
        raise UsageError(f"--machine-grid {shown}: no values")
    if len(set(values)) < len(values):
        raise UsageError(f"--machine-grid {shown} gives a value twice")
    return key, values


def machines(base: Machine, grid: list[tuple[str, tuple[int, ...]]]) -> list[Machine]:
    """The cartesian product, the first grid key outermost; each machine validated."""
    found = []
    for values in itertools.product(*(v for _, v in grid)):
        try:
            found.append(base.replace(**dict(zip((k for k, _ in grid), values))))
        except MachineError as exc:
            raise UsageError(f"--machine-grid: {exc}") from None
    return found


def tuned_best(shape: Shape, machine: Machine, trials: int) -> dict[str, Any]:
    """The best of a short in-memory study (seeded with the chapter's sweep), verified."""
    from autotune.results import leaderboard as board
    from autotune.run import pipeline
    from autotune.run.plan import RunPlan
    from autotune.storage import MEMORY

    outcome = pipeline.run(
        RunPlan.of_shape(shape, machine),
        pipeline.RunOptions(
            trials=trials, study="sweep", storage=MEMORY, verify_top=1, write=False
        ),
    )
    if outcome.interrupted:  # the table is written whole or not at all
        raise KeyboardInterrupt
    return board.json_rows(outcome.studies[0].frame.head(1))[0]


def check_size(shape: Shape, machine: Machine, grid: list[tuple[str, tuple[int, ...]]]) -> None:
    """The size check, naming --machine-grid when the grid's values put the machine out of
    range."""
    from autotune.errors import Ref, SizeError
    from autotune.oracles.ga1 import ORACLE as GA1
    from autotune.settings import flag_of

    try:
        GA1.check_size(shape, machine)
    except SizeError as exc:
        fault = [p for p in exc.text.parts if isinstance(p, Ref) and p.setting == "machine"]
        keys = {str(p.value).partition("=")[0] for p in fault}
        if not fault or not keys <= {key for key, _ in grid}:
            raise
        grid_flag = "--machine-grid"
        raise UsageError(
            exc.text.render(lambda s: grid_flag if s == "machine" else flag_of(s))
        ) from None


def run(args: argparse.Namespace) -> int:
    import pandas as pd  # with numba (the oracle): loaded when the command runs, not at start-up

    from autotune.oracles.ga1 import ORACLE as GA1
    from autotune.oracles.ga1 import padding_note
    from autotune.oracles.ga1.sweep import SHOWN, sweep_frame, sweep_rows
    from autotune.results import tables
    from autotune.results.files import check_output, to_stdout

    shape = shape_arg(args.shape)
    schedules: list[ChapterSchedule] = schedule_list(args.schedules)
    if not schedules:
        raise UsageError("--schedules names no schedule")
    grid = parse_grid(args.machine_grid or list(CHAPTER_GRID))
    if args.trials is not None and not args.tuned:
        raise UsageError(
            "--trials counts the trials of --tuned: give --tuned, or leave --trials out"
        )
    args.trials = args.trials or SHORT_TRIALS
    if args.out is not None:
        check_output(args.out, args.force)
    check_stdout(args)
    base = build_machine(GA1, args.machine, slots=args.slots)
    points = machines(base, grid)
    # Refused before anything is generated; the slowest machine's time announced once.
    for machine in points:
        check_size(shape, machine, grid)
    works = [GA1.check_work(shape, machine, limits(args)) for machine in points]
    if works:
        slowest = max(works, key=lambda work: work.evaluation_seconds)  # type: ignore[union-attr]
        say(GA1.notices(shape, slowest))  # type: ignore[arg-type]
    note = padding_note(shape, base)
    if note:
        print(note, file=sys.stderr)
    frames, groups = [], []
    for machine in points:
        rows = sweep_rows(shape, machine, schedules)
        for row in rows:
            row["params_json"] = None
        if args.tuned:
            print(
                f"tuning on {', '.join(f'{k}={getattr(machine, k)}' for k, _ in grid)} ...",
                file=sys.stderr,
            )
            rows.append(_tuned_row(shape, machine, rows, args.trials))
        frames.append(
            sweep_frame(shape, machine, rows).assign(params_json=[r["params_json"] for r in rows])
        )
        groups.append((machine, rows))
    frame = pd.concat(frames, ignore_index=True)
    out = args.out or default_out(
        args.results / "sweep",
        shape,
        points,
        schedules,
        {"grid": grid, "tuned_trials": args.trials if args.tuned else None},
    )
    tables.write(
        "sweep",
        frame,
        out,
        {
            "shape": str(shape),
            "grid": [[k, list(v)] for k, v in grid],
            "schedules": args.schedules,
            "tuned_trials": args.trials if args.tuned else None,
            "columns": list(SHOWN),
        },
    )
    if args.json:
        for machine, rows in groups:
            for row in rows:
                print(json.dumps({**machine.as_dict(), "dma_cycles": machine.dma_cycles, **row}))
    else:
        shown = sys.stderr if to_stdout(out) else sys.stdout  # stdout carries the table file
        print(format_sweep(shape, grid, groups, args.tuned), file=shown)
        if not to_stdout(out):
            print(f"\nwrote {out}")
    failed = [
        f"{r['schedule']} on {m.key()}"
        for m, rows in groups
        for r in rows
        if r["verified"] is False
    ]
    for failure in failed:
        print(f"autotune: error: verification failed for {failure}", file=sys.stderr)
    return 1 if failed else 0


def _tuned_row(
    shape: Shape, machine: Machine, rows: list[dict[str, Any]], trials: int
) -> dict[str, Any]:
    """The tuned result as one more row; vs_best is tuned / best hand-written (< 1 is better)."""
    top = tuned_best(shape, machine, trials)
    hand = [int(r["cycles"]) for r in rows if r["fits"]]  # type: ignore[call-overload]
    row: dict[str, Any] = {key: None for key in rows[0]}
    row.update(
        schedule="tuned",
        family=top["family"],
        fits=True,
        slots_needed=top.get("slots_needed"),
        tiles_moved=top.get("tiles_moved"),
        loads=top.get("loads"),
        stores=top.get("stores"),
        cycles=top["cycles"],
        mxu_util=top.get("mxu_util"),
        dma_busy=top.get("dma_busy"),
        vs_best=int(top["cycles"]) / min(hand) if hand else None,
        verified=top["verified"],  # type: ignore[call-overload]
        verification=top["verification"],
        params_json=top["params_json"],
    )
    return row


def format_sweep(
    shape: Shape,
    grid: list[tuple[str, tuple[int, ...]]],
    groups: list[tuple[Machine, list[dict]]],
    tuned: bool,
) -> str:
    """The chapter's layout: the grid's parameters, DMA cycles per tile, then cycles and MXU
    utilisation per schedule; gap = the first schedule over the best of the others."""
    labels = [str(r["schedule"]) for r in groups[0][1] if r["schedule"] != "tuned"]
    short = [lab.split(" (")[0].split(",")[0].replace("blocked ", "") for lab in labels]
    head = "".join(f"{SHORT.get(k, k):>12}" for k, _ in grid) + f"{'dma cyc/tile':>13}"
    head += "".join(f" {name + ' cycles':>14} {'util':>5}" for name in short)
    head += f"{short[0] + '/best':>11}" if len(short) > 1 else ""
    head += f" {'tuned':>8} {'util':>5} {'tuned/best':>10}" if tuned else ""
    lines = [
        f"{shape}, double-buffered schedules on {groups[0][0].slots} slots; util = matrix-unit utilization",
        head,
    ]
    for machine, rows in groups:
        line = "".join(f"{getattr(machine, k):>12}" for k, _ in grid) + f"{machine.dma_cycles:>13}"
        hand = [r for r in rows if r["schedule"] != "tuned"]
        for r in hand:
            line += (
                f" {r['cycles']:>14} {r['mxu_util']:>5.0%}"
                if r["fits"]
                else f" {'no fit':>14}{'':>6}"
            )
        fitted = [int(r["cycles"]) for r in hand if r["fits"]]
        if len(hand) > 1 and hand[0]["fits"] and len(fitted) > 1:
            line += f"{int(hand[0]['cycles']) / min(fitted[1:]):>10.2f}x"
        elif len(hand) > 1:
            line += f"{'-':>11}"
        if tuned:
            t = rows[-1]
            line += f" {t['cycles']:>8} {t['mxu_util']:>5.0%} {t['vs_best']:>9.3f}x"
        lines.append(line)
    return "\n".join(lines)
