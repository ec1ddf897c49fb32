"""`autotune tune` (the default command): search schedules with Optuna, write a leaderboard."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autotune import oracles
from autotune.cli.args import (
    MAX_WORKERS,
    add_machine,
    add_results,
    add_shape,
    machine_flags,
    positive_float,
    positive_int,
    seed_int,
    shape_arg,
    worker_count,
)
from autotune.cli.errors import UsageError
from autotune.cli.limits import add_limits, check_work, limits
from autotune.cli.workloads import add_input_shape, check_input_shape, load, workload_help
from autotune.oracles.capabilities import SizeGuard
from autotune.run.settings import DEFAULT_TRIALS, SHORT_TRIALS, options_of, plan_of
from autotune.search import sampling

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
            "(re-running with the same --study resumes it) and ends with a verified leaderboard in "
            "results/<study>/leaderboard.parquet (and pareto.parquet with several objectives)."
        ),
    )
    given = parser.add_mutually_exclusive_group()
    add_shape(given, required=False)  # type: ignore[arg-type]
    given.add_argument(
        "--workload",
        default=None,
        metavar="FILE",
        help=workload_help(
            " (`autotune gemms FILE` lists its GEMMs): tune each, or co-design with --search-machine"
        ),
    )
    add_input_shape(parser)
    add_machine(parser)
    parser.add_argument(
        "--trials",
        type=int,
        default=None,
        help=f"trials to run now, the seeded baseline included (default {DEFAULT_TRIALS}; "
        f"--workload: per GEMM shape, each study tuned up to this many and reused once it holds them, or machines with "
        f"--search-machine, default {SHORT_TRIALS})",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="stop starting new trials after this many seconds",
    )
    parser.add_argument(
        "--sampler",
        choices=sampling.names(),
        default=sampling.DEFAULT_SAMPLER,
        help=sampling.described(),
    )
    parser.add_argument(
        "--seed",
        type=seed_int,
        default=0,
        help="sampler seed, 0 to 2**32 - 1: the same seed gives the same study (default 0; one worker)",
    )
    parser.add_argument(
        "--allow-sampler-change",
        action="store_true",
        help="resume a study with another --sampler or --seed (each trial records its own)",
    )
    parser.add_argument(
        "--enqueue",
        type=Path,
        default=None,
        metavar="FILE",
        help="start from the schedule(s) of FILE, written by `autotune export STUDY --format json`",
    )
    parser.add_argument(
        "--transfer",
        action="store_true",
        help="also start from the best schedules of earlier studies on nearby shapes and machines "
        "(in --results, or --storage), scaled to this shape; each such trial records its origin",
    )
    parser.add_argument(
        "--space",
        default=None,
        help="search spaces to combine (default: the oracle's; ga1: chapter,delayed, where delayed "
        "is the general and strip orders with each store delay; ga1 also has general and strips "
        "without the delay; systolic: systolic)",
    )
    parser.add_argument(
        "--study", default=None, help="study name (default derived from shape, machine and space)"
    )
    parser.add_argument(
        "--storage",
        default=None,
        help="where the study lives: a journal file path, an RDB URL (sqlite:///file.db, postgresql://user@host/db) "
        "or :memory: (default: the journal results/<study>/study.journal, or the study.db of a study begun before it)",
    )
    add_results(parser)
    parser.add_argument(
        "--workers",
        type=worker_count,
        default=1,
        help=f"worker processes sharing the study on this machine (at most {MAX_WORKERS}: 4 per "
        "CPU, at most 256)",
    )
    parser.add_argument(
        "--top", type=positive_int, default=10, help="entries to print (default 10)"
    )
    parser.add_argument(
        "--verify-top",
        type=int,
        default=None,
        help="entries re-run functionally and hazard-checked, besides every Pareto entry "
        "(default 10; --workload: each GEMM's winner; a co-design: the best machine)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the top entries (a workload: each GEMM's winner) as JSON lines",
    )
    parser.add_argument(
        "--search-machine",
        action="store_true",
        help="also search slots, dma_setup, dma_words_per_cycle and mxu_cycles",
    )
    parser.add_argument(
        "--machine-range",
        default="",
        metavar="KEY=LOW:HIGH|KEY=A|B,...",
        help="ranges for --search-machine",
    )
    parser.add_argument(
        "--max-scratchpad-words",
        type=positive_int,
        default=None,
        help="scratchpad budget in words for --search-machine (default: the base machine's)",
    )
    parser.add_argument(
        "--max-dma-words-per-cycle",
        type=positive_int,
        default=None,
        help="--workload --search-machine: most DMA words per cycle (a constraint)",
    )
    parser.add_argument(
        "--heartbeat",
        type=positive_int,
        default=None,
        metavar="SECONDS",
        help="RDB storage heartbeat; a trial silent for 2 x this is failed and retried (default 5 s, grace 20 s; "
        "a journal needs none: a dead worker's trial is retried at once)",
    )
    parser.add_argument(
        "--objectives",
        default=None,
        metavar="LIST",
        help="objectives, cycles first, e.g. cycles,energy,area (default cycles; systolic: cycles,words_per_mac): "
        "cycles, energy (pJ), edp (pJ x cycles), area (mm2); GA-1 also scratchpad_words, dma_words_per_cycle, "
        "mxu_cycles, tiles_moved; systolic also words_per_mac, pes. mxu_cycles is maximised (a slower unit "
        "is cheaper), the others minimised; several give a Pareto front. GA-1's area and machine parameters "
        "need --search-machine (a fixed machine has one value of each)",
    )
    parser.add_argument(
        "--tech",
        type=Path,
        default=None,
        metavar="FILE",
        help="a technology table (TOML) to cost energy and area with, instead of the shipped 45 nm one "
        "(see docs/energy.md)",
    )
    parser.add_argument(
        "--area-budget",
        type=positive_float,
        default=None,
        metavar="MM2",
        help="--search-machine (or the systolic oracle): most area in mm2, graded before a machine is simulated",
    )
    parser.add_argument(
        "--energy-budget",
        type=positive_float,
        default=None,
        metavar="PJ",
        help="--search-machine (or the systolic oracle): most energy in pJ of the product (a workload: "
        "its weighted total), graded once the candidate has run",
    )
    parser.add_argument(
        "--oracle",
        default=None,
        metavar="NAME",
        help=f"the cost model: {', '.join(oracles.names())} (default {oracles.DEFAULT_ORACLE}; "
        "any package registered in the entry-point group autotune.oracles)",
    )
    parser.add_argument(
        "--target", default=None, metavar="NAME", help="deprecated: the same as --oracle"
    )
    parser.add_argument(
        "--pe-budget",
        type=positive_int,
        default=None,
        help="systolic: most processing elements (--machine pe_budget=N); co-design: most MACs per cycle (default 4096)",
    )
    parser.add_argument(
        "--max-hbm-words",
        type=positive_int,
        default=None,
        help="systolic: most memory words per cycle (--machine max_hbm_words=N, default 64)",
    )
    add_limits(parser)
    parser.set_defaults(run=run)


def oracle_name(args: argparse.Namespace) -> str:
    if args.target is not None:
        print("autotune: warning: --target is deprecated: use --oracle", file=sys.stderr)
        if args.oracle is not None and args.oracle != args.target:
            raise UsageError(
                f"--oracle {args.oracle} and --target {args.target} disagree: give --oracle alone"
            )
    return str(args.oracle or args.target or oracles.DEFAULT_ORACLE)


def build_plan(args: argparse.Namespace) -> RunPlan:
    """The run's plan, resolved once from the flags (as the Python API resolves its keywords);
    the pipeline validates it."""
    if args.shape is None and args.workload is None:
        raise UsageError("give --shape MxKxN (one product) or --workload FILE (several)")
    check_input_shape(args.input_shape, args.workload)
    shape = shape_arg(args.shape) if args.shape is not None else None  # before the oracle loads
    oracle = oracles.get(oracle_name(args))
    machine = machine_flags(
        oracle, args.machine, slots=args.slots, max_hbm_words=args.max_hbm_words
    )
    workload = load(args.workload, args.input_shape) if args.workload is not None else None
    return plan_of(
        shape,
        workload=workload,
        oracle=oracle.name,
        machine=machine,
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

    base = plan.the_oracle().machine_record(plan.machine)
    space = plan.machine_space()
    searched = tuple(p.name for p in space.params()) if space else ()
    return tuple(
        readback.starting_point(item, base, searched, str(args.enqueue))
        for item in readback.schedules(args.enqueue)
    )


def run(args: argparse.Namespace) -> int:
    spec = build_plan(args)
    spec.validate()  # a plan no search can honour is refused before the engine or Optuna loads
    if args.study is not None:
        from autotune.storage.names import name_problem, shown

        problem = name_problem(args.study)
        if problem is not None:
            raise UsageError(f"--study name {shown(args.study)} {problem}")
    oracle, space = spec.the_oracle(), spec.machine_space()
    guard = oracle.capability(SizeGuard)
    for gemm in spec.workload.gemms:  # every GEMM refused or announced before anything is generated
        if check_work(args, oracle, gemm.shape, spec.machine) is not None and space is not None:
            hint = "; narrow --machine-range slots or --max-scratchpad-words"
            for machine in space.reachable(spec.machine):
                guard.check_memory(gemm.shape, machine, limits(args), hint)  # type: ignore[union-attr]
    from autotune.run import pipeline  # Optuna, pandas and numba: only once a run is made

    options = options_of(
        spec,
        trials=args.trials,
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
        starts=starting_points(args, spec),
        transfer=args.transfer,
        progress=sys.stderr.isatty(),
    )
    for note in spec.notes():
        print(note, file=sys.stderr)
    outcome = pipeline.run(spec, options, log=lambda line: print(line, file=sys.stderr))
    report(outcome, spec, args)
    for failure in outcome.failures:
        print(f"autotune: error: verification failed: {failure}", file=sys.stderr)
    if outcome.failures:
        return 1
    from autotune.interrupt import STOP

    return STOP.exit_status if outcome.interrupted else 0


def report(outcome: Outcome, spec: RunPlan, args: argparse.Namespace) -> None:
    """What the run found: the leaderboard's top (one product), each GEMM's winner (a workload)
    or the Pareto front of machines (a co-design), as a table or JSON lines."""
    from autotune.results import leaderboard as board
    from autotune.results import tables

    study = outcome.studies[0]
    if outcome.summary is not None:
        frame, metadata = outcome.summary, outcome.summary_metadata
    elif spec.codesign:
        frame = study.frame[study.frame["pareto"] == True] if not study.frame.empty else study.frame  # noqa: E712
        metadata = {
            "objectives": list(spec.objectives),
            "workload": spec.workload.name,
            "oracle": spec.oracle,
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
                f"interrupted; kept the trials of {len(outcome.studies)} of {len(spec.workload.gemms)} GEMM studies"
            )
        print(f"done: {len(outcome.studies)} GEMM studies, {outcome.elapsed:.1f} s")
        print(tables.format_workload(frame, metadata))
    elif spec.codesign:
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
                frame, args.top, spec.objective_measures(), spec.the_oracle().table_columns
            )
        )
    if outcome.paths:
        print(f"wrote {' and '.join(str(p) for p in outcome.paths)}")
