"""Every benchmark's `--quick` mode, each in a fresh interpreter: a smoke test of the suite (CI
runs it). Exits 1 if any benchmark fails; a benchmark whose peer is absent says so and passes.

    python -m benchmarks --quick            # every benchmark
    python -m benchmarks --quick energy     # the benchmarks of a topic (a sub-folder)
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time

from benchmarks import harness

TOPICS = ("speed", "quality", "optimum", "scale", "energy", "workloads", "testsuite")


def benchmarks(topics: list[str]) -> list[str]:
    """Modules named bench_* or grid_* in the topics' folders, as `benchmarks.TOPIC.NAME`."""
    found = []
    for topic in topics:
        for path in sorted((harness.ROOT / "benchmarks" / topic).glob("*.py")):
            if path.stem.startswith(("bench_", "grid_")):
                found.append(f"benchmarks.{topic}.{path.stem}")
    return found


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)
    parser.add_argument("topics", nargs="*", choices=[[], *TOPICS], help="default: every topic")
    args = parser.parse_args(argv)
    if not args.quick:
        parser.error("give --quick (each benchmark's full run is its own command)")
    rows, failed = [], []
    for module in benchmarks(args.topics or list(TOPICS)):
        cpu, wall = children_cpu(), time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", module, "--quick"],
            cwd=harness.ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        cpu, wall = children_cpu() - cpu, time.monotonic() - wall
        skipped = [line for line in done.stdout.splitlines() if line.startswith("skipped: ")]
        status = "ok" if done.returncode == 0 else f"failed ({done.returncode})"
        rows.append((module, status, f"{cpu:.1f}", f"{wall:.1f}", "; ".join(skipped)))
        print(f"{module}: {status}, {cpu:.1f} s CPU", file=sys.stderr, flush=True)
        if done.returncode != 0:
            failed.append(module)
            print(done.stdout[-3000:] + done.stderr[-3000:], file=sys.stderr)
    print(harness.table(("benchmark --quick", "status", "CPU s", "wall s", "notes"), rows))
    return 1 if failed else 0


if __name__ == "__main__":
    harness.run(main)
