"""`autotune tune` (the default command): search schedules with Optuna, write a leaderboard."""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

from search_spaces.machine import MachineSpace, parse_ranges
from search_spaces.registry import DEFAULT_SPACES, SpaceError, available, families

from autotune import leaderboard as board
from autotune.args import add_machine, add_shape, build_machine, positive_int, shape_arg
from autotune.errors import UsageError
from autotune.interrupt import graceful_stop
from autotune.limits import add_limits, check_work
from autotune.problem import Problem
from autotune.study import GRACE_SECONDS, HEARTBEAT_SECONDS, RESULTS, SAMPLERS, StudySettings, default_storage, enqueue, finished_count, grid_points, load_or_create, run_workers, seed_points

TARGETS = ("ga1", "systolic")
OBJECTIVES = {"ga1": ("cycles", "scratchpad_words", "dma_words_per_cycle", "mxu_cycles", "tiles_moved"),
              "systolic": ("cycles", "words_per_mac", "pes")}
HELP = "search schedules (and optionally machine parameters) with Optuna; the default command"
DEFAULT_TRIALS = 1000
WORKLOAD_TRIALS = 40


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tune", help=HELP, description=(
        "Search schedules for one product with Optuna, simcore's GA-1 simulator as the oracle. Every study "
        "starts from the chapter's hand-written sweep, evaluates each distinct point once, persists every trial "
        "(re-running with the same --study resumes it) and ends with a verified leaderboard in "
        "results/<study>/leaderboard.parquet."))
    given = parser.add_mutually_exclusive_group()
    add_shape(given, required=False)  # type: ignore[arg-type]
    given.add_argument("--workload", default=None, metavar="FILE",
                       help="a .toml or .csv list of weighted GEMMs (see search_spaces/workloads/): tune each, or co-design with --search-machine")
    parser.add_argument("--slots", type=positive_int, default=64, help="scratchpad tile slots (default 64)")
    add_machine(parser)
    parser.add_argument("--trials", type=int, default=None, help=f"trials to run now, the seeded baseline included (default {DEFAULT_TRIALS}; "
                        f"--workload: per GEMM, or machines with --search-machine, default {WORKLOAD_TRIALS})")
    parser.add_argument("--timeout", type=float, default=None, help="stop starting new trials after this many seconds")
    parser.add_argument("--sampler", choices=SAMPLERS, default="tpe", help="tpe (default), random, grid (every feasible point, in order) or nsga2")
    parser.add_argument("--seed", type=int, default=0, help="sampler seed: the same seed gives the same study (default 0; one worker)")
    parser.add_argument("--space", default=",".join(DEFAULT_SPACES), help=f"search spaces to combine (default {','.join(DEFAULT_SPACES)})")
    parser.add_argument("--study", default=None, help="study name (default derived from shape, machine and space)")
    parser.add_argument("--storage", default=None, help="Optuna storage URL (default sqlite file results/<study>/study.db; e.g. postgresql://user@host/db)")
    parser.add_argument("--workers", type=positive_int, default=1, help="worker processes sharing the study on this machine")
    parser.add_argument("--top", type=positive_int, default=10, help="entries to print (default 10)")
    parser.add_argument("--verify-top", type=positive_int, default=10, help="entries re-run functionally and hazard-checked (default 10)")
    parser.add_argument("--json", action="store_true", help="print the top entries as JSON lines")
    parser.add_argument("--search-machine", action="store_true", help="also search slots, dma_setup, dma_words_per_cycle and mxu_cycles")
    parser.add_argument("--machine-range", default="", metavar="KEY=LOW:HIGH|KEY=A|B,...", help="ranges for --search-machine")
    parser.add_argument("--max-scratchpad-words", type=positive_int, default=None, help="scratchpad budget in words for --search-machine (default: the base machine's)")
    parser.add_argument("--max-dma-words-per-cycle", type=positive_int, default=None, help="--workload --search-machine: most DMA words per cycle (a constraint)")
    parser.add_argument("--heartbeat", type=positive_int, default=None, metavar="SECONDS",
                        help="RDB storage heartbeat; a trial silent for 2 x this is failed and retried (default 5 s, grace 20 s)")
    parser.add_argument("--objectives", default=None, metavar="LIST",
                        help="objectives to minimise, e.g. cycles,scratchpad_words (default cycles; systolic: cycles,words_per_mac)")
    parser.add_argument("--target", choices=TARGETS, default="ga1", help="the oracle: ga1 (default) or systolic (a weight-stationary array)")
    parser.add_argument("--pe-budget", type=positive_int, default=4096, help="systolic: most processing elements R x C (default 4096)")
    parser.add_argument("--max-hbm-words", type=positive_int, default=64, help="systolic: most memory words per cycle (default 64)")
    add_limits(parser)
    parser.set_defaults(run=run)


def objectives_of(args: argparse.Namespace) -> tuple[str, ...]:
    default = "cycles,words_per_mac" if args.target == "systolic" else "cycles"
    names = tuple(n.strip() for n in (args.objectives or default).split(",") if n.strip())
    unknown = [n for n in names if n not in OBJECTIVES[args.target]]
    if unknown or not names:
        raise UsageError(f"unknown objective(s) {', '.join(unknown) or '(none)'} for target {args.target} "
                         f"(known: {', '.join(OBJECTIVES[args.target])})")
    if names[0] != "cycles":
        raise UsageError("the first objective must be cycles")
    return names


