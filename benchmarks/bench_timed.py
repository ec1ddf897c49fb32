"""The exhaustive search of simcore/ga1/exact/timed.py on the smallest instances: states visited,
CPU seconds and what it proves, from the best schedule known (the table's exact column).

    PYTHONPATH=$PWD python benchmarks/bench_timed.py            # the 2 x 2 x 2 rows, seconds
    PYTHONPATH=$PWD python benchmarks/bench_timed.py --all      # also 2 x 2 x 3 (about 20 min)
    PYTHONPATH=$PWD python benchmarks/bench_timed.py --case 24x24x24:slots=12:584 \
        --max-nodes 30000000                                    # any instance, below any cycles

Each line: the instance, the cycles searched below, the answer (a faster schedule, or none:
then the known one is optimal), whether the search ended, the states and the CPU time.
"""

from __future__ import annotations

import argparse
import time

from simcore.ga1.exact.timed import search_below
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.ga1.verify import verify_matmul
from simcore.shape import parse_shape

# (shape, machine, the fastest schedule known before the search: docs/benchmarks/optimum.md)
QUICK = (
    ("16x16x16", "slots=8", 240),
    ("16x16x16", "slots=6", 260),
    ("16x16x16", "slots=5", 280),
    ("16x16x16", "slots=6,dma_setup=4", 113),
    ("16x16x16", "slots=4", 332),
)
LONG = (
    ("16x16x24", "slots=6", 360),
    ("24x16x16", "slots=6", 360),
    ("16x24x16", "slots=4", 484),
    ("24x16x16", "slots=4", 488),
)


def tuner_best(shape: str, overrides: str, trials: int) -> int:
    """The default run's best (an in-memory study, seed 0)."""
    import tempfile

    import autotune

    with tempfile.TemporaryDirectory() as folder:
        result = autotune.tune(shape, machine=overrides, trials=trials, results=folder)
        return int(result.best.cycles)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="also the 2 x 2 x 3 instances")
    parser.add_argument("--max-nodes", type=int, default=100_000_000, help="states, at most")
    parser.add_argument(
        "--case", action="append", default=[], help="SHAPE:MACHINE:CYCLES instead of the table's"
    )
    parser.add_argument(
        "--tuner",
        type=int,
        default=0,
        help="also run the tuner with this many trials, and search below its best",
    )
    args = parser.parse_args()
    cases = [(a, b, int(c)) for a, b, c in (case.split(":") for case in args.case)]
    for shape_text, overrides, known in cases or QUICK + (LONG if args.all else ()):
        shape, machine = parse_shape(shape_text), machine_from(parse_overrides(overrides), None)
        tuned = tuner_best(shape_text, overrides, args.tuner) if args.tuner else None
        known = known or (tuned or 0)
        started = time.process_time()
        found = search_below(shape, machine, known, args.max_nodes)
        seconds = time.process_time() - started
        if found.program is not None:
            verification, _ = verify_matmul(machine, found.program, shape)
            assert verification.ok and verification.cycles == found.cycles, verification
        answer = f"{found.cycles} found" if found.cycles is not None else "none faster"
        tuner = f", tuner {tuned}" if tuned is not None else ""
        print(
            f"{shape_text} {overrides}: below {known}: {answer}, "
            f"{'ended' if found.complete else 'stopped'}, {found.nodes:,} states, {seconds:.1f} s"
            + tuner,
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
