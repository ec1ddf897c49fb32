#!/usr/bin/env python3
"""The gap on small instances: the tuner's best, the exact solver's optimum (or its bracket) and the
lower bounds, side by side.

For every instance (a shape of 2-8 tiles per side and a machine), the tuner runs its own pipeline
(the default sampler, the spaces chapter,general,strips, an in-memory study); the exact solver (simcore.ga1.exact, OR-Tools
CP-SAT) then starts from the tuner's best schedule and either proves an optimum or stops at its time
limit with the best schedule it found and its bound. Every schedule in the table ran through the
ordinary simulator and was verified (numpy's product, hazard replay clean).

    python -m benchmarks.optimum.bench_optimum --out docs/benchmarks/optimum.md \
        --json tests/simcore/data/optima.json --programs docs/benchmarks/optimum_programs.json
    python -m benchmarks.optimum.bench_optimum --only 32x32x32 --work-limit 2 --trials 300
    python -m benchmarks.optimum.bench_optimum --from-json tests/simcore/data/optima.json

Columns: `tuner` the tuner's best after --trials trials; `exact` the solver's schedule; `bound` the
best proven lower bound (the solver's, never below lower_bound); `proven` whether exact = bound;
`old bound` lower_bound as it was (pipeline and I/O bounds), `new bound` lower_bound now.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import optuna

from benchmarks import harness
from benchmarks.optimum.optimum_common import previous_bound, tuner_best
from simcore.ga1.asm import from_text, to_text
from simcore.ga1.exact import ExactOptions, solve_optimum
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import Machine, machine_from, parse_overrides
from simcore.ga1.program import Program
from simcore.shape import Shape, parse_shape

# (shape, machine overrides): 2-8 tiles of 8 x 8 per side, 4-24 slots, five machines; the first
# six are small instances within reach of a proof.
INSTANCES: tuple[tuple[str, str], ...] = (
    ("16x16x16", "slots=8"),
    ("24x16x16", "slots=8"),
    ("16x24x16", "slots=8"),
    ("16x16x24", "slots=6"),
    ("16x16x16", "slots=5"),
    ("16x16x16", "slots=6,dma_setup=4"),
    ("16x16x16", "slots=4"),
    ("16x16x16", "slots=6"),
    ("24x16x16", "slots=4"),
    ("24x16x16", "slots=6"),
    ("16x24x16", "slots=4"),
    ("24x24x24", "slots=4"),
    ("24x24x24", "slots=6"),
    ("24x24x24", "slots=8"),
    ("24x24x24", "slots=12"),
    ("32x16x32", "slots=6"),
    ("32x16x32", "slots=8"),
    ("32x32x32", "slots=4"),
    ("32x32x32", "slots=8"),
    ("32x32x32", "slots=12"),
    ("32x32x32", "slots=16"),
    ("32x32x32", "slots=24"),
    ("16x64x16", "slots=6"),
    ("64x16x16", "slots=6"),
    ("48x32x24", "slots=8"),
    ("48x32x24", "slots=16"),
    ("64x64x64", "slots=16"),
    ("64x64x64", "slots=24"),
    ("24x24x24", "slots=4,dma_setup=4"),
    ("24x24x24", "slots=6,dma_setup=4"),
    ("32x32x32", "slots=8,dma_setup=4"),
    ("32x32x32", "slots=12,dma_setup=4"),
    ("40x24x32", "slots=8,dma_setup=4"),
    ("32x32x32", "slots=8,mxu_cycles=16"),
    ("24x24x24", "slots=6,mxu_cycles=16"),
    ("32x32x32", "slots=8,dma_words_per_cycle=4"),
    ("32x32x32", "slots=16,dma_words_per_cycle=4"),
    ("24x32x16", "slots=6,dma_words_per_cycle=4"),
    ("32x32x32", "slots=8,mxu_cycles=4"),
    ("40x40x40", "slots=12,mxu_cycles=4"),
)


@dataclass
class Row:
    shape: str
    machine: str
    tiles: str
    tuner: int
    tuner_family: str
    exact: int
    status: str
    bound: int
    old_bound: int
    new_bound: int
    seconds: float
    trials: int
    work_limit: float
    program: str  # the exact solver's schedule, as text
    proof_limit: float = 0.0  # bench_proofs.py: units per question asked again (0: not asked)
    proof_seconds: float = 0.0

    @property
    def proven(self) -> bool:
        return self.exact == self.bound


def cached_tuner_best(
    shape: Shape, machine: Machine, args: argparse.Namespace
) -> tuple[int, str, Program]:
    """tuner_best, kept in --tuner-cache (keyed by instance, trials and seed) so that the solver can
    be re-run alone."""
    key = f"{shape} {machine.key()} trials={args.trials} seed={args.seed}"
    cache = (
        json.loads(args.tuner_cache.read_text())
        if args.tuner_cache and args.tuner_cache.is_file()
        else {}
    )
    if key in cache:
        entry = cache[key]
        return int(entry["cycles"]), str(entry["family"]), from_text(entry["asm"])
    cycles, family, program = tuner_best(shape, machine, args.trials, args.seed)
    if args.tuner_cache:
        cache[key] = {"cycles": cycles, "family": family, "asm": to_text(program)}
        args.tuner_cache.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
    return cycles, family, program


def measure(shape_text: str, overrides: str, args: argparse.Namespace) -> Row:
    shape = parse_shape(shape_text)
    machine = machine_from(parse_overrides(overrides), None)
    tuned, family, program = cached_tuner_best(shape, machine, args)
    if args.tuner_only:
        return Row(
            shape_text, overrides, "", tuned, family, tuned, "-", 0, 0, 0, 0.0, args.trials, 0.0, ""
        )
    options = ExactOptions(
        time_limit=args.time_limit,
        work_limit=args.work_limit,
        workers=args.workers,
        seed=args.seed,
        proof_limit=args.proof_limit,
    )
    started = time.perf_counter()
    result = solve_optimum(shape, machine, options, start=program)
    assert result.verification.ok
    Mt, Kt, Nt = shape.tiles(machine.T)
    return Row(
        shape_text,
        overrides,
        f"{Mt}x{Kt}x{Nt}",
        tuned,
        family,
        result.cycles,
        result.status,
        result.bound,
        previous_bound(shape, machine),
        lower_bound(shape, machine),
        round(time.perf_counter() - started, 1),
        args.trials,
        args.work_limit,
        to_text(result.program),
    )


def read_rows(path: Path) -> list[Row]:
    return [Row(**row) for row in json.loads(path.read_text())] if path.is_file() else []


def rebound(path: Path) -> list[Row]:
    """Rows of an earlier run, with the lower bounds recomputed (the proven bound too, when the
    new lower bound passes the solver's)."""
    rows = read_rows(path)
    for row in rows:
        shape, machine = parse_shape(row.shape), machine_from(parse_overrides(row.machine), None)
        row.old_bound, row.new_bound = previous_bound(shape, machine), lower_bound(shape, machine)
        row.bound = max(row.bound, row.new_bound)
        assert row.bound <= row.exact, row
    return rows


def check_proofs(rows: list[Row], args: argparse.Namespace) -> str:
    """Each proven optimum solved again without lower_bound in the model: when the solver proves it
    alone, the proof does not rest on lower_bounds.py, and the bounds are checked against it."""
    lines = [
        "| shape | machine | optimum | proven without lower_bound | lower_bound |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        if not row.proven:
            continue
        shape, machine = parse_shape(row.shape), machine_from(parse_overrides(row.machine), None)
        options = ExactOptions(
            time_limit=args.time_limit,
            work_limit=args.work_limit,
            workers=args.workers,
            seed=args.seed,
            use_lower_bound=False,
        )
        _, _, start = cached_tuner_best(shape, machine, args)
        result = solve_optimum(shape, machine, options, start=start)
        alone = result.status == "optimal" and result.cycles == row.exact
        assert lower_bound(shape, machine) <= row.exact
        lines.append(
            f"| {row.shape} | {row.machine} | {row.exact:,} | {'yes' if alone else 'no'} "
            f"| {lower_bound(shape, machine):,} |"
        )
        print(
            f"# {row.shape} {row.machine}: alone {result.status} {result.cycles}",
            file=sys.stderr,
            flush=True,
        )
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    head = (
        "| shape | tiles | machine | tuner | exact | bound | proven | tuner / exact "
        "| old bound | new bound "
        "| exact / new bound | solver s |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        lines.append(
            f"| {r.shape} | {r.tiles} | {r.machine} | {r.tuner:,} | {r.exact:,} | {r.bound:,} | "
            f"{'yes' if r.proven else 'no'} | {r.tuner / r.exact:.3f} | {r.old_bound:,} | "
            f"{r.new_bound:,} | "
            f"{r.exact / r.new_bound:.3f} | {r.seconds:.0f} |"
        )
    return "\n".join(lines)


def summary(rows: list[Row]) -> str:
    proven = [r for r in rows if r.proven]
    near = [r for r in proven if r.tuner <= 1.01 * r.exact]
    better = [r for r in rows if r.exact < r.tuner]
    return "\n".join(
        [
            f"- instances: {len(rows)}; solved to a proven optimum: {len(proven)}",
            f"- the tuner within 1% of the proven optimum: {len(near)} of {len(proven)}",
            f"- the exact solver's schedule faster than the tuner's: {len(better)} of {len(rows)}"
            + (f" (by up to {max(r.tuner / r.exact for r in better) - 1:.1%})" if better else ""),
            "- the bound below the solver's best schedule by up to "
            f"{max(r.exact / r.new_bound for r in rows) - 1:.1%} (new), "
            f"{max(r.exact / r.old_bound for r in rows) - 1:.1%} (old)",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    quick = {"only": "16x16x16 slots=8", "trials": 20, "work_limit": 1.0, "proof_limit": 1.0}
    parser = harness.parser(__doc__, quick={**quick, "workers": 1, "out": None, "json": None})
    parser.add_argument(
        "--trials", type=int, default=1000, help="tuner trials per instance (default 1000)"
    )
    parser.add_argument(
        "--work-limit",
        type=float,
        default=10.0,
        help="solver work per instance, in CP-SAT's deterministic time "
        "(default 10; the table is then the same on every run)",
    )
    parser.add_argument(
        "--proof-limit",
        type=float,
        default=10.0,
        help="work for each decision proof (a schedule of best - 1 cycles?) after the search "
        "(default 10; 0: none)",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="also stop each solve after this many seconds (not reproducible)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=8,
        help="CP-SAT workers, interleaved in one thread (default 8)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--only", default=None, help="instances whose shape or machine contains this text"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    parser.add_argument("--json", type=Path, default=None, help="write the rows as JSON here")
    parser.add_argument(
        "--programs",
        type=Path,
        default=None,
        help="write the exact solver's schedules (text) here, by instance",
    )
    parser.add_argument(
        "--tuner-cache",
        type=Path,
        default=None,
        help="keep the tuner's best schedules in this JSON file",
    )
    parser.add_argument(
        "--tuner-only", action="store_true", help="only run the tuner (fill --tuner-cache)"
    )
    parser.add_argument(
        "--partial",
        type=Path,
        default=None,
        help="keep every measured row here (programs included) and skip the rows already in it",
    )
    parser.add_argument(
        "--shard", type=int, default=0, help="measure instance numbers n with n %% shards == shard"
    )
    parser.add_argument("--shards", type=int, default=1)
    parser.add_argument(
        "--check-proofs",
        action="store_true",
        help="with --from-json: solve each proven row again without lower_bound in the model",
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        default=None,
        help="re-render the rows of an earlier --json with the bounds as they are now "
        "(no tuning, no solving)",
    )
    args = parser.parse_args(argv)
    args.proof_limit = args.proof_limit or None
    rows = [] if args.from_json is None else rebound(args.from_json)
    done = {(r.shape, r.machine): r for r in read_rows(args.partial)} if args.partial else {}
    for number, (shape, overrides) in enumerate(INSTANCES if args.from_json is None else ()):
        if args.only and args.only not in f"{shape} {overrides}":
            continue
        if number % args.shards != args.shard:
            continue
        if (shape, overrides) in done:  # measured by an earlier, interrupted run
            rows.append(done[(shape, overrides)])
            continue
        rows.append(measure(shape, overrides, args))
        if args.partial:
            args.partial.write_text(json.dumps([asdict(row) for row in rows], indent=1) + "\n")
        r = rows[-1]
        print(
            f"# {shape} {overrides}: tuner {r.tuner} ({r.tuner_family}), "
            f"exact {r.exact} {r.status}, bound {r.bound}, "
            f"old {r.old_bound}, new {r.new_bound}, {r.seconds} s",
            file=sys.stderr,
            flush=True,
        )
    if args.tuner_only:
        return 0
    if args.check_proofs:
        print(check_proofs(rows, args))
        return 0
    command = "python -m benchmarks.optimum.bench_optimum " + " ".join(sys.argv[1:])
    text = f"{table(rows)}\n\n{summary(rows)}\n\nReproduce: `{command}`\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    if args.json:  # the rows without their programs
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps([{**asdict(r), "program": ""} for r in rows], indent=1) + "\n"
        )
    if args.programs:
        args.programs.parent.mkdir(parents=True, exist_ok=True)
        args.programs.write_text(
            json.dumps({f"{r.shape} {r.machine}": r.program for r in rows}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    harness.run(main)
