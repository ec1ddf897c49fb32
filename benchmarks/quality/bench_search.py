#!/usr/bin/env python3
"""Search speed and quality: the default sampler against the flat TPE and random search, side by
side.

Each run is the tuner's own pipeline (seeding, sampling, evaluation, ranking) with an in-memory
study. For every configuration, scratchpad and seed it reports the trials needed to reach 1.05x,
1.02x and 1.01x the lower bound, the best at 100, 300 and 1,000 trials, and the sampler's CPU per
trial (Optuna's ask and the sampler's own work, simulation excluded). Runs are interleaved
(seed by seed, scratchpad by scratchpad, one configuration after the other) so that a slow
moment of the shared machine falls on every configuration alike.

    python -m benchmarks.quality.bench_search                      # the full table (128^3; 64, 32, 16 slots; seeds 0-4; 1,000 trials)
    python -m benchmarks.quality.bench_search --slots 64 --seeds 0,1 --trials 300 --configs guided,tpe
    python -m benchmarks.quality.bench_search --cases              # other shapes and machines: today's 1,000 trials against the default's 300
    python -m benchmarks.quality.bench_search --cases --all-cases --seeds 0   # and 22 more (MORE_CASES)

Configurations: `guided` is the default (`--sampler guided`, the default spaces, conditional
encoding); `tpe` is the flat TPE (`--sampler tpe --space chapter,general`, flat
encoding, the general family seeded with its default block only, as then); `random` is random
search over the same spaces and seeds as `tpe` (the issue's baseline). The
others are ablations of the default (see CONFIGS)."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import optuna
import pandas as pd

from autotune.results.leaderboard import json_rows
from autotune.run import pipeline
from autotune.run import study as run_study
from autotune.run.plan import RunPlan
from autotune.search.guided import GuidedSampler
from autotune.storage import MEMORY, local_storage, read_study
from benchmarks import harness
from benchmarks.quality.search_cases import CASES, MORE_CASES
from search_spaces.general import GeneralFamily
from search_spaces.registry import DEFAULT_SPACES, LEGACY_SPACES
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.shape import Shape, parse_shape

RATIOS = (1.05, 1.02, 1.01)
BUDGETS = (100, 300, 1000)
Factory = Callable[[Any, int], optuna.samplers.BaseSampler]
DEFAULT, LEGACY = ",".join(DEFAULT_SPACES), ",".join(LEGACY_SPACES)
# name -> (--sampler, which sets the encoding; --space; the sampler itself when not --sampler's)
CONFIGS: dict[str, tuple[str, str, Factory | None]] = {
    "guided": ("guided", DEFAULT, None),
    "tpe": ("tpe", LEGACY, None),
    "random": ("random", LEGACY, None),
    # Ablations: what each part of the default is worth.
    "tpe-conditional": (
        "guided",
        DEFAULT,
        lambda search, seed: optuna.samplers.TPESampler(
            seed=seed, multivariate=True, group=True, n_startup_trials=20, constant_liar=True
        ),
    ),
    "tpe-flat-strips": ("tpe", DEFAULT, None),
    "guided-no-momentum": (
        "guided",
        DEFAULT,
        lambda search, seed: GuidedSampler(search, seed, momentum=False),
    ),
    "guided-explore-2": (
        "guided",
        DEFAULT,
        lambda search, seed: GuidedSampler(search, seed, explore_every=2, stall=0),
    ),
    "guided-random-explore": (
        "guided",
        DEFAULT,
        lambda search, seed: GuidedSampler(search, seed, explorer="random"),
    ),
    "guided-no-pairs": (
        "guided",
        DEFAULT,
        lambda search, seed: GuidedSampler(search, seed, pairs=False),
    ),
    "guided-legacy-spaces": ("guided", LEGACY, None),
    "guided-turns": (
        "guided",
        DEFAULT,
        lambda search, seed: GuidedSampler(search, seed, allotment="turns"),
    ),
}
TODAY = ("tpe", "random")  # the configurations with the general family seeded by its default block


class TimedSampler(optuna.samplers.BaseSampler):
    """A sampler that adds its CPU time (process time) to `spent`; otherwise the one it wraps."""

    spent = 0.0

    def __init__(self, inner: optuna.samplers.BaseSampler) -> None:
        self._inner = inner

    def _timed(self, name: str, *args: Any) -> Any:
        started = time.process_time()
        try:
            return getattr(self._inner, name)(*args)
        finally:
            TimedSampler.spent += time.process_time() - started

    def infer_relative_search_space(self, study, trial):  # type: ignore[no-untyped-def]
        return self._timed("infer_relative_search_space", study, trial)

    def sample_relative(self, study, trial, search_space):  # type: ignore[no-untyped-def]
        return self._timed("sample_relative", study, trial, search_space)

    def sample_independent(self, study, trial, param_name, param_distribution):  # type: ignore[no-untyped-def]
        return self._timed("sample_independent", study, trial, param_name, param_distribution)

    def before_trial(self, study, trial):  # type: ignore[no-untyped-def]
        return self._timed("before_trial", study, trial)

    def after_trial(self, study, trial, state, values):  # type: ignore[no-untyped-def]
        return self._timed("after_trial", study, trial, state, values)

    def reseed_rng(self) -> None:
        self._inner.reseed_rng()


# The study module builds each run's sampler; wrapping it there times every configuration alike.
_make_sampler = run_study.make_sampler
_factory: list[Factory | None] = [None]  # the running configuration's own sampler, if any
run_study.make_sampler = lambda name, seed, search=None: TimedSampler(  # type: ignore[assignment]
    _factory[0](search, seed) if _factory[0] else _make_sampler(name, seed, search)
)


@dataclass
class Run:
    config: str
    label: str  # the case: shape and machine
    seed: int
    trials: int
    bound: int
    best_by_trial: list[float]  # best cycles after each trial (inf before any feasible)
    sampler_ms: float  # sampler CPU per trial
    cpu_s: float  # the whole run's CPU
    top: dict[str, object]  # the winner's leaderboard row
    donors: list[str]  # the studies transferred from
    study: str
    seeded: int  # trials enqueued before any is sampled (the families' baseline points)

    def first(self, ratio: float) -> int | None:
        return next(
            (i + 1 for i, b in enumerate(self.best_by_trial) if b <= ratio * self.bound), None
        )

    def best_at(self, budget: int) -> float | None:
        return self.best_by_trial[budget - 1] if budget <= len(self.best_by_trial) else None


@contextlib.contextmanager
def seeded_as_before(config: str) -> Iterator[None]:
    """For the flat TPE (tpe) and random search: the general family seeded with its default block
    only (not the panel and overlap seeds the default sampler also starts from)."""
    if config not in TODAY:
        yield
        return
    own = GeneralFamily.seed_points
    GeneralFamily.seed_points = lambda self, shape, machine: own(self, shape, machine)[:1]  # type: ignore[method-assign]
    try:
        yield
    finally:
        GeneralFamily.seed_points = own  # type: ignore[method-assign]


def run_once(
    config: str,
    shape: Shape,
    overrides: str,
    seed: int,
    trials: int,
    results: Path | None = None,
    transfer: bool = False,
) -> Run:
    """One run; in memory, or with `results` in the default storage there (for transfer)."""
    with seeded_as_before(config):
        return _run_once(config, shape, overrides, seed, trials, results, transfer)


def _run_once(
    config: str,
    shape: Shape,
    overrides: str,
    seed: int,
    trials: int,
    results: Path | None,
    transfer: bool,
) -> Run:
    sampler, spaces, _factory[0] = CONFIGS[config]
    machine = machine_from(parse_overrides(overrides), None)
    spec = RunPlan.of_shape(shape, machine, spaces=spaces)
    name = f"bench-{config}-{seed}-{shape}-{overrides}".replace(",", "-").replace("=", "")
    options = pipeline.RunOptions(
        trials=trials,
        sampler=sampler,
        seed=seed,
        storage=None if results else MEMORY,
        verify_top=1,
        write=False,
        study=name + ("-transfer" if transfer else ""),
        results=results or Path("results"),
        transfer=transfer,
    )
    TimedSampler.spent = 0.0
    started = time.process_time()
    outcome = pipeline.run(spec, options)
    cpu = time.process_time() - started
    frame = outcome.studies[0].frame
    found = {
        int(t): float(c)
        for t, c, ok in zip(frame["trial"], frame["cycles"], frame["feasible"])
        if not pd.isna(c) and bool(ok)
    }
    best, trajectory = float("inf"), []
    for number in range(trials):
        best = min(best, found.get(number, float("inf")))
        trajectory.append(best)
    top = json_rows(frame.head(1))[0]
    donors = []
    if (
        transfer and results is not None
    ):  # where the transferred trials came from, as they recorded it
        study = read_study(str(local_storage(results, outcome.name)), outcome.name)
        assert study is not None
        donors = sorted(
            {
                f"{t.user_attrs['transfer']['shape']} {t.user_attrs['transfer']['machine'].split(',')[1]}"
                for t in study.trials
                if t.user_attrs.get("source") == "transfer"
            }
        )
    ((_, search),) = spec.searches()
    return Run(
        config,
        f"{shape} {overrides}",
        seed,
        trials,
        lower_bound(shape, machine),
        trajectory,
        1000 * TimedSampler.spent / trials,
        cpu,
        top,
        donors,
        outcome.name,
        len(search.seeds()),
    )


def fmt(value: float | int | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def table(runs: Sequence[Run], budgets: Sequence[int]) -> str:
    head = (
        "| config | seed | "
        + " | ".join(f"trials to {r}x" for r in RATIOS)
        + " | "
        + " | ".join(f"best at {b:,}" for b in budgets)
        + " | sampler ms/trial |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for run in runs:
        lines.append(
            f"| {run.config} | {run.seed} | "
            + " | ".join(fmt(run.first(r)) for r in RATIOS)
            + " | "
            + " | ".join(fmt(run.best_at(b)) for b in budgets)
            + f" | {run.sampler_ms:.1f} |"
        )
    for config in dict.fromkeys(r.config for r in runs):
        mine = [r for r in runs if r.config == config]
        worst = [
            None if any(r.first(x) is None for r in mine) else max(r.first(x) for r in mine)
            for x in RATIOS
        ]  # type: ignore[type-var]
        lines.append(
            f"| {config} | worst | "
            + " | ".join(fmt(w) for w in worst)
            + " | "
            + " | ".join(
                fmt(
                    max((r.best_at(b) or 0) for r in mine)
                    if all(r.best_at(b) for r in mine)
                    else None
                )
                for b in budgets
            )
            + f" | {statistics.mean(r.sampler_ms for r in mine):.1f} (mean) |"
        )
    return "\n".join(lines)


def winners(runs: Sequence[Run]) -> str:
    lines = [
        "| case | config | seed | cycles | tiles moved | DMA busy | MXU busy | / bound | verified |",
        "|" + "---|" * 9,
    ]
    for run in runs:
        top = run.top
        lines.append(
            f"| {run.label} | {run.config} | {run.seed} | {fmt(top['cycles'])} | {fmt(top['tiles_moved'])} | "  # type: ignore[arg-type]
            f"{float(top['dma_busy']):.1%} | {float(top['mxu_util']):.1%} | {float(top['cycles']) / run.bound:.3f} | "  # type: ignore[arg-type]
            f"{top['verified']} |"
        )
    return "\n".join(lines)


def slots_table(args: argparse.Namespace) -> None:
    shape = parse_shape(args.shape)
    runs: list[Run] = []
    for seed in args.seeds:
        for slots in args.slots:
            for config in args.configs:
                run = run_once(
                    config,
                    shape,
                    ",".join(filter(None, [f"slots={slots}", args.machine])),
                    seed,
                    args.trials,
                )
                runs.append(run)
                print(
                    f"# {run.label} {config} seed {seed}: best {fmt(run.best_by_trial[-1])}, sampler {run.sampler_ms:.1f} ms/trial, "
                    f"run {run.cpu_s:.1f} s CPU",
                    file=sys.stderr,
                    flush=True,
                )
    budgets = [b for b in BUDGETS if b <= args.trials] or [args.trials]
    for slots in args.slots:
        label = f"{shape} " + ",".join(filter(None, [f"slots={slots}", args.machine]))
        mine = [r for r in runs if r.label == label]
        print(f"\n### {label}: lower bound {fmt(mine[0].bound)}\n")
        print(
            table(sorted(mine, key=lambda r: (list(args.configs).index(r.config), r.seed)), budgets)
        )
    print("\n### The winners\n")
    print(winners([r for r in runs if r.seed == args.seeds[0]]))


def cases_table(args: argparse.Namespace) -> None:
    """Goal 3: today's tuner (tpe, 1,000 trials) against the default (300 trials) per case."""
    rows = []
    for shape, overrides in args.case or (CASES + MORE_CASES if args.all_cases else CASES):
        for seed in args.seeds:
            old = run_once("tpe", parse_shape(shape), overrides, seed, args.old_trials)
            new = run_once("guided", parse_shape(shape), overrides, seed, args.new_trials)
            rows.append((old, new))
            print(
                f"# {shape} {overrides} seed {seed}: tpe {fmt(old.best_by_trial[-1])}, guided {fmt(new.best_by_trial[-1])}",
                file=sys.stderr,
                flush=True,
            )
    # "baseline": the best of the guided study's enqueued baseline points alone (before any sampling).
    print(
        f"\n| case | seed | bound | tpe, {args.old_trials:,} trials | / bound | guided, {args.new_trials:,} trials | / bound | change "
        "| guided's baseline points alone |"
    )
    print("|" + "---|" * 9)
    changes = []
    for old, new in rows:
        a, b = old.best_by_trial[-1], new.best_by_trial[-1]
        changes.append(b / a - 1)
        print(
            f"| {old.label} | {old.seed} | {fmt(old.bound)} | {fmt(a)} | {a / old.bound:.3f} | {fmt(b)} | {b / new.bound:.3f} | {b / a - 1:+.1%} "
            f"| {fmt(new.best_at(new.seeded))} |"
        )
    print(
        f"\nmean change {statistics.mean(changes):+.2%}, worst {max(changes):+.2%}, best {min(changes):+.2%}"
    )
    # The cases: where today's tuner stops between 1.03x and 1.32x the bound.
    named = [
        change
        for change, (old, _) in zip(changes, rows)
        if 1.03 <= old.best_by_trial[-1] / old.bound <= 1.32
    ]
    if named:
        print(
            f"where today's tuner ends at 1.03x-1.32x the bound ({len(named)} cases): mean change "
            f"{statistics.mean(named):+.2%}, worst {max(named):+.2%}"
        )
    print("\n" + winners([new for _, new in rows]))


