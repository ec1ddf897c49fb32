"""What costing a trial's energy adds to the trial, in CPU time (time.process_time).

For each oracle, one evaluation as the tuner runs it, and the energy and area of its result,
side by side and interleaved (evaluate, cost, evaluate, cost, ...), the best of --repeats each:
  ga1       the compiled engine timing a blocked schedule (Blocked(...).timing(), the heart of
            GA1Family.evaluate), then ga1_cost_of_timing on that Timing
  systolic  SystolicFamily.evaluate on a point, then systolic_cost_of with its cycles
The technology table is loaded once per run, as a tuner would. With --trial, also the CPU time
of one tuner trial (`autotune tune` on 128x128x128 in a child process: the CPU time of 2N trials
less that of N, over N, so start-up and compilation cancel). Goal: the cost <= 5% of one
evaluation.

Usage: python benchmarks/bench_energy_cost.py [--repeats N] [--trial N]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from search_spaces.systolic import design_of, systolic_family  # noqa: E402
from simcore.energy import ga1_cost_of_timing, load_technology, systolic_cost_of  # noqa: E402
from simcore.ga1.engine import Blocked  # noqa: E402
from simcore.ga1.machine import Machine  # noqa: E402
from simcore.shape import Shape  # noqa: E402

SYSTOLIC_POINT = {"rows": 128, "cols": 128, "dataflow": "ws", "shadow": True, "hbm_buffers": 2,
                  "hbm_words": 32, "map_rows": 128, "map_cols": 128, "tile_order": "col-outer"}


def best_cpu(function: Callable[[], object], inner: int) -> float:
    started = time.process_time()
    for _ in range(inner):
        function()
    return (time.process_time() - started) / inner


def side_by_side(name: str, evaluate: Callable[[], object], cost: Callable[[], object], repeats: int,
                 inner: int) -> str:
    evaluations, costs = [], []
    for _ in range(repeats):
        evaluations.append(best_cpu(evaluate, inner))
        costs.append(best_cpu(cost, inner))
    e, c = min(evaluations), min(costs)
    return f"{name:<44} evaluate {e * 1e6:>10.1f} us   energy+area {c * 1e6:>8.1f} us   {c / e:>7.2%}"


def tuner_cpu(trials: int, folder: str) -> float:
    """CPU seconds of one `autotune tune` run of `trials` trials, in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    study = f"energy-cost-{trials}"
    command = [sys.executable, "-m", "autotune", "tune", "--shape", "128x128x128", "--trials", str(trials),
               "--seed", "1", "--study", study, "--storage", f"sqlite:///{folder}/{study}.db",
               "--results", folder, "--verify-top", "1"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=folder)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--trial", type=int, default=0, help="also time N tuner trials (slow)")
    args = parser.parse_args()
    tech = load_technology()
    lines = []
    for shape, machine, (bi, bj) in ((Shape(128, 128, 128), Machine(slots=64), (4, 4)),
                                     (Shape(64, 64, 64), Machine(), (2, 2)),
                                     (Shape(512, 512, 512), Machine(slots=64), (4, 8))):
        generator = Blocked(shape, machine, bi, bj)
        timing = generator.timing()  # compiles once
        lines.append(side_by_side(f"ga1 blocked {bi}x{bj} {shape}, {machine.slots} slots",
                                  generator.timing, lambda: ga1_cost_of_timing(machine, timing, tech).metrics(),
                                  args.repeats, 20))
    family = systolic_family(16384, 64)
    for shape in (Shape(512, 1024, 1024), Shape(64, 64, 64)):
        design = design_of(SYSTOLIC_POINT)
        run = family.evaluate(SYSTOLIC_POINT, shape, Machine())
        cycles = int(run["cycles"])  # type: ignore[call-overload]
        lines.append(side_by_side(f"systolic 128x128 ws {shape}",
                                  lambda: family.evaluate(SYSTOLIC_POINT, shape, Machine()),
                                  lambda: systolic_cost_of(design, shape, tech, cycles).metrics(), args.repeats, 200))
    if args.trial:
        with tempfile.TemporaryDirectory() as folder:
            per_trial = (tuner_cpu(2 * args.trial, folder) - tuner_cpu(args.trial, folder)) / args.trial
        machine, timing = Machine(slots=64), Blocked(Shape(128, 128, 128), Machine(slots=64), 4, 4).timing()
        cost = best_cpu(lambda: ga1_cost_of_timing(machine, timing, tech).metrics(), 2000)
        lines.append(f"{'one tuner trial, 128x128x128 (autotune tune)':<44} trial    {per_trial * 1e6:>10.1f} us   "
                     f"energy+area {cost * 1e6:>8.1f} us   {cost / per_trial:>7.3%}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
