#!/usr/bin/env python3
"""The default sampler against plain TPE on unnamed cases: the distribution, not only the mean.

Cases are drawn with `random.Random(--draw-seed)`: M, K and N each a multiple of 8 from 64 to 512,
8 to 64 slots, the chapter's machine otherwise. For each case, in turn, runs of the tuner's own
pipeline (`autotune.tune`, an in-memory study, the winner verified):

* `tpe`: `--sampler tpe --space chapter,general --trials 1000` (`--tpe-trials`), seed 0;
* `guided`: the default sampler and spaces, `--trials 300` (`--guided-trials`), at each of
  `--seeds` (0);
* `turns` (an ablation, measured only when named): `guided` with the bandit replaced by the
  allotment before it (`GuidedSampler(allotment="turns")`);
* `long` (measured only when named): `guided` with `--long-trials` (3,000), how far the default
  is from what its families reach with ten times the trials.

The change of a case is guided's best / tpe's best - 1 (negative: guided is faster). Rows are
appended to the `--rows` file (JSON lines) as they are measured, and a run given the same file
skips the rows it holds, so an interrupted run resumes. `--configs` names the runs to measure
(a tpe row does not depend on the guided sampler: keep its rows and measure guided anew with
`--configs guided` after `--drop guided`).

    python -m benchmarks.quality.bench_unnamed --count 40 --draw-seed 20261202 \
        --rows unnamed.jsonl --configs tpe,guided,turns,long --seeds 0,1,2
    python -m benchmarks.quality.bench_unnamed --count 40 --draw-seed 20261202 \
        --rows unnamed.jsonl --report-only --seeds 0,1,2   # the tables again, from the rows
    python -m benchmarks.quality.bench_unnamed --named --rows named.jsonl   # named cases"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import autotune
from autotune.search import guided
from benchmarks import harness
from benchmarks.quality.search_cases import CASES, MORE_CASES
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.shape import parse_shape

Case = tuple[str, str]  # (shape, machine overrides)
Row = dict[str, Any]
CONFIGS = ("tpe", "guided", "turns", "long")
HISTOGRAM = (-0.08, -0.06, -0.04, -0.02, -0.01, -0.005, 0.0, 0.005, 0.01, 0.02)  # bin edges


def unnamed_cases(count: int, seed: int) -> list[Case]:
    """`count` distinct cases drawn with random.Random(seed)."""
    rng, drawn = random.Random(seed), list[Case]()
    while len(drawn) < count:
        m, k, n = (8 * rng.randint(8, 64) for _ in range(3))
        case = (f"{m}x{k}x{n}", f"slots={rng.randint(8, 64)}")
        if case not in drawn:
            drawn.append(case)
    return drawn


def measure(case: Case, config: str, trials: int, seed: int = 0) -> Row:
    """One run of the pipeline on `case`: its best, the winner's family and check, its CPU."""
    shape, machine = case
    settings: dict[str, Any] = (
        {"sampler": "tpe", "spaces": "chapter,general"} if config == "tpe" else {}
    )
    started = time.process_time()
    ablated = config if config == "turns" else None
    with tempfile.TemporaryDirectory() as folder, allotment(ablated):
        result = autotune.tune(
            shape,
            machine=machine,
            trials=trials,
            seed=seed,
            storage=":memory:",
            results=folder,
            verify_top=1,
            write=False,
            **settings,
        )
    best = result.best
    assert best is not None and best.cycles is not None, f"{case}: nothing feasible"
    return {
        "shape": shape,
        "machine": machine,
        "config": config,
        "trials": trials,
        "cycles": best.cycles,
        "family": best.family,
        "verification": best.verification,
        "seed": seed,
        "cpu_s": round(time.process_time() - started, 1),
    }


@contextlib.contextmanager
def allotment(name: str | None) -> Iterator[None]:
    """The pipeline's guided sampler with another allotment (None: as it is)."""
    if name is None:
        yield
        return
    own = guided.GuidedSampler

    class Ablated(own):  # type: ignore[misc, valid-type]
        def __init__(self, search: Any, seed: int) -> None:
            super().__init__(search, seed, allotment=name)

    guided.GuidedSampler = Ablated  # type: ignore[misc, assignment]
    try:
        yield
    finally:
        guided.GuidedSampler = own  # type: ignore[misc]


def read_rows(path: Path) -> list[Row]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def measure_all(cases: Sequence[Case], args: argparse.Namespace) -> list[Row]:
    """Every (case, config) not in the rows file yet, appended as it is measured."""
    path = Path(args.rows)
    dropped = {run_of(config, args) for config in args.drop}
    rows = [r for r in read_rows(path) if (r["config"], r["trials"]) not in dropped]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for case in cases:
        for config in args.configs:
            name, trials = run_of(config, args)
            for seed in [0] if config == "tpe" else args.seeds:
                if find(rows, case, name, trials, seed) is not None:
                    continue
                row = measure(case, name, trials, seed)
                rows.append(row)
                with path.open("a") as out:
                    out.write(json.dumps(row) + "\n")
                print(
                    f"# {case[0]} {case[1]} {config} seed {seed}: {row['cycles']:,} "
                    f"{row['family']} {row['verification']} {row['cpu_s']} s",
                    file=sys.stderr,
                    flush=True,
                )
    return rows


def run_of(config: str, args: argparse.Namespace) -> tuple[str, int]:
    """The run a configuration names: (the sampler's configuration, its trials)."""
    if config == "long":
        return "guided", args.long_trials
    return config, args.tpe_trials if config == "tpe" else args.guided_trials


def find(rows: Sequence[Row], case: Case, config: str, trials: int, seed: int = 0) -> Row | None:
    for row in rows:
        found = (row["shape"], row["machine"], row["config"], row["trials"], row.get("seed", 0))
        if found == (*case, config, trials, seed):
            return row
    return None


