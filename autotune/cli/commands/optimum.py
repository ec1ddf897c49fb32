"""`autotune optimum`: the exact optimum of one GA-1 product on small instances (OR-Tools CP-SAT),
its schedule verified and written, and optionally put into a study."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from autotune.cli.args import (
    add_machine,
    add_results,
    add_setting,
    add_shape,
    build_machine,
    check_stdout,
    cp_sat_seed,
    non_negative_int,
    positive_float,
    positive_int,
    shape_arg,
)
from autotune.cli.errors import UsageError
from autotune.cli.limits import add_memory_limit, limits, say

if TYPE_CHECKING:
    from autotune.oracles.ga1.optimum import Solved, Start
    from autotune.run.imports import Destination, Imported

HELP = "solve one GA-1 product exactly (CP-SAT, small instances): the optimum or a proven bracket"
DEFAULT_TIME_LIMIT = 60.0
DEFAULT_WORKERS = 8
DEFAULT_SEARCH_NODES = 20_000_000


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "optimum",
        help=HELP,
        description=HELP + ". The schedule runs through the ordinary simulators and is verified "
        "(numpy's product, hazard replay) before it is written or put into a study; see "
        "docs/exact.md. Needs the exact extra (pip install 'autotune[exact]').",
    )
    add_shape(parser)
    add_machine(parser)
    add_setting(
        parser,
        "time_limit",
        type=positive_float,
        default=DEFAULT_TIME_LIMIT,
        metavar="SECONDS",
        help="stop after this many wall seconds in all: CP-SAT, then the exhaustive search and "
        f"the questions in the time it leaves (default {DEFAULT_TIME_LIMIT:g})",
    )
    add_setting(
        parser,
        "work_limit",
        type=positive_float,
        default=None,
        metavar="UNITS",
        help="also stop after this much CP-SAT deterministic time: with it a seed gives the same "
        "schedule on every run",
    )
    add_setting(
        parser,
        "proof_limit",
        type=positive_float,
        default=None,
        metavar="UNITS",
        help="when the search stops short of a proof, ask CP-SAT whether a schedule one cycle "
        "faster exists, with this much deterministic time per question (and --time-limit): "
        "'no' proves the schedule optimal, 'yes' gives a faster one and the next question. "
        "Default: no such questions",
    )
    add_setting(
        parser,
        "search_nodes",
        type=non_negative_int,
        default=DEFAULT_SEARCH_NODES,
        metavar="STATES",
        help="on the smallest instances (2x2x3 tiles or fewer), when CP-SAT stops short of a "
        "proof, search every schedule exhaustively, visiting at most this many states (and "
        "--time-limit): when the search ends, its schedule is optimal; 0: no such search "
        f"(default {DEFAULT_SEARCH_NODES:,})",
    )
    add_setting(
        parser,
        "workers",
        type=positive_int,
        default=DEFAULT_WORKERS,
        help=f"CP-SAT strategies, interleaved in one thread (default {DEFAULT_WORKERS})",
    )
    add_setting(
        parser, "seed", type=cp_sat_seed, default=0, help="CP-SAT's random seed (default 0)"
    )
    add_setting(
        parser,
        "out",
        type=Path,
        default=None,
        metavar="FILE",
        help="the result file, JSON with the program (default <results>/optimum/<shape>-s<slots>-"
        "<digest of the machine>.json)",
    )
    add_setting(parser, "force", action="store_true", help="replace the result file if it exists")
    add_results(parser)
    add_setting(
        parser,
        "enqueue",
        default=None,
        metavar="STUDY",
        help="also put the schedule into this study as a completed trial (created if missing; an "
        "existing one must tune the same shape on the same machine); `tune --study STUDY` resumes it",
    )
    add_setting(
        parser,
        "storage",
        default=None,
        help="--enqueue: the study's storage (default results/<study>/study.journal)",
    )
    parser.add_argument(
        "--warm-start",
        action="store_true",
        help="--enqueue: start from the study's best schedule (when it has one) instead of the "
        "general generator's default: the result is never slower than the study's best",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the result as one JSON object (no program)"
    )
    add_memory_limit(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from autotune.oracles.ga1 import ORACLE as GA1  # numpy's programs: loaded when a run is made
    from autotune.oracles.ga1 import optimum
    from autotune.oracles.ga1.sizes import compile_notice
    from autotune.results.files import check_output, write_text

    shape = shape_arg(args.shape)
    machine = build_machine(GA1, args.machine, slots=args.slots)
    if args.storage is not None and args.enqueue is None:
        raise UsageError("--storage is the storage of the --enqueue study: give --enqueue STUDY")
    if args.warm_start and args.enqueue is None:
        raise UsageError(
            "--warm-start starts from the --enqueue study's best: give --enqueue STUDY"
        )
    options = optimum.exact_options(
        args.time_limit,
        args.work_limit,
        args.workers,
        args.seed,
        args.proof_limit,
        args.search_nodes,
    )
    optimum.check(shape, machine)
    GA1.check_memory(shape, machine, limits(args))
    out = args.out or optimum.default_out(args.results, shape, machine)
    if args.out is None and out.exists() and not args.force:
        raise UsageError(
            f"{out} holds an earlier result: replace it with --force, or give --out FILE"
        )
    check_output(out, args.force, may_create=args.results)
    check_stdout(args)
    destination = None
    if args.enqueue is not None:
        from autotune.run.imports import destination as study_destination

        destination = study_destination(
            args.enqueue, shape, machine, GA1.name, args.results, args.storage
        )
    say(compile_notice())  # the engine runs the schedule once it is solved
    start = best_start(destination) if destination and args.warm_start else None
    print(_start_line(shape, machine, options, start), file=sys.stderr, flush=True)
    from autotune.interrupt import graceful_stop
    from simcore.ga1.exact import ExactError

    # Ctrl-C or SIGTERM stops the solver at once (its child is killed) and nothing is written:
    # neither the result file nor the study gets a schedule whose search was not finished.
    with graceful_stop() as stop:
        with stop.urgently():
            try:
                solved = optimum.solve(
                    shape, machine, options, _Progress(), start, stop=lambda: stop.requested
                )
            except ExactError as exc:  # the solver's own check of its schedule failed
                print(f"autotune: error: not verified: {exc}", file=sys.stderr)
                return 1
            except KeyboardInterrupt:
                solved = None
        if solved is None or solved.interrupted:
            print("autotune: interrupted: the solver was stopped, nothing written", file=sys.stderr)
            stop.leave_at_once = True
            return stop.exit_status
        # Finished: a stop asked for now lets the result be written whole, then exits.
        write_text(json.dumps(solved.record(), indent=1) + "\n", out)
        imported = enqueue(solved, destination) if destination and solved.verified else None
    _report(solved, out, imported, args.json, GA1.describe_machine(machine))
    if not solved.verified:
        print(f"autotune: error: not verified: {solved.verification()}", file=sys.stderr)
        return 1
    return stop.exit_status if stop.requested else 0


def best_start(destination: Destination) -> Start | None:
    """The best feasible entry of the destination study whose program the exact model takes,
    as the solver's start; None for a new study or one without such an entry."""
    from autotune.oracles.capabilities import Programs
    from autotune.oracles.ga1.optimum import Start, takes
    from autotune.results import leaderboard as board
    from autotune.results import load
    from simcore.ga1.program import Program

    if not destination.exists:
        return None
    loaded = load.load(destination.name, destination.results, destination.storage)
    shape, machine = destination.plan.workload.gemms[0].shape, destination.plan.machine
    for row in board.json_rows(loaded.frame):
        found = board.family_of(str(row["family"]), study_folder=destination.folder)
        if not row.get("feasible") or found is None:
            continue
        oracle, family = found
        programs = oracle.capability(Programs)
        program = (
            programs.program(family, board.schedule_point(row), shape, machine)
            if programs
            else None
        )
        if not isinstance(program, Program) or not takes(program, machine, shape):
            continue  # not a GA-1 program, or one outside the model's scope
        label = f"rank {row['rank']} of study {destination.name!r}, {row['family']}"
        return Start(program, label)
    return None


