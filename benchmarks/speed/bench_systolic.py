"""Speed of the systolic cycle models, in CPU time (time.process_time).

1. `autotune systolic --shape 512x1024x1024 --array 128x128 --check` run in-process: the whole
   command (best mapping, closed forms, and each of ws, os, is run on its own cycle model on the
   full problem, exact), the best of --repeats runs; and each dataflow's exact check alone.
2. The event engine against the cycle-stepped reference engine on problems the reference can
   run, side by side and interleaved (reference, events, reference, events, ...), best of
   --repeats each, with the ratio.

Usage: python benchmarks/bench_systolic.py [--repeats N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from autotune.cli.main import main  # noqa: E402
from autotune.oracles.systolic import verify_design  # noqa: E402
from simcore.shape import Shape  # noqa: E402
from simcore.systolic import (
    SystolicArray,
    SystolicDesign,
    simulate_systolic,
    simulate_systolic_reference,
)  # noqa: E402

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
        assert main(CHECK) == 0


def main_bench(repeats: int) -> None:
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
    print(f"{'problem':28}{'dataflow':>9}{'reference s':>13}{'events s':>11}{'ratio':>9}")
    for shape, array in SIDE_BY_SIDE:
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    main_bench(parser.parse_args().repeats)
