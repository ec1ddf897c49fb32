"""The tuner against the proven optima: on every small instance solved to a proven optimum
(tests/simcore/data/optima.json's proven rows and tests/simcore/data/searched_optima.json), how
often the tuner's best is the optimum and how often it is within 1% of it, for each set of spaces.

    python -m benchmarks.quality.bench_proven_gap --space chapter,general,strips \\
        --space chapter,general,strips,delayed

Each instance runs the tuner's own pipeline (the default sampler, seed 0, --trials trials, an
in-memory study); every best is verified exactly by the pipeline. Prints one line per instance
that misses the optimum by more than 1%, then a summary line per set of spaces."""

from __future__ import annotations

import json
import time

from benchmarks import harness
from benchmarks.optimum.optimum_common import tuner_best
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.shape import parse_shape


def proven_instances() -> dict[tuple[str, str], int]:
    """(shape, machine overrides) -> the proven optimum, from both tables."""
    optima: dict[tuple[str, str], int] = {}
    for row in json.loads((harness.DATA / "optima.json").read_text()):
        if row["exact"] == row["bound"]:
            optima[(row["shape"], row["machine"])] = int(row["exact"])
    for row in json.loads((harness.DATA / "searched_optima.json").read_text()):
        if row["complete"]:
            optima[(row["shape"], row["machine"])] = int(row["optimum"])
    return optima


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"trials": 10, "space": []})
    parser.add_argument(
        "--space",
        action="append",
        default=[],
        help="spaces as --space takes them; repeat to compare (default: the default spaces)",
    )
    parser.add_argument("--trials", type=int, default=1000, help="trials per instance")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    optima = proven_instances()
    if args.quick:  # the smoke test: two instances
        optima = dict(sorted(optima.items())[:2])
    for spaces in args.space or [""]:
        optimal = near = 0
        started = time.process_time()
        for (shape_text, overrides), optimum in sorted(optima.items()):
            shape = parse_shape(shape_text)
            machine = machine_from(parse_overrides(overrides), None)
            cycles, family, _ = tuner_best(shape, machine, args.trials, args.seed, spaces)
            optimal += cycles == optimum
            near += cycles <= 1.01 * optimum
            if cycles > 1.01 * optimum:
                print(f"  {shape_text} {overrides}: {cycles} ({family}) against {optimum}")
        print(
            f"{spaces or 'default spaces'}: {len(optima)} proven; the tuner optimal on {optimal}, "
            f"within 1% on {near} ({near / len(optima):.0%}); "
            f"{time.process_time() - started:.0f} s CPU",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    harness.run(main)