def build_problem(args: argparse.Namespace) -> Problem:
    shape = shape_arg(args.shape)
    machine = build_machine(args.machine, args.slots)
    if args.target == "systolic":
        from search_spaces.systolic import systolic_family

        if args.search_machine:
            raise UsageError("--search-machine is for the ga1 target; the systolic target searches its array itself")
        return Problem(shape, machine, (systolic_family(args.pe_budget, args.max_hbm_words),))
    try:
        spaces = [name.strip() for name in args.space.split(",") if name.strip()]
        found = families(spaces)
    except SpaceError as exc:
        raise UsageError(f"{exc}; available spaces: {', '.join(available())}") from None
    machine_space = None
    if args.search_machine:
        try:
            machine_space = MachineSpace.create(machine, parse_ranges(args.machine_range), args.max_scratchpad_words)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    elif args.machine_range or args.max_scratchpad_words:
        raise UsageError("--machine-range and --max-scratchpad-words need --search-machine")
    if machine_space is None and machine.slots < 3:
        raise UsageError(f"a scratchpad of {machine.slots} slots is too small for any schedule (a product needs 3: C, A and B)")
    return Problem(shape, machine, found, machine_space)


def identity(problem: Problem, args: argparse.Namespace, objectives: tuple[str, ...]) -> dict:
    ident = {"oracle": args.target, "shape": str(problem.shape), "machine": problem.machine.key(), "spaces": args.space,
             "machine_space": repr(problem.machine_space) if problem.machine_space else None,
             "objectives": list(objectives)}
    if args.target == "systolic":
        ident.update(spaces="systolic", pe_budget=args.pe_budget, max_hbm_words=args.max_hbm_words)
    return ident


def default_study_name(problem: Problem, ident: dict) -> str:
    plain = {**ident, "spaces": ",".join(DEFAULT_SPACES), "machine_space": None,
             "machine": type(problem.machine)(slots=problem.machine.slots).key(), "objectives": ["cycles"]}
    suffix = "" if plain == ident else "-" + hashlib.sha1(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:8]
    if ident["oracle"] == "systolic":
        return f"systolic-{problem.shape}-pe{ident['pe_budget']}{suffix}"
    return f"ga1-{problem.shape}-s{problem.machine.slots}{suffix}"


def run(args: argparse.Namespace) -> int:
    if args.trials is not None and args.trials < 1:
        raise UsageError(f"--trials must be at least 1, got {args.trials}")
    if args.workload is not None:
        from autotune.workload_tune import run_workload

        return run_workload(args, args.trials or WORKLOAD_TRIALS)
    if args.shape is None:
        raise UsageError("give --shape MxKxN (one product) or --workload FILE (several)")
    if args.max_dma_words_per_cycle is not None:
        raise UsageError("--max-dma-words-per-cycle is for --workload --search-machine")
    args.trials = args.trials or DEFAULT_TRIALS
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    objectives = objectives_of(args)
    problem = build_problem(args)
    if args.target == "ga1":
        check_work(args, problem.shape, problem.machine)
    ident = identity(problem, args, objectives)
    name = args.study or default_study_name(problem, ident)
    settings = StudySettings(name=name, storage_url=args.storage or default_storage(name), sampler=args.sampler,
                             seed=args.seed, objectives=objectives, identity=ident,
                             heartbeat_seconds=args.heartbeat or HEARTBEAT_SECONDS,
                             grace_seconds=2 * args.heartbeat if args.heartbeat else GRACE_SECONDS)
    study = load_or_create(settings)
    enqueue(study, seed_points(problem), "baseline")
    if args.sampler == "grid":
        enqueue(study, grid_points(problem), "grid")
    target = finished_count(study) + args.trials
    started = time.perf_counter()
    interrupted = False
    try:
        with graceful_stop() as stop:
            run_workers(settings, problem, target, args.timeout, args.workers, progress=sys.stderr.isatty())
        interrupted = stop.requested
    except KeyboardInterrupt:
        interrupted = True
    elapsed = time.perf_counter() - started
    return report(study, problem, settings, args, elapsed, interrupted)


def report(study, problem: Problem, settings: StudySettings, args: argparse.Namespace, elapsed: float, interrupted: bool) -> int:
    info = board.RunInfo(settings.name, settings.sampler, settings.seed, problem.shape, problem.machine, settings.objectives)
    names = sorted({p.name for params in problem.params_by_family().values() for p in params})
    rows = board.trial_rows(study, info, names)
    failures = board.annotate(rows, problem, args.verify_top, settings.objectives)
    frame = board.to_frame(rows)
    path = board.write(frame, RESULTS / settings.name / "leaderboard.parquet", info)
    # Finished trials: with --sampler grid the queue holds every feasible point, WAITING until run.
    trials = finished_count(study)
    if args.json:
        for row in board.json_rows(frame.head(args.top)):
            print(json.dumps(row))
    else:
        status = "interrupted; kept" if interrupted else "done:"
        print(f"{status} study {settings.name!r}, {trials} trials in storage, {elapsed:.1f} s this run")
        print(board.format_rows(frame, args.top, settings.objectives))
        print(f"wrote {path}")
    for failure in failures:
        print(f"autotune: error: verification failed: {failure}", file=sys.stderr)
    if failures:
        return 1
    return 130 if interrupted else 0