def bound_of(case: Case) -> int:
    return lower_bound(parse_shape(case[0]), machine_from(parse_overrides(case[1]), None))


def summary(changes: Mapping[str, Sequence[float]]) -> list[str]:
    """One row per configuration: the distribution of its changes against tpe."""
    lines = [
        "| sampler | cases | mean | best | 25% | median | 75% | worst | worse than +0.5% | worse |",
        "|" + "---|" * 10,
    ]
    for label, found in changes.items():
        ordered = sorted(found)
        q1, median, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
        lines.append(
            f"| {label} | {len(ordered)} | {statistics.mean(ordered):+.2%} | {ordered[0]:+.2%} "
            f"| {q1:+.2%} | {median:+.2%} | {q3:+.2%} | {ordered[-1]:+.2%} "
            f"| {sum(c > 0.005 for c in ordered)} | {sum(c > 0 for c in ordered)} |"
        )
    return lines


def histogram(changes: Sequence[float]) -> list[str]:
    edges = [-float("inf"), *HISTOGRAM, float("inf")]
    lines = ["| change | cases |", "|---|---|"]
    for low, high in zip(edges, edges[1:]):
        count = sum(low < c <= high for c in changes)
        if low == -float("inf"):
            span = f"<= {high:+.1%}"
        elif high == float("inf"):
            span = f"> {low:+.1%}"
        else:
            span = f"{low:+.1%} to {high:+.1%}"
        lines.append(f"| {span} | {'#' * count} {count} |")
    return lines


def changes_of(
    cases: Sequence[Case], rows: Sequence[Row], config: str, seed: int, args: Any
) -> list[float]:
    """The config's change at `seed` against tpe (seed 0) on every case both measured."""
    found = []
    for case in cases:
        old = find(rows, case, "tpe", args.tpe_trials)
        new = find(rows, case, *run_of(config, args), seed)
        if old is not None and new is not None:
            found.append(new["cycles"] / old["cycles"] - 1)
    return found


def markdown(cases: Sequence[Case], rows: Sequence[Row], args: argparse.Namespace) -> str:
    """The summary, the histogram of guided's changes and every case (best change first)."""
    trials = f"{args.guided_trials:,} trials"
    changes = {
        f"{run_of(config, args)[0]}, {run_of(config, args)[1]:,} trials, seed {seed}": changes_of(
            cases, rows, config, seed, args
        )
        for config in CONFIGS[1:]
        for seed in args.seeds
    }
    changes = {label: found for label, found in changes.items() if found}
    table = []
    for case in cases:
        old = find(rows, case, "tpe", args.tpe_trials)
        new = find(rows, case, "guided", args.guided_trials)
        if old is not None and new is not None:
            table.append((new["cycles"] / old["cycles"] - 1, case, bound_of(case), old, new))
    if not table:
        return "no case measured yet\n"
    table.sort(key=lambda entry: entry[0])
    lines = [*summary(changes), "", *histogram([entry[0] for entry in table]), ""]
    lines += [
        f"| case | bound | tpe, {args.tpe_trials:,} trials | / bound | guided, {trials} "
        "| / bound | change | guided's winner | tpe's winner |",
        "|" + "---|" * 9,
    ]
    for change, case, bound, old, new in table:
        lines.append(
            f"| {case[0]} {case[1]} | {bound:,} | {old['cycles']:,} | {old['cycles'] / bound:.3f} "
            f"| {new['cycles']:,} | {new['cycles'] / bound:.3f} | {change:+.2%} "
            f"| {new['family']} | {old['family']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    quick = {"count": 2, "rows": str(Path(tempfile.mkdtemp()) / "rows.jsonl")}
    trials = {"tpe_trials": 20, "guided_trials": 20, "long_trials": 20, "named": False}
    parser = harness.parser(__doc__, quick={**quick, **trials, "report_only": False})
    parser.add_argument("--count", type=int, default=40, help="cases to draw")
    parser.add_argument("--draw-seed", type=int, default=20261202)
    parser.add_argument(
        "--named", action="store_true", help="the named cases (search_cases.py) instead of a draw"
    )
    parser.add_argument("--rows", help="JSON lines: read, resumed, appended to (required)")
    parser.add_argument("--configs", default="tpe,guided", help=f"runs of {', '.join(CONFIGS)}")
    parser.add_argument("--drop", default="", help="configs whose rows are dropped first")
    parser.add_argument("--tpe-trials", type=int, default=1000)
    parser.add_argument("--guided-trials", type=int, default=300)
    parser.add_argument("--long-trials", type=int, default=3000)
    parser.add_argument("--seeds", default="0", help="the seeds of the guided runs (tpe: 0)")
    parser.add_argument("--write", help="also write the markdown here")
    parser.add_argument("--report-only", action="store_true", help="measure nothing")
    args = parser.parse_args(argv)
    if args.rows is None:
        parser.error("--rows is required")
    args.configs = [c for c in args.configs.split(",") if c]
    args.drop = [c for c in args.drop.split(",") if c]
    args.seeds = [int(s) for s in args.seeds.split(",") if s]
    if any(c not in CONFIGS for c in args.configs + args.drop):
        parser.error(f"--configs and --drop name {', '.join(CONFIGS)}")
    cases = list(CASES + MORE_CASES) if args.named else unnamed_cases(args.count, args.draw_seed)
    rows = read_rows(Path(args.rows)) if args.report_only else measure_all(cases, args)
    text = markdown(cases, rows, args)
    print(text)
    if args.write:
        Path(args.write).write_text(text)
    return 0


if __name__ == "__main__":
    harness.run(main)