def enqueue(solved: Solved, destination: Destination) -> Imported:
    """Import the verified schedule into the destination study: its program kept in the study's
    programs/ folder, then one completed trial of the `stored` family, origin "optimum"."""
    from autotune.errors import PlanError
    from autotune.oracles.ga1.optimum import ORIGIN, provenance, source
    from autotune.results.files import write_text
    from autotune.run.imports import import_schedule
    from autotune.search.problem import Candidate
    from autotune.storage import WORKER
    from search_spaces.stored import STORED, ProgramStore

    if not solved.verified:
        raise PlanError(f"an unverified schedule is not imported: {solved.verification()}")
    path = ProgramStore.of_study(destination.folder).path(solved.digest)
    if not path.is_file() or path.read_text(encoding="utf-8") != solved.text:
        write_text(solved.text, path)
    return import_schedule(
        destination,
        Candidate(STORED, {"program": solved.digest}, {}),
        provenance(solved, WORKER),
        ORIGIN,
        source(solved),
        cycles=solved.result.cycles,
    )


def _start_line(shape, machine, options, start) -> str:  # type: ignore[no-untyped-def]
    from autotune.oracles.ga1.optimum import DEFAULT_START

    Mt, Kt, Nt = shape.tiles(machine.T)
    limits = [f"time limit {options.time_limit:g} s"]
    if options.work_limit is not None:
        limits.append(f"work limit {options.work_limit:g}")
    if options.proof_limit is not None:
        limits.append(f"proof limit {options.proof_limit:g} per question")
    if options.search_nodes and Mt * Kt * Nt <= options.search_products:
        limits.append(f"then an exhaustive search of at most {options.search_nodes:,} states")
    return (
        f"solving {shape} ({Mt}x{Kt}x{Nt} tiles) on slots={machine.slots} exactly: CP-SAT, "
        f"{options.workers} strategies in one thread, seed {options.seed}, {', '.join(limits)}; "
        f"from {start.label if start is not None else DEFAULT_START}"
    )


