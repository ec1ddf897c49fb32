"""Start-up time of the command line: `python -m autotune --help`, a command's help, and an
argument error, each in a fresh interpreter (one subprocess per run), with the bare interpreter
(`python -c pass`) for scale.

Each case runs `--repeats` times (default 5) and reports the median wall time and the median
CPU time of the child. With `--before DIR_OR_REVISION` the same cases also run on an earlier
version of autotune (a checkout folder, or a git revision exported to a temporary folder),
interleaved run by run with this tree, so both see the same load on the machine.

Usage: python -m benchmarks.speed.bench_startup [--repeats 5] [--before DIR_OR_REVISION]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT

CASES: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "python -m autotune --help": ["-m", "autotune", "--help"],
    "python -m autotune tune --help": ["-m", "autotune", "tune", "--help"],
    "python -m autotune tune --trials x (argument error)": [
        "-m",
        "autotune",
        "tune",
        "--trials",
        "x",
    ],
    "python -m autotune --shape 12x12 (bad shape)": ["-m", "autotune", "--shape", "12x12"],
}


def run_once(tree: Path, args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `python ARGS` on the autotune in `tree`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, *args],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def export(revision: str, folder: Path) -> Path:
    """The tree of a git revision, exported to `folder`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


Runs = dict[tuple[str, str], list[tuple[float, float]]]  # (case, version) -> (wall, CPU) per run


def measure(trees: dict[str, Path], repeats: int) -> Runs:
    """Every case on every tree, `repeats` times, interleaved (case by case, tree by tree)."""
    for tree in trees.values():  # compile the bytecode once, outside the measurement
        run_once(tree, CASES["python -m autotune --help"])
    found: Runs = {}
    for _ in range(repeats):
        for case, args in CASES.items():
            for name, tree in trees.items():
                found.setdefault((case, name), []).append(run_once(tree, args))
    return found


def report(found: Runs, names: list[str], repeats: int) -> str:
    title = f"median of {repeats}, wall / CPU seconds"
    head = f"{title:58}" + "".join(f"{n:>20}" for n in names)
    lines = [head]
    for case in CASES:
        cells = []
        for name in names:
            runs = found[(case, name)]
            wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
            cells.append(f"{wall:.3f} / {cpu:.3f}")
        lines.append(f"{case:58}" + "".join(f"{c:>20}" for c in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"repeats": 1})
    parser.add_argument(
        "--repeats", type=int, default=5, help="runs per case and version (default 5)"
    )
    parser.add_argument(
        "--before",
        default=None,
        metavar="DIR_OR_REVISION",
        help="an earlier autotune to compare with: a checkout folder or a git revision",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        trees: dict[str, Path] = {}
        if args.before is not None:
            given = Path(args.before)
            before = given.resolve() if given.is_dir() else export(args.before, Path(scratch))
            trees["before"] = before
        trees["this tree"] = ROOT
        found = measure(trees, args.repeats)
    print(report(found, list(trees), args.repeats))
    load = os.getloadavg()
    print(
        f"\nload average during the run: {load[0]:.1f} (1 min) on {os.cpu_count()} cores; "
        f"{sys.executable}"
    )
    return 0


if __name__ == "__main__":
    harness.run(main)