def transfer_table(args: argparse.Namespace) -> None:
    """Transfer: donors tuned first (studies in their default storage in a scratch folder), then each target with
    and without --transfer; trials to 1.02x and 1.01x the bound, best at 50 and 150 trials."""
    donors = (("128x128x128", "slots=64"), ("128x128x128", "slots=32"))
    targets = (
        ("128x128x128", "slots=48"),
        ("160x128x128", "slots=64"),
        ("128x128x128", "slots=32,dma_setup=8"),
    )
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch)
        for shape, overrides in donors:
            run_once("guided", parse_shape(shape), overrides, 0, 300, results)
        print(
            "| target | seed | transfer | trials to 1.02x | trials to 1.01x | best at 50 | best at 150 | seeds from |"
        )
        print("|" + "---|" * 8)
        for shape, overrides in targets:
            for seed in args.seeds:
                for transfer in (False, True):
                    # Only the donors are in the folder: a target's own runs are not kept.
                    run = run_once(
                        "guided",
                        parse_shape(shape),
                        overrides,
                        seed,
                        150,
                        results if transfer else None,
                        transfer,
                    )
                    shutil.rmtree(results / run.study, ignore_errors=True)
                    print(
                        f"| {run.label} | {seed} | {'yes' if transfer else 'no'} | {fmt(run.first(1.02))} | {fmt(run.first(1.01))} | "
                        f"{fmt(run.best_at(50))} | {fmt(run.best_at(150))} | {'; '.join(run.donors) or '-'} |",
                        flush=True,
                    )


