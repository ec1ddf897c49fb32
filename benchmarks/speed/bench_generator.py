"""Candidate evaluation speed of the general generator, side by side in one run.

For 128^3 and 512^3 products on GA-1 with 64 slots it measures, for the general generator's
default schedule:
  * candidate evaluations per second: generation (order + compile) plus timing-only simulate;
  * the reference listing's `Sim` on the same program (it always computes values), and the
    ratio of its time to ours for the same program.

Usage: python -m benchmarks.speed.bench_generator [--reference-repeats N] [--skip-512-reference]
"""

from __future__ import annotations

import random
import time

from benchmarks import harness
from benchmarks.harness import reference_listings
from simcore import Machine, Shape, simulate
from simcore.ga1.generator import default_params, general


def best_time(function, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def reference_seconds(machine: Machine, shape: Shape, program_tuples: list) -> float | None:
    listings = reference_listings()  # the chapter's listing, loaded only here, as the baseline
    if listings is None:
        return None
    ga = listings[0]

    rng = random.Random(1)
    a = [[rng.randint(-3, 3) for _ in range(shape.k)] for _ in range(shape.m)]
    b = [[rng.randint(-3, 3) for _ in range(shape.n)] for _ in range(shape.k)]
    ref_machine = ga.Machine(**machine.as_dict())

    def run() -> None:
        dram = {"A": a, "B": b, "C": [[0.0] * shape.n for _ in range(shape.m)]}
        ga.Sim(ref_machine, dram).run(program_tuples)

    return best_time(run, 1)


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"repeats": 1, "skip_512_reference": True})
    parser.add_argument(
        "--repeats", type=int, default=3, help="repeats of our measurements (best is kept)"
    )
    parser.add_argument(
        "--skip-512-reference", action="store_true", help="skip the slow reference run at 512^3"
    )
    args = parser.parse_args(argv)
    machine = Machine(slots=64)
    print(
        f"{'shape':>12} {'instructions':>12} {'gen s':>8} {'sim s':>8} {'evals/s':>8} {'reference s':>12} {'ratio (sim)':>12} {'ratio (gen+sim)':>16}"
    )
    for size in (128,) if args.quick else (128, 512):
        shape = Shape(size, size, size)
        params = default_params(shape, machine)
        program = general(shape, machine, params)
        gen = best_time(lambda: general(shape, machine, params), args.repeats)
        sim = (
            best_time(lambda: simulate(machine, general(shape, machine, params)), args.repeats)
            - gen
        )
        evals = 1.0 / (gen + sim)
        ref = (
            None
            if (size == 512 and args.skip_512_reference)
            else reference_seconds(machine, shape, program.to_tuples())
        )
        ref_text = f"{ref:12.2f}" if ref is not None else f"{'skipped':>12}"
        ratio = f"{ref / sim:12.0f}x" if ref is not None else f"{'-':>13}"
        ratio_all = f"{ref / (gen + sim):15.0f}x" if ref is not None else f"{'-':>16}"
        print(
            f"{str(shape):>12} {len(program):>12} {gen:8.3f} {sim:8.3f} {evals:8.2f} {ref_text} {ratio} {ratio_all}"
        )
    return 0


if __name__ == "__main__":
    harness.run(main)
