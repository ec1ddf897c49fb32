"""The first run on a fresh machine against a warm one: `python -m autotune --shape SHAPE` with an
empty numba cache (a fresh NUMBA_CACHE_DIR: the GA-1 engine compiles) and again with the cache
that run left (it loads), each in a fresh interpreter writing to a fresh results folder.

It reports the child's CPU time (user + system) and wall time of each, and the compilation's
share: cold minus warm CPU. With `--before DIR_OR_REVISION` the same pair also runs on an
earlier version of autotune (a checkout folder, or a git revision exported to a temporary
folder), interleaved repeat by repeat with this tree. CPU time is the figure to compare: wall
time follows the other work on the machine.

Usage: python -m benchmarks.speed.bench_first_run [--shape 128x128x128] [--trials N]
       [--repeats 1] [--before DIR_OR_REVISION]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT
from benchmarks.speed.bench_startup import export


def run_once(tree: Path, shape: str, trials: int | None, cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one tuning run of the autotune in `tree` with numba's cache in
    `cache`; the run must succeed."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    env.update(PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(cache))
    extra = [] if trials is None else ["--trials", str(trials)]
    with tempfile.TemporaryDirectory(prefix="first-run-results-") as results:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "autotune", "--shape", shape, *extra, "--results", results],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"the run failed ({done.returncode}): {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def cold_and_warm(tree: Path, shape: str, trials: int | None) -> dict[str, tuple[float, float]]:
    """One cold run (an empty cache) and one warm run (the cache it filled)."""
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        cold = run_once(tree, shape, trials, Path(cache))
        warm = run_once(tree, shape, trials, Path(cache))
    return {"cold": cold, "warm": warm}


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"shape": "16x16x16", "trials": 5, "repeats": 1})
    parser.add_argument("--shape", default="128x128x128")
    parser.add_argument("--trials", type=int, default=None, help="default: the tool's own")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--before", default=None, metavar="DIR_OR_REVISION")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="first-run-before-") as scratch:
        trees = {"this tree": ROOT}
        if args.before:
            given = Path(args.before)
            trees["before"] = given if given.is_dir() else export(args.before, Path(scratch))
        runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.repeats):
            for version, tree in trees.items():
                for case, figures in cold_and_warm(tree, args.shape, args.trials).items():
                    runs.setdefault((version, case), []).append(figures)
    rows = []
    for version in trees:
        cold_cpu = harness.median([c for _, c in runs[(version, "cold")]])
        warm_cpu = harness.median([c for _, c in runs[(version, "warm")]])
        rows.append(
            [
                version,
                f"{harness.median([w for w, _ in runs[(version, 'cold')]]):.1f}",
                f"{cold_cpu:.1f}",
                f"{harness.median([w for w, _ in runs[(version, 'warm')]]):.1f}",
                f"{warm_cpu:.1f}",
                f"{cold_cpu - warm_cpu:.1f}",
            ]
        )
    trials = "the default trials" if args.trials is None else f"{args.trials} trials"
    print(f"python -m autotune --shape {args.shape} ({trials}), median of {args.repeats}:")
    print(
        harness.table(
            ["version", "cold wall s", "cold CPU s", "warm wall s", "warm CPU s", "compile CPU s"],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    harness.run(main)
