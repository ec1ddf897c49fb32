"""`autotune show`: one leaderboard entry's parameters and its family's picture of it (the
engine timeline for GA-1)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from autotune.cli.args import add_json, add_source, positive_int
from autotune.cli.errors import UsageError, message
from autotune.cli.limits import add_limits, check_work, limits
from autotune.oracles.base import Oracle
from autotune.oracles.capabilities import EnergyAndArea, Report, TimingMethods
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
    parser.add_argument(
        "--timing",
        choices=("recorded", "full"),
        default="recorded",
        help="full: time the entry again by full simulation (every instruction) and print both "
        "cycle counts; JSON fields cycles (as recorded) and cycles_full (default: recorded)",
    )
    add_json(parser, "one JSON object: the entry's columns and its description")
    add_limits(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from autotune.results import leaderboard as board
    from autotune.results import load, readback

    loaded = load.load(args.path_or_study, args.results, args.storage)
    row = readback.entry(loaded, args.rank)
    shape = Shape(int(row["m"]), int(row["k"]), int(row["n"]))  # type: ignore[call-overload]
    found = (
        board.family_of(str(row["family"]), study_folder=loaded.path.parent)
        if row.get("feasible") and row.get("family")
        else None
    )
    picture = energy = ""
    full: dict[str, object] = {}
    if args.timing == "full" and found is None:
        raise UsageError(f"--timing full: rank {args.rank} was never simulated (infeasible)")
    if found is not None:
        oracle, family = found
        machine = board.machine_of(row, oracle)
        if args.timing == "full":
            full = {"cycles_full": timed_in_full(args, oracle, family, row, shape, machine)}
        picture = picture_of(args, oracle, family, row, shape, machine)
        energy = energy_breakdown(oracle, family, row, shape, machine, loaded.metadata)
    if args.json:
        described = {"description": picture or None, "energy_breakdown": energy or None}
        print(json.dumps({**row, **full, **described}))
        return 0
    print(f"rank {args.rank} of study {loaded.metadata.get('study')!r}, shape {shape}")
    for key, value in row.items():
        if value is not None:
            print(f"  {key:<24} {value}")
    if full:
        same = "equal" if full["cycles_full"] == row["cycles"] else "DIFFERENT"
        print(f"  {'cycles_full':<24} {full['cycles_full']}   (timed in full: {same})")
    print(picture if picture else "infeasible: never simulated" if not row.get("feasible") else "")
    if energy:
        print(energy)
    return 0


def timed_in_full(
    args: argparse.Namespace, oracle: Oracle, family: Any, row: dict, shape: Shape, machine: Any
) -> int:
    """The entry's cycles by full simulation; refused past --max-products."""
    from autotune.oracles import EvaluationRefused, configured
    from autotune.oracles.capabilities import SizeGuard
    from autotune.results import leaderboard as board

    methods = oracle.capability(TimingMethods)
    if methods is None or "full" not in methods.timing_methods:
        raise UsageError(f"--timing full: the {oracle.name} oracle has one timing method")
    guard = oracle.capability(SizeGuard)
    most = None
    if guard is not None:
        work, most = guard.work(shape, machine), limits(args).products(guard)
        if work is not None and work.products > most:
            raise UsageError(
                f"--timing full: {shape} needs {work.products:.3g} {guard.work_unit} in full "
                f"(about {work.evaluation_seconds:.3g} s), over the limit of {most:.3g} "
                "(--max-products)"
            )
    limited = configured(oracle, full_limit=most).capability(TimingMethods)
    assert limited is not None
    try:
        return int(limited.cycles_by(family, board.schedule_point(row), shape, machine, "full"))
    except EvaluationRefused as exc:
        raise UsageError(f"--timing full: {exc} (--max-products)") from None


def picture_of(
    args: argparse.Namespace, oracle: Oracle, family: Any, row: dict, shape: Shape, machine: Any
) -> str:
    """The oracle's picture of the entry, or why there is none (a program too large to draw)."""
    from autotune.errors import WorkError
    from autotune.results import leaderboard as board

    report = oracle.capability(Report)
    if report is None:
        return ""
    try:  # the picture may build the program: refused or announced first
        check_work(args, oracle, shape, machine, verify=False, program=True)
    except WorkError as exc:
        return f"no timeline: {message(exc)}"
    return report.report(family, board.schedule_point(row), shape, machine, per_char=args.per_char)


def energy_breakdown(
    oracle: Oracle, family: Any, row: dict, shape: Shape, machine: Any, metadata: dict
) -> str:
    """The entry's energy and area, every line item with its count, costed with the table the
    study was run with; "" for an oracle that does not cost them."""
    from autotune.oracles import configured
    from autotune.results import leaderboard as board
    from simcore.energy import technology_from_dict

    table = metadata.get("technology_table")
    costed = configured(oracle, technology=technology_from_dict(table) if table else None)
    costing = costed.capability(EnergyAndArea)
    if costing is None:
        return ""
    return costing.cost(family, board.schedule_point(row), shape, machine).describe()
