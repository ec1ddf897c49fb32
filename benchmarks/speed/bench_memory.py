"""Speed of the block-level memory timing, in CPU time (time.process_time).

For each case (a bundled machine, a GEMM, a block schedule): one evaluation in process
(`simcore.systolic.blocked.evaluate`: the feasibility check, the fast engine, the counts and the
bound), the best of --repeats after one warm-up call (first-call costs, the array's closed forms
cached per block shape, are reported apart), and the reference engine on the same case, with the
steps each simulated and the fast engine's jumps.

Usage: python -m benchmarks.speed.bench_memory [--repeats N] [--cases N] [--quick]
"""

from __future__ import annotations

import time

from benchmarks import harness
from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked import BlockSchedule, evaluate
from simcore.systolic.blocked.fast import run_fast
from simcore.systolic.blocked.stream import block_tiles
from simcore.systolic.model import SystolicDesign

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
QUICK = {"repeats": 1, "cases": 2}


def _cpu(call, repeats: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick=QUICK)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cases", type=int, default=len(CASES), help="the first N cases")
    args = parser.parse_args(argv)
    print(
        f"{'machine':<8} {'shape':<17} {'schedule':<30} {'cycles':>11} {'stall':>6} "
        f"{'first ms':>8} {'eval ms':>8} {'ref ms':>8} {'steps':>7} {'sim':>5} {'jumps':>5}"
    )
    for arch, shape, schedule in CASES[: args.cases]:
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
    return 0


if __name__ == "__main__":
    harness.run(main)
