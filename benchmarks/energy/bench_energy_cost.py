"""What costing a trial's energy adds to the trial, in CPU time (time.process_time).

For each oracle, one evaluation as the tuner runs it, and the energy and area of its result
(the oracle's `_energy` step), side by side and interleaved (evaluate, cost, evaluate, cost,
...), the best of --repeats each:
  ga1       the compiled engine timing a blocked schedule (Blocked(...).timing(), the heart of
            GA1Oracle.evaluate), then GA1Oracle._energy on that Timing
  systolic  SystolicOracle.evaluate on a point with its energy step off, then that step
The technology table is loaded once per run, as a tuner would.

With --tune N, also whole tuner trials with and without energy: `autotune tune` run in this
process (the run pipeline, its default guided sampler and journal storage, each run a new
study) on a GEMM of each oracle, N trials a run, alternately with the oracles costing energy and
with their energy step (`_energy`) replaced by nothing, --tune-repeats runs of each, interleaved
(with, without, without, with, ...). The same seed gives both the same trials: the objective is
cycles alone. Per trial: the CPU time of a run over N, the least and the median of the runs.
Goal: energy costs <= 5% of a trial.

Usage: python -m benchmarks.energy.bench_energy_cost [--repeats N] [--tune N] [--tune-repeats R]
"""

from __future__ import annotations

import statistics
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from autotune.oracles.systolic import SystolicOracle
from benchmarks import harness
from search_spaces.systolic import design_of
from simcore.ga1.engine import Blocked
from simcore.ga1.machine import Machine
from simcore.shape import Shape
from simcore.systolic.closed_form import cycles
from simcore.systolic.model import design_traffic

SYSTOLIC_POINT = {
    "rows": 128,
    "cols": 128,
    "dataflow": "ws",
    "shadow": True,
    "hbm_buffers": 2,
    "hbm_words": 32,
    "map_rows": 128,
    "map_cols": 128,
    "tile_order": "col-outer",
}


def best_cpu(function: Callable[[], object], inner: int) -> float:
    started = time.process_time()
    for _ in range(inner):
        function()
    return (time.process_time() - started) / inner


def side_by_side(
    name: str, evaluate: Callable[[], object], cost: Callable[[], object], repeats: int, inner: int
) -> str:
    evaluations, costs = [], []
    for _ in range(repeats):
        evaluations.append(best_cpu(evaluate, inner))
        costs.append(best_cpu(cost, inner))
    e, c = min(evaluations), min(costs)
    return (
        f"{name:<44} evaluate {e * 1e6:>10.1f} us   energy+area {c * 1e6:>8.1f} us   {c / e:>7.2%}"
    )


@contextmanager
def energy(costed: bool, spent: list[float] | None = None) -> Iterator[None]:
    """The oracles as they are (with `spent`, the CPU time of their energy step added to it),
    or with their energy step doing nothing."""
    from autotune.oracles.ga1 import GA1Oracle
    from autotune.oracles.systolic import SystolicOracle

    kept = GA1Oracle._energy, SystolicOracle._energy

    def timed(step: Callable[..., dict]) -> Callable[..., dict]:
        def run(*args: object) -> dict:
            started = time.process_time()
            found = step(*args)
            spent[0] += time.process_time() - started  # type: ignore[index]
            return found

        return run

    if not costed:
        GA1Oracle._energy = SystolicOracle._energy = lambda *args: {}  # type: ignore[method-assign]
    elif spent is not None:
        GA1Oracle._energy, SystolicOracle._energy = timed(kept[0]), timed(kept[1])  # type: ignore[method-assign]
    try:
        yield
    finally:
        GA1Oracle._energy, SystolicOracle._energy = kept  # type: ignore[method-assign]


