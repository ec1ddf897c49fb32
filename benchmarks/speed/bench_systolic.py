"""Speed of the systolic cycle models, in CPU time (time.process_time).

1. `autotune systolic --shape 512x1024x1024 --array 128x128 --check` run in-process: the whole
   command (best mapping, closed forms, and each of ws, os, is run on its own cycle model on the
   full problem, exact), the best of --repeats runs; and each dataflow's exact check alone.
2. The event engine against the cycle-stepped reference engine on problems the reference can
   run, side by side and interleaved (reference, events, reference, events, ...), best of
   --repeats each, with the ratio.

Usage: python -m benchmarks.speed.bench_systolic [--repeats N]
"""

from __future__ import annotations

import contextlib
import io
import time
from typing import Callable

import numpy as np

from autotune.cli.main import main as autotune_main
from autotune.oracles.systolic_check import verify_design
from benchmarks import harness
from simcore.shape import Shape
from simcore.systolic import (
    SystolicArray,
    SystolicDesign,
    simulate_systolic,
    simulate_systolic_reference,
)

CHECK = ["systolic", "--shape", "512x1024x1024", "--array", "128x128", "--check"]
SIDE_BY_SIDE = (
    (Shape(64, 64, 64), SystolicArray(8, 8)),
    (Shape(128, 128, 128), SystolicArray(16, 16)),
)


def cpu(function: Callable[[], object]) -> float:
    started = time.process_time()
    function()
    return time.process_time() - started


def quiet_main() -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert autotune_main(CHECK) == 0


def main_bench(repeats: int, quick: bool = False) -> None:
    if quick:  # the smoke test: the models side by side on the smallest problem
        return side_by_side(repeats, SIDE_BY_SIDE[:1])
    quiet_main()  # warm-up
    best = min(cpu(quiet_main) for _ in range(repeats))
    print(
        f"autotune {' '.join(CHECK)}: {best:.3f} s CPU (best of {repeats}), ws, os and is each exact"
    )
    shape = Shape(512, 1024, 1024)
    for dataflow in ("ws", "os", "is"):
        design = SystolicDesign(SystolicArray(128, 128), dataflow)
        seconds = min(cpu(lambda: verify_design(design, shape)) for _ in range(repeats))
        print(
            f"  {dataflow} check alone: {seconds:.3f} s CPU  ({verify_design(design, shape).detail})"
        )
    print()
    side_by_side(repeats, SIDE_BY_SIDE)


def side_by_side(repeats: int, problems: tuple[tuple[Shape, SystolicArray], ...]) -> None:
    print(f"{'problem':28}{'dataflow':>9}{'reference s':>13}{'events s':>11}{'ratio':>9}")
    for shape, array in problems:
        rng = np.random.default_rng(0)
        a = rng.integers(-9, 10, (shape.m, shape.k)).astype(np.float64)
        b = rng.integers(-9, 10, (shape.k, shape.n)).astype(np.float64)
        for dataflow in ("ws", "os", "is"):
            design = SystolicDesign(array, dataflow)
            slow = fast = float("inf")
            for _ in range(repeats):  # interleaved, so both see the same machine load
                slow = min(slow, cpu(lambda: simulate_systolic_reference(design, a, b)))
                fast = min(fast, cpu(lambda: simulate_systolic(design, a, b)))
            print(
                f"{f'{shape} on {array}':28}{dataflow:>9}{slow:>13.3f}{fast:>11.4f}{slow / fast:>8.0f}x"
            )


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"repeats": 1})
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    main_bench(args.repeats, args.quick)
    return 0


if __name__ == "__main__":
    harness.run(main)
