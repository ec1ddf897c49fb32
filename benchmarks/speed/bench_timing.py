"""Evaluation speed of our timing-only `simulate` against the chapter's listing, side by side.

Over every schedule of the chapter's sweep (128x128x128, 64 slots) it measures in one run:
  * ours, timing only: `simulate(machine, program)` with the program built once;
  * ours, generation + simulate: building the program from the schedule every time;
  * the reference listing: `Sim(machine, dram).run(program)` (it always computes the values;
    its program and DRAM lists are built once);
and prints evaluations per second and the ratios, then the 4x8 double-buffered ratio on its
own, which must be at least 30x (exit status 1 otherwise).

Each measurement repeats and keeps the best (least disturbed) time. The reference takes about a
second per run, so it gets fewer repetitions (--reference-repeats).

Usage: python -m benchmarks.speed.bench_timing [--repeats N] [--reference-repeats N]
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any, Callable

from benchmarks import harness
from benchmarks.harness import REFERENCE, reference_listings
from simcore import Machine, Shape, chapter_sweep, simulate
from simcore.ga1.schedules import ChapterSchedule

SHAPE = Shape(128, 128, 128)
REQUIRED_RATIO = 30.0
# Ours runs in a few milliseconds: time batches of at least this long, so timer resolution and
# call overhead do not matter.
MIN_BATCH_SECONDS = 0.1


def best_rate(
    function: Callable[[], object], repeats: int, min_batch: float = MIN_BATCH_SECONDS
) -> float:
    """Calls per second: the best of `repeats` batches, each long enough to time well."""
    started = time.perf_counter()
    function()  # warm-up, and a first estimate of one call
    once = max(time.perf_counter() - started, 1e-9)
    calls = max(1, int(min_batch / once))
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, (time.perf_counter() - started) / calls)
    return 1.0 / best


def load_reference() -> tuple[ModuleType, ModuleType] | None:
    return reference_listings()


def reference_program(
    schedules: ModuleType, ref_machine: Any, schedule: ChapterSchedule, machine: Machine
) -> list[tuple[Any, ...]]:
    double = schedule.buffers == 2
    block = schedule.block(SHAPE, machine)
    if block is None:
        return schedules.kouter(SHAPE.m, SHAPE.k, SHAPE.n, ref_machine, double)
    return schedules.blocked(SHAPE.m, SHAPE.k, SHAPE.n, ref_machine, block[0], block[1], double)


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"repeats": 1, "reference_repeats": 1})
    parser.add_argument(
        "--repeats", type=int, default=5, help="repetitions of each measurement of ours (best kept)"
    )
    parser.add_argument(
        "--reference-repeats",
        type=int,
        default=2,
        help="repetitions of each reference run (best kept)",
    )
    args = parser.parse_args(argv)

    machine = Machine(slots=64)
    reference = load_reference()
    if reference is None:
        print(f"reference listing not found in {REFERENCE}: measuring ours only")
    else:
        ga, ref_schedules = reference
        ref_machine = ga.Machine(slots=64)
        a, b = ref_schedules.matrices(SHAPE.m, SHAPE.k, SHAPE.n)
        # DRAM built once: stores overwrite C with the same values each run, so every run costs the same.
        dram = {"A": a, "B": b, "C": [[0.0] * SHAPE.n for _ in range(SHAPE.m)]}

    started_all = time.perf_counter()
    print(
        f"GA-1 timing evaluations per second, {SHAPE} with {machine.slots} slots "
        f"(ours best of {args.repeats} batches; reference best of {args.reference_repeats} runs)"
    )
    header = f"{'schedule':34s} {'instrs':>7s} {'cycles':>8s} {'ours/s':>9s} {'gen+sim/s':>10s} {'ref/s':>8s} {'ratio':>8s} {'gen ratio':>9s}"
    print(header)
    print("-" * len(header))
    ratios: dict[str, float] = {}
    for schedule in chapter_sweep():
        label = schedule.label(SHAPE, machine)
        program = schedule.build(SHAPE, machine)
        cycles = simulate(machine, program).cycles
        ours = best_rate(lambda: simulate(machine, program), args.repeats)
        generated = best_rate(
            lambda: simulate(machine, schedule.build(SHAPE, machine)), args.repeats
        )
        ref_text = ratio_text = gen_ratio_text = "-"
        if reference is not None:
            ref_prog = reference_program(ref_schedules, ref_machine, schedule, machine)
            if ref_prog != program.to_tuples():  # the comparison is only fair on the same program
                raise SystemExit(f"{label}: the reference program differs from ours")
            sim = ga.Sim(ref_machine, dram).run(ref_prog)
            if sim.cycles != cycles:
                raise SystemExit(f"{label}: reference {sim.cycles} cycles, ours {cycles}")
            ref = best_rate(
                lambda: ga.Sim(ref_machine, dram).run(ref_prog),
                args.reference_repeats,
                min_batch=0.0,
            )
            ratios[label] = ours / ref
            ref_text, ratio_text, gen_ratio_text = (
                f"{ref:8.2f}",
                f"{ours / ref:7.0f}x",
                f"{generated / ref:8.0f}x",
            )
        print(
            f"{label:34s} {len(program):7d} {cycles:8d} {ours:9.1f} {generated:10.1f} {ref_text:>8s} {ratio_text:>8s} {gen_ratio_text:>9s}"
        )

    print("-" * len(header))
    print(f"total time {time.perf_counter() - started_all:.1f} s")
    if reference is None:
        return 0
    key = ChapterSchedule("blocked", 4, 8, 2).label(SHAPE, machine)
    ratio = ratios[key]
    verdict = "ok" if ratio >= REQUIRED_RATIO else "TOO SLOW"
    print(
        f"{key}: ours (timing only) is {ratio:.0f}x the reference's evaluations per second "
        f"(required >= {REQUIRED_RATIO:.0f}x): {verdict}"
    )
    return 0 if ratio >= REQUIRED_RATIO else 1


if __name__ == "__main__":
    harness.run(main)