def tune_cpu(
    oracle: str,
    shape: Shape,
    trials: int,
    costed: bool,
    folder: Path,
    run: int,
    spent: list[float] | None = None,
) -> float:
    """CPU seconds per trial of one `autotune tune` run of `trials` trials (a new study)."""
    from autotune import oracles
    from autotune.run import pipeline
    from autotune.run.plan import RunPlan

    machine = oracles.get(oracle).default_machine()
    plan = RunPlan.of_shape(shape, machine, oracle=oracle, objectives=("cycles",))
    options = pipeline.RunOptions(
        trials=trials,
        seed=1,
        study=f"{oracle}-{run}-{costed}-{spent is None}",
        results=folder,
        verify_top=0,
        write=False,
    )
    with energy(costed, spent):
        started = time.process_time()
        outcome = pipeline.run(plan, options)
        used = time.process_time() - started
    columns = set(outcome.studies[0].frame.columns)
    assert ("energy_pj" in columns) == costed, "the energy switch did not take"
    return used / trials


def tune_lines(trials: int, repeats: int) -> list[str]:
    """Per oracle: the energy step's own share of a trial (timed inside the run), then runs with
    and without it, interleaved in pairs (with, without; without, with; ...)."""
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        for oracle, shape in (("ga1", Shape(128, 128, 128)), ("systolic", Shape(512, 1024, 1024))):
            tune_cpu(oracle, shape, 5, True, Path(folder), -1)  # compiles, warms every cache
            spent = [0.0]
            per_trial = tune_cpu(oracle, shape, trials, True, Path(folder), -1, spent)
            lines.append(
                f"tune {oracle} {shape}: the energy step {spent[0] / trials * 1e6:.1f} us of a "
                f"{per_trial * 1e3:.3f} ms trial ({spent[0] / (per_trial * trials):.2%})"
            )
            found: dict[bool, list[float]] = {True: [], False: []}
            for run in range(repeats):
                for costed in (True, False) if run % 2 == 0 else (False, True):
                    found[costed].append(tune_cpu(oracle, shape, trials, costed, Path(folder), run))
            with_, without = found[True], found[False]
            ratios = [a / b - 1 for a, b in zip(with_, without)]
            lines.append(
                f"tune {oracle} {shape}, {repeats} x 2 runs of {trials} trials: per trial with energy "
                f"{statistics.median(with_) * 1e3:.3f} ms, without {statistics.median(without) * 1e3:.3f} ms "
                f"(medians); with/without per pair {statistics.median(ratios):+.2%} median, "
                f"{min(ratios):+.1%} to {max(ratios):+.1%}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"repeats": 1, "tune": 0})
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--tune",
        type=int,
        default=0,
        help="also time tuner runs of N trials with and without energy",
    )
    parser.add_argument(
        "--tune-repeats", type=int, default=5, help="runs of each, interleaved (default 5)"
    )
    args = parser.parse_args(argv)
    from autotune.cli.quiet import quiet_libraries
    from autotune.oracles.ga1 import ORACLE as GA1
    from autotune.oracles.systolic import ORACLE as SYSTOLIC

    quiet_libraries()
    lines = []
    for shape, machine, (bi, bj) in (
        (Shape(128, 128, 128), Machine(slots=64), (4, 4)),
        (Shape(64, 64, 64), Machine(), (2, 2)),
        (Shape(512, 512, 512), Machine(slots=64), (4, 8)),
    ):
        generator = Blocked(shape, machine, bi, bj)
        timing = generator.timing()  # compiles once
        lines.append(
            side_by_side(
                f"ga1 blocked {bi}x{bj} {shape}, {machine.slots} slots",
                generator.timing,
                lambda: GA1._energy(machine, timing),
                args.repeats,
                20,
            )
        )
    family = SYSTOLIC.families((), SYSTOLIC.parse_machine("pe_budget=16384"))[0]
    budget = SYSTOLIC.parse_machine("pe_budget=16384")
    costing = SystolicOracle._energy
    for shape in (Shape(512, 1024, 1024), Shape(64, 64, 64)):
        design = design_of(SYSTOLIC_POINT)
        run_cycles, traffic = cycles(design, shape), design_traffic(design, shape)
        with energy(False):
            lines.append(
                side_by_side(
                    f"systolic 128x128 ws {shape}",
                    lambda: SYSTOLIC.evaluate(family, SYSTOLIC_POINT, shape, budget),
                    lambda: costing(SYSTOLIC, design, shape, run_cycles, traffic),
                    args.repeats,
                    200,
                )
            )
    if args.tune:
        lines += tune_lines(args.tune, args.tune_repeats)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    harness.run(main)
