"""The compiled engine against the Python reference, side by side in one run.

For the general generator's default schedule on GA-1 with 64 slots it measures, in CPU time
(time.process_time), each measurement interleaved (reference, compiled, reference, ...):
  * generation + timing at 128^3, 512^3 and 1024^3: the reference builds the program
    (simcore.ga1.generator.general) and times it (run_timing); the engine generates and times it
    in one pass (engine.General(...).timing("full"));
  * timing only at 128^3: run_timing against engine.time_program on the same built program;
  * the chapter's blocked 4x8 (2 buffers) and k-outermost seed points at 512^3;
  * the strip schedules' first seed point at 128^3 and 512^3 with 16 slots, without and with a
    store delay of 2 (the reference builds simcore.ga1.generator.strips and times it; the engine
    streams engine.Strips);
  * a timing-only evaluation at 2048^3 in a fresh process: its CPU time and the process's peak
    memory (VmHWM: resource.getrusage's ru_maxrss would carry over the peak of the forking
    benchmark), and the peak of the same process before the evaluation.
Every pair is checked to agree (cycles, busy times, loads, stores, products) before it is timed.

Usage: python -m benchmarks.speed.bench_engine [--repeats N] [--skip-1024-reference]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Callable

from benchmarks import harness
from benchmarks.harness import ROOT
from simcore import Machine, Shape, blocked, kouter
from simcore.ga1 import engine
from simcore.ga1.generator import default_params, general
from simcore.ga1.generator.strips import StripParams, strips
from simcore.ga1.timing import run_timing

MACHINE = Machine(slots=64)
# Each measured call repeats until it has run this long, so short calls time well.
MIN_BATCH_SECONDS = 0.2
PEAK_SCRIPT = """
import json, time
from simcore import Machine, Shape
from simcore.ga1 import engine
from simcore.ga1.generator import default_params
machine, shape = Machine(slots=64), Shape({n}, {n}, {n})
params = default_params(shape, machine)
def peak_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
engine.General(Shape(64, 64, 64), machine, params).timing("full")  # kernels loaded (or compiled) first
before = peak_kb()
started = time.process_time()
cycles = engine.General(shape, machine, params).timing("full").cycles
seconds = time.process_time() - started
print(json.dumps({{"before_kb": before, "peak_kb": peak_kb(), "seconds": seconds, "cycles": cycles}}))
"""


def per_call(function: Callable[[], object]) -> float:
    """CPU seconds of one call: a batch long enough to time well, divided."""
    calls, started = 0, time.process_time()
    while True:
        function()
        calls += 1
        elapsed = time.process_time() - started
        if elapsed >= MIN_BATCH_SECONDS:
            return elapsed / calls


def interleaved(
    reference: Callable[[], object], compiled: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """Median CPU seconds per call of each, measured alternately."""
    ours, theirs = [], []
    for _ in range(repeats):
        theirs.append(per_call(reference))
        ours.append(per_call(compiled))
    return statistics.median(theirs), statistics.median(ours)


def same(a: object, b: object) -> None:
    keys = ("cycles", "busy", "loads", "stores", "products")
    if [getattr(a, k) for k in keys] != [getattr(b, k) for k in keys]:
        raise SystemExit(f"the engine disagrees with the reference: {a} != {b}")


def generation_row(n: int, repeats: int) -> tuple[str, float, float]:
    shape = Shape(n, n, n)
    params = default_params(shape, MACHINE)
    same(
        engine.General(shape, MACHINE, params).timing("full"),
        run_timing(MACHINE, general(shape, MACHINE, params)),
    )
    reference, compiled = interleaved(
        lambda: run_timing(MACHINE, general(shape, MACHINE, params)),
        lambda: engine.General(shape, MACHINE, params).timing("full"),
        repeats,
    )
    return f"generation + timing at {n}^3 (general default, 64 slots)", reference, compiled


def timing_row(repeats: int) -> tuple[str, float, float]:
    shape = Shape(128, 128, 128)
    program = general(shape, MACHINE, default_params(shape, MACHINE))
    same(engine.time_program(MACHINE, program), run_timing(MACHINE, program))
    reference, compiled = interleaved(
        lambda: run_timing(MACHINE, program), lambda: engine.time_program(MACHINE, program), repeats
    )
    return "timing only at 128^3", reference, compiled


def chapter_rows(repeats: int) -> list[tuple[str, float, float]]:
    shape = Shape(512, 512, 512)
    rows = []
    for label, build, ours in (
        (
            "blocked 4x8, 2 buffers at 512^3 (a seed point)",
            lambda: blocked(shape, MACHINE, 4, 8, 2),
            engine.Blocked(shape, MACHINE, 4, 8, 2),
        ),
        (
            "k outermost, 2 buffers at 512^3 (a seed point)",
            lambda: kouter(shape, MACHINE, 2),
            engine.KOuter(shape, MACHINE, 2),
        ),
    ):
        same(ours.timing("full"), run_timing(MACHINE, build()))
        reference, compiled = interleaved(
            lambda: run_timing(MACHINE, build()), lambda: ours.timing("full"), repeats
        )
        rows.append((label, reference, compiled))
    return rows


def strips_rows(
    repeats: int, sizes: tuple[int, ...] = (128, 512)
) -> list[tuple[str, float, float]]:
    """The first strip seed (search_spaces/strips.py), and the same with each finished
    accumulator's store delayed by two products (the default's best at 128^3 on 16 slots)."""
    machine = Machine(slots=16)
    rows = []
    for delay in (0, 2):
        params = StripParams(split=2, tail=2, protect=8, store_delay=delay)
        for n in sizes:
            shape = Shape(n, n, n)
            same(
                engine.Strips(shape, machine, params).timing("full"),
                run_timing(machine, strips(shape, machine, params)),
            )
            reference, compiled = interleaved(
                lambda: run_timing(machine, strips(shape, machine, params)),
                lambda: engine.Strips(shape, machine, params).timing("full"),
                repeats,
            )
            delayed = f", store delay {delay}" if delay else ""
            label = f"strips{delayed}, generation + timing at {n}^3 (16 slots)"
            rows.append((label, reference, compiled))
    return rows


def peak_row(n: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT.format(n=n)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def seconds(value: float) -> str:
    return f"{value * 1e3:.3g} ms" if value < 1 else f"{value:.3g} s"


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"repeats": 1, "skip_1024_reference": True})
    parser.add_argument(
        "--repeats",
        type=int,
        default=5,
        help="interleaved measurements per row (median kept; default 5)",
    )
    parser.add_argument(
        "--skip-1024-reference",
        action="store_true",
        help="leave out 1024^3 (the reference takes seconds per call)",
    )
    args = parser.parse_args(argv)
    engine.General(Shape(64, 64, 64), MACHINE, default_params(Shape(64, 64, 64), MACHINE)).timing(
        "full"
    )  # load the kernels
    peak = peak_row(256 if args.quick else 2048)  # first, while this process is small
    rows = [generation_row(128, args.repeats)]
    if not args.quick:
        rows.append(generation_row(512, args.repeats))
    if not args.skip_1024_reference:
        rows.append(generation_row(1024, max(1, min(args.repeats, 2))))
    rows += [timing_row(args.repeats), *([] if args.quick else chapter_rows(args.repeats))]
    rows += strips_rows(args.repeats, (128,) if args.quick else (128, 512))
    print(f"{'measure':<66} {'reference':>11} {'compiled':>11} {'ratio':>8}")
    for label, reference, compiled in rows:
        print(
            f"{label:<66} {seconds(reference):>11} {seconds(compiled):>11} {reference / compiled:>7.0f}x"
        )
    print(
        f"timing-only evaluation at {256 if args.quick else 2048}^3: {seconds(peak['seconds'])} CPU, peak memory {peak['peak_kb'] / 1024:.0f} MB "
        f"(the process held {peak['before_kb'] / 1024:.0f} MB before it), {peak['cycles']} cycles"
    )
    return 0


if __name__ == "__main__":
    harness.run(main)
