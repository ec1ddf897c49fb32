"""`autotune tune` (the default command): search schedules with Optuna, write a leaderboard."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autotune.cli.args import (
    add_setting,
    add_settings,
    machine_flags,
    positive_int,
    shape_arg,
)
from autotune.cli.errors import UsageError
from autotune.cli.limits import say
from autotune.cli.workloads import check_input_shape, load
from autotune.run.resolve import options_of, oracle_for, plan_of

if TYPE_CHECKING:
    from autotune.run.pipeline import Outcome
    from autotune.run.plan import RunPlan

HELP = "search schedules (and optionally machine parameters) with Optuna; the default command"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tune",
        help=HELP,
        description=(
            "Search schedules for one product with Optuna, an exact simulator as the oracle (GA-1 by default). Every study "
            "starts from the chapter's hand-written sweep, evaluates each distinct point once, persists every trial "
            "(re-running the same command resumes it: --trials is the number of finished trials the study holds at the end, "
            "--more-trials adds some) and ends with a verified leaderboard in "
            "results/<study>/leaderboard.parquet (and pareto.parquet with several objectives)."
        ),
    )
    given = parser.add_mutually_exclusive_group()
    add_setting(given, "shape")
    add_setting(given, "workload")
    add_settings(parser, "input_shapes", "slots", "machine", "arch", "trials", "more_trials")
    add_setting(parser, "timeout")
    add_setting(parser, "sampler")
    add_settings(parser, "seed", "allow_sampler_change", "starts", "transfer", "spaces", "study")
    add_setting(parser, "all_trials")
    add_settings(parser, "storage", "results", "workers")
    parser.add_argument(
        "--top", type=positive_int, default=10, help="entries to print (default 10)"
    )
    add_setting(parser, "verify_top")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the top entries (a workload: each GEMM's winner) as JSON lines",
    )
    add_settings(parser, "search_machine", "machine_range", "max_scratchpad_words")
    add_settings(parser, "max_dma_words_per_cycle", "heartbeat", "objectives", "technology")
    add_settings(parser, "area_budget", "energy_budget", "oracle")
    parser.add_argument(
        "--target", default=None, metavar="NAME", help="deprecated: the same as --oracle"
    )
    add_settings(parser, "pe_budget", "max_hbm_words", "max_products", "max_memory")
    parser.set_defaults(run=run)


def oracle_name(args: argparse.Namespace) -> str | None:
    """The oracle given (None: none given)."""
    if args.target is not None:
        print("autotune: warning: --target is deprecated: use --oracle", file=sys.stderr)
        if args.oracle is not None and args.oracle != args.target:
            raise UsageError(
                f"--oracle {args.oracle} and --target {args.target} disagree: give --oracle alone"
            )
    return args.oracle or args.target  # type: ignore[no-any-return]


def build_plan(args: argparse.Namespace) -> RunPlan:
    """The run's plan, resolved once from the flags (as the Python API resolves its keywords);
    the pipeline validates it."""
    if args.shape is None and args.workload is None:
        raise UsageError("give --shape MxKxN (one product) or --workload FILE (several)")
    check_input_shape(args.input_shape, args.workload)
    shape = shape_arg(args.shape) if args.shape is not None else None  # before the oracle loads
    oracle = oracle_for(oracle_name(args), args.arch)
    machine = machine_flags(
        oracle, args.machine, slots=args.slots, max_hbm_words=args.max_hbm_words
    )
    workload = load(args.workload, args.input_shape) if args.workload is not None else None
    return plan_of(
        shape,
        workload=workload,
        oracle=oracle.name,
        machine=machine,
        arch=args.arch,
        spaces=args.space,
        objectives=args.objectives,
        pe_budget=args.pe_budget,
        search_machine=args.search_machine,
        machine_range=args.machine_range,
        max_scratchpad_words=args.max_scratchpad_words,
        max_dma_words_per_cycle=args.max_dma_words_per_cycle,
        technology=technology(args.tech),
        area_budget=args.area_budget,
        energy_budget=args.energy_budget,
        max_products=args.max_products,
    )


def technology(path: Path | None) -> Any:
    """--tech FILE, validated (a simcore.energy.Technology): a bad table is one line naming the key."""
    if path is None:
        return None
    from simcore.energy import TechnologyError, load_technology

    try:
        return load_technology(path)
    except TechnologyError as exc:
        raise UsageError(f"--tech {path}: {str(exc).splitlines()[0]}") from None


def starting_points(args: argparse.Namespace, plan: RunPlan) -> tuple:
    if args.enqueue is None:
        return ()
    from autotune.results import readback

    oracle = plan.the_oracle()
    base = oracle.machine_record(plan.machine)
    space = plan.machine_space()
    searched = tuple(p.name for p in space.params()) if space else ()
    return tuple(
        readback.starting_point(item, base, searched, str(args.enqueue), oracle.name)
        for item in readback.schedules(args.enqueue)
    )


def run(args: argparse.Namespace) -> int:
    from autotune.cli.quiet import quiet_libraries
    from autotune.run.check import check

    plan = build_plan(args)
    if args.study is not None:
        from autotune.storage.names import name_problem, shown

        problem = name_problem(args.study)
        if problem is not None:
            raise UsageError(f"--study name {shown(args.study)} {problem}")
    options = options_of(
        plan,
        trials=args.trials,
        more_trials=args.more_trials,
        sampler=args.sampler,
        seed=args.seed,
        study=args.study,
        storage=args.storage,
        results=args.results,
        workers=args.workers,
        timeout=args.timeout,
        heartbeat=args.heartbeat,
        verify_top=args.verify_top,
        allow_sampler_change=args.allow_sampler_change,
        starts=starting_points(args, plan),
        transfer=args.transfer,
        progress=sys.stderr.isatty(),
        all_trials=args.all_trials,
        max_memory=args.max_memory,
        worker_setup=quiet_libraries,
    )
    # Refused, or announced, before the engine or Optuna loads.
    checked = check(plan, options)
    say(list(checked.notices))
    for note in checked.notes:
        print(note, file=sys.stderr)
    from autotune.run import pipeline  # Optuna, pandas and numba: only once a run is made

    outcome = pipeline.run_checked(checked, log=lambda line: print(line, file=sys.stderr))
    report(outcome, checked.plan, args)
    for failure in outcome.failures:
        print(f"autotune: error: verification failed: {failure}", file=sys.stderr)
    if outcome.failures:
        return 1
    from autotune.interrupt import STOP

    return STOP.exit_status if outcome.interrupted else 0


def report(outcome: Outcome, plan: RunPlan, args: argparse.Namespace) -> None:
    """What the run found: the leaderboard's top (one product), each GEMM's winner (a workload)
    or the Pareto front of machines (a co-design), as a table or JSON lines."""
    from autotune.results import leaderboard as board
    from autotune.results import tables

    study = outcome.studies[0]
    if outcome.summary is not None:
        frame, metadata = outcome.summary, outcome.summary_metadata
    elif plan.codesign:
        frame = study.frame[study.frame["pareto"] == True] if not study.frame.empty else study.frame  # noqa: E712
        metadata = {
            "objectives": list(plan.objectives),
            "workload": plan.workload.name,
            "oracle": plan.oracle,
        }
    else:
        frame, metadata = study.frame.head(args.top), {}
    if args.json:
        for row in board.json_rows(frame):
            print(json.dumps(row))
        return
    status = "interrupted; kept" if outcome.interrupted else "done:"
    if outcome.summary is not None:
        if outcome.interrupted:
            print(
                f"interrupted; kept the trials of {len(outcome.studies)} of {len(plan.workload.gemms)} GEMM studies"
            )
        print(f"done: {len(outcome.studies)} GEMM studies, {outcome.elapsed:.1f} s")
        print(tables.format_workload(frame, metadata))
    elif plan.codesign:
        print(
            f"{status} study {study.name!r}, {study.trials} trials ({study.distinct} distinct machines), {outcome.elapsed:.1f} s"
        )
        print(tables.format_front(frame, metadata))
    else:
        print(
            f"{status} study {study.name!r}, {study.trials} trials in storage, {outcome.elapsed:.1f} s this run"
        )
        print(
            tables.format_rows(
                frame, args.top, plan.objective_measures(), plan.the_oracle().table_columns
            )
        )
    if outcome.paths:
        print(f"wrote {' and '.join(str(p) for p in outcome.paths)}")