class _Progress:
    """One line on stderr for the starting schedule, then one per better schedule found."""

    def __init__(self) -> None:
        self.best: int | None = None

    def __call__(self, cycles: int, bound: int, seconds: float) -> None:
        if self.best is not None and cycles >= self.best:
            return  # the solver's first solution is the starting schedule again
        what = "start" if self.best is None else "found"
        self.best = cycles
        line = f"  {seconds:7.1f} s  {what}  {cycles:>9,} cycles, bound {bound:,}"
        print(line, file=sys.stderr, flush=True)


STATUS = {
    "optimal": "optimal: proven",
    "feasible": "feasible: a limit stopped the search",
    "start": "the solver found no schedule before a limit stopped it: the start is returned",
}


def _status(solved: Solved) -> str:
    return "optimal: proven" if solved.result.proven else STATUS[solved.result.status]


def _report(
    solved: Solved, out: Path, imported: Imported | None, as_json: bool, machine: str
) -> None:
    result = solved.result
    if as_json:
        data = {k: v for k, v in solved.record().items() if k != "program"}
        data.update(out=str(out), enqueued=_enqueued(imported))
        print(json.dumps(data))
        return
    shown = sys.stderr if str(out) == "-" else sys.stdout  # stdout carries the result file
    optimal = result.proven
    bracket = "" if optimal else f" (the optimum lies in [{result.bound:,}, {result.cycles:,}])"
    lines = [
        f"optimum of {result.shape} on {machine}",
        f"  status     {_status(solved)}",
        f"  cycles     {result.cycles:,}{bracket}",
        f"  bound      {result.bound:,} (proven: no schedule of the scope is faster)",
        f"  gap        {result.gap:.1%} (cycles / bound - 1)",
        f"  start      {result.start_cycles:,} ({solved.start})",
        f"  solver     {result.wall_time:.1f} s",
        f"  {'verified' if solved.verified else 'FAILED':<10} {solved.verification()}",
    ]
    lines += [] if str(out) == "-" else [f"wrote {out}"]
    if imported is not None:
        row = imported.row
        done = "put into" if imported.added else "already in"
        label = "verified" if imported.verdict.verified else imported.verdict.detail
        lines.append(
            f"{done} study {imported.study!r} as trial {imported.trial}: rank {row['rank']} of "
            f"{len(imported.outcome.frame)}, {row['cycles']:,} cycles, {label} by the study's oracle"
        )
        lines.append(f"wrote {' and '.join(str(p) for p in imported.outcome.paths)}")
    print("\n".join(lines), file=shown)


def _enqueued(imported: Imported | None) -> dict[str, object] | None:
    if imported is None:
        return None
    return {
        "study": imported.study,
        "trial": imported.trial,
        "added": imported.added,
        "rank": imported.row.get("rank"),
        "verified": imported.verdict.verified,
    }
