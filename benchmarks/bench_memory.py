"""Speed of the block-level memory timing, in CPU time (time.process_time).

For each case (a bundled machine, a GEMM, a block schedule): one evaluation in process
(`simcore.systolic.blocked.evaluate`: the feasibility check, the fast engine, the counts and the
bound), the best of --repeats after one warm-up call (first-call costs, the array's closed forms
cached per block shape, are reported apart), and the reference engine on the same case, with the
steps each simulated and the fast engine's jumps.

Usage: python benchmarks/bench_memory.py [--repeats N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simcore.shape import Shape  # noqa: E402
from simcore.systolic.archs import load_arch  # noqa: E402
from simcore.systolic.blocked import BlockSchedule, evaluate  # noqa: E402
from simcore.systolic.blocked.fast import run_fast  # noqa: E402
from simcore.systolic.blocked.stream import block_tiles  # noqa: E402
from simcore.systolic.model import SystolicDesign  # noqa: E402

CASES = (
    ("tpu-v1", Shape(4096, 4096, 11008), BlockSchedule(2048, 256, 256, "mnk", (2, 2, 2))),
    ("tpu-v1", Shape(4096, 4096, 11008), BlockSchedule(1024, 256, 256, "nkm", (2, 2, 2))),
    ("tpu-v1", Shape(4096, 4096, 11008), BlockSchedule(2048, 256, 256, "kmn", (2, 2, 2))),
    (
        "tpu-v1",
        Shape(4096, 4096, 11008),
        BlockSchedule(2048, 512, 256, "nmk", (1, 2, 2), (0, 3, 3)),
    ),
    ("tpuv4i", Shape(4096, 4096, 11008), BlockSchedule(1024, 1024, 1024, "mnk", (2, 2, 2))),
    ("tpuv4i", Shape(1, 4096, 11008), BlockSchedule(1, 4096, 512, "mnk", (2, 2, 2))),
    ("gemmini", Shape(512, 4096, 4096), BlockSchedule(128, 256, 64, "mnk", (2, 2, 2))),
)


def _cpu(call, repeats: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{'machine':<8} {'shape':<17} {'schedule':<30} {'cycles':>11} {'stall':>6} "
        f"{'first ms':>8} {'eval ms':>8} {'ref ms':>8} {'steps':>7} {'sim':>5} {'jumps':>5}"
    )
    for arch, shape, schedule in CASES:
        machine = load_arch(arch)
        design = SystolicDesign(machine.array, machine.dataflow)
        block_tiles.cache_clear()
        first = _cpu(lambda: evaluate(machine, design, schedule, shape), 1)
        fast = _cpu(lambda: evaluate(machine, design, schedule, shape), args.repeats)
        ref = _cpu(lambda: evaluate(machine, design, schedule, shape, "reference"), 1)
        run = evaluate(machine, design, schedule, shape)
        assert run.cycles == evaluate(machine, design, schedule, shape, "reference").cycles
        stats = run_fast(machine, design, schedule, shape)
        print(
            f"{arch:<8} {str(shape):<17} {schedule.describe():<30} {run.cycles:>11,} "
            f"{run.stall_share:>6.1%} {first * 1e3:>8.2f} {fast * 1e3:>8.2f} {ref * 1e3:>8.1f} "
            f"{run.counts.blocks:>7,} {stats.steps_simulated:>5} {stats.jumps:>5}"
        )


if __name__ == "__main__":
    main()