def main(argv: list[str] | None = None) -> int:
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    quick = {"slots": "64", "seeds": "0", "trials": 20, "configs": "guided,random"}
    parser = harness.parser(__doc__, quick=quick)
    parser.add_argument("--shape", default="128x128x128")
    parser.add_argument("--slots", default="64,32,16", help="scratchpad sizes (default 64,32,16)")
    parser.add_argument("--machine", default="", help="other machine parameters, e.g. dma_setup=4")
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--configs", default="guided,tpe,random", help=f"of {', '.join(CONFIGS)}")
    parser.add_argument(
        "--cases", action="store_true", help="the other shapes and machines instead (goal 3)"
    )
    parser.add_argument(
        "--transfer",
        action="store_true",
        help="transfer from earlier studies instead: with and without --transfer",
    )
    parser.add_argument(
        "--case",
        action="append",
        type=lambda text: tuple(text.split(":", 1)),
        metavar="SHAPE:MACHINE",
        help="--cases: this case instead of the built-in list (repeatable), e.g. 96x200x40:slots=16,dma_setup=4",
    )
    parser.add_argument(
        "--all-cases",
        action="store_true",
        help="--cases: the built-in list and MORE_CASES (33 in all)",
    )
    parser.add_argument(
        "--old-trials", type=int, default=1000, help="--cases: trials of today's tuner"
    )
    parser.add_argument(
        "--new-trials", type=int, default=300, help="--cases: trials of the default"
    )
    args = parser.parse_args(argv)
    args.slots = [int(s) for s in args.slots.split(",") if s]
    args.seeds = [int(s) for s in args.seeds.split(",") if s]
    args.configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in args.configs if c not in CONFIGS]
    if unknown:
        parser.error(f"unknown configuration(s) {', '.join(unknown)} (known: {', '.join(CONFIGS)})")
    if args.transfer:
        transfer_table(args)
    elif args.cases:
        cases_table(args)
    else:
        slots_table(args)
    return 0


if __name__ == "__main__":
    harness.run(main)
