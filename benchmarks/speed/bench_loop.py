"""The trial loop's CPU, side by side: the default study (128x128x128, 64 slots, seed 0) run start
to finish by

  * `sqlite`: `--storage sqlite:///...` (Optuna's RDB path, kept for older studies) and
    `--sampler tpe --space chapter,general`;
  * `journal-tpe`: the default storage, the journal file, and the same TPE search, so the two
    run the same trials and their difference is the storage's alone;
  * `journal`: the study as a user runs it: the journal file and the default sampler (`guided`)
    and spaces, whose trials differ.

Each run is a child process, the configurations interleaved (round by round), after one short
untimed run of each (the compiled engine's kernels compiled or loaded into numba's cache). A
child times every call by part, exclusively (a part's time excludes the parts it calls):
`sampler` (the sampler's methods), `storage` (Optuna's storage classes and the journal backend),
`generation` (the oracle's evaluation: the compiled engine times a program as it generates it)
and `other` (everything else in the optimise loop: Optuna's trial machinery, the objective's
bookkeeping, the budget). It prints CPU ms per trial by part, over the whole run and over trials
900-999, the whole run's CPU (imports, seeding, leaderboard and verification included) and wall
time, the best cycles, whether the TPE configurations ran the same trials, and the ratio of CPU.

Usage: python -m benchmarks.speed.bench_loop [--trials 1000] [--rounds 1] [--only sqlite,journal-tpe,journal]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT

CONFIGS = ("sqlite", "journal-tpe", "journal")
TPE_CONFIGS = ("sqlite", "journal-tpe")  # the same sampler, so the same trials
PARTS = ("sampler", "storage", "generation", "other")
WINDOW = (900, 1000)
WARM_UP_TRIALS = (
    60  # a short untimed run per configuration first: numba's on-disk cache of the engine filled
)


# --- the child: one run, timed by part ---------------------------------------------------------


class PartClock:
    """Exclusive CPU time of the main thread by part: a call's time, less the timed calls it makes
    (an RDB storage's heartbeat thread counts in the whole run's CPU only)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self._inner: list[float] = []

    def wrap(self, part: str, function):  # type: ignore[no-untyped-def]
        main = threading.main_thread()

        @functools.wraps(function)
        def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
            if threading.current_thread() is not main:
                return function(*args, **kwargs)
            started = time.thread_time()
            self._inner.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.thread_time() - started
                self.spent[part] = self.spent.get(part, 0.0) + elapsed - self._inner.pop()
                if self._inner:
                    self._inner[-1] += elapsed

        return timed

    def patch(self, part: str, cls: type, names: tuple[str, ...]) -> None:
        for name in names:
            if name in vars(cls) and callable(vars(cls)[name]):
                setattr(cls, name, self.wrap(part, vars(cls)[name]))


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def _instrument(clock: PartClock) -> None:
    import optuna

    storage_methods = tuple(
        name for name in vars(optuna.storages.BaseStorage) if not name.startswith("__")
    ) + ("record_heartbeat", "_get_stale_trial_ids", "get_heartbeat_interval")
    for cls in _subclasses(optuna.storages.BaseStorage):  # Optuna's storages and its RDB cache
        clock.patch("storage", cls, storage_methods)
    from autotune.oracles.ga1 import GA1Oracle
    from autotune.search import guided  # noqa: F401  (its sampler is timed as `sampler` too)
    from autotune.storage.journal import JournalFile

    clock.patch("storage", JournalFile, ("append_logs", "acquire", "release"))
    samplers = [optuna.samplers.BaseSampler]
    while samplers:
        cls = samplers.pop()
        clock.patch(
            "sampler",
            cls,
            (
                "infer_relative_search_space",
                "sample_relative",
                "sample_independent",
                "before_trial",
                "after_trial",
            ),
        )
        samplers.extend(cls.__subclasses__())
    clock.patch("generation", GA1Oracle, ("evaluate",))  # the compiled engine times as it generates


def child(args: argparse.Namespace) -> None:
    started, wall = time.process_time(), time.perf_counter()
    from autotune.cli.quiet import quiet_libraries as _quiet_libraries
    from autotune.run import objective, pipeline
    from autotune.run.plan import RunPlan
    from simcore.ga1.machine import Machine
    from simcore.shape import Shape

    _quiet_libraries()
    clock = PartClock()
    _instrument(clock)
    snapshots: list[tuple[float, dict[str, float]]] = []  # at the start of each objective call
    call = objective.Objective.__call__

    def observed(self, trial):  # type: ignore[no-untyped-def]
        snapshots.append((time.thread_time(), dict(clock.spent)))
        return call(self, trial)

    objective.Objective.__call__ = observed
    trials: list[str] = []
    rank = pipeline.rank

    def finished(plan, study, *rest, **options):  # type: ignore[no-untyped-def]
        trials.extend(
            json.dumps([t.number, t.state.name, t.params, t.values], sort_keys=True)
            for t in study.trials
        )
        return rank(plan, study, *rest, **options)

    pipeline.rank = finished
    optimise = pipeline.optimise
    loop: dict[
        str, float
    ] = {}  # by part, within the optimise loop only (not opening, seeding, ranking)

    def timed_optimise(*rest, **options):  # type: ignore[no-untyped-def]
        before, spent = time.thread_time(), dict(clock.spent)
        optimise(*rest, **options)
        loop["all"] = loop.get("all", 0.0) + time.thread_time() - before
        for part, value in clock.spent.items():
            loop[part] = loop.get(part, 0.0) + value - spent.get(part, 0.0)

    pipeline.optimise = timed_optimise
    results = Path(args.results)
    storage = f"sqlite:///{results / 'bench.db'}" if args.storage == "sqlite" else None
    chosen = {"sampler": args.sampler} if args.sampler else {}  # older code: its own default (TPE)
    spaces = {"spaces": args.spaces} if args.spaces else {}  # older code: its own default
    outcome = pipeline.run(
        RunPlan.of_shape(Shape(128, 128, 128), Machine(slots=64), **spaces),
        pipeline.RunOptions(
            trials=args.trials,
            seed=0,
            study="bench",
            storage=storage,
            results=results,
            progress=False,
            **chosen,
        ),
    )
    total, wall = time.process_time() - started, time.perf_counter() - wall
    parts = {p: loop.get(p, 0.0) for p in PARTS if p != "other"}
    parts["other"] = loop["all"] - sum(parts.values())
    window = {}
    low, high = WINDOW
    if len(snapshots) > high - 1:
        (t1, a1), (t2, a2) = snapshots[low], snapshots[high - 1]
        window = {p: a2.get(p, 0.0) - a1.get(p, 0.0) for p in PARTS if p != "other"}
        window["other"] = (t2 - t1) - sum(window.values())
        window["trials"] = high - 1 - low
    frame = outcome.studies[0].frame
    print(
        json.dumps(
            {
                "parts": parts,
                "window": window,
                "trials": len(snapshots),
                "total": total,
                "wall": wall,
                "best": int(frame["cycles"].iloc[0]),
                "history": hashlib.sha256("\n".join(trials).encode()).hexdigest(),
            }
        )
    )


# --- the parent: interleaved runs and the table ------------------------------------------------


def run_one(config: str, code: Path, trials: int) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"bench-loop-{config}-") as results:
        env = {**os.environ, "PYTHONPATH": str(code)}
        command = [
            sys.executable,
            "-m",
            "benchmarks.speed.bench_loop",
            "--child",
            "--trials",
            str(trials),
            "--results",
            results,
            "--storage",
            "sqlite" if config == "sqlite" else "default",
        ]
        if config in ("sqlite", "journal-tpe"):
            command += [
                "--sampler",
                "tpe",
                "--spaces",
                "chapter,general",
            ]  # the flat TPE
        done = subprocess.run(
            command, cwd=results, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"{config} run failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def table(found: dict[str, list[dict]], trials: int) -> str:
    names = list(found)
    mean = lambda config, f: sum(f(r) for r in found[config]) / len(found[config])  # noqa: E731
    lines = [
        f"CPU ms per trial, mean of {len(found[names[0]])} run(s) each; whole run | trials {WINDOW[0]}-{WINDOW[1] - 1}",
        f"{'part':<12}" + "".join(f"{n:>22}" for n in names),
    ]
    for part in (*PARTS, "total"):
        cells = []
        for config in names:
            whole = mean(
                config,
                lambda r: (
                    (
                        sum(r["parts"].get(p, 0.0) for p in PARTS)
                        if part == "total"
                        else r["parts"].get(part, 0.0)
                    )
                    / r["trials"]
                    * 1000
                ),
            )
            late = mean(
                config,
                lambda r: (
                    (
                        (
                            sum(r["window"].get(p, 0.0) for p in PARTS)
                            if part == "total"
                            else r["window"].get(part, 0.0)
                        )
                        / r["window"]["trials"]
                        * 1000
                    )
                    if r["window"]
                    else float("nan")
                ),
            )
            cells.append(f"{whole:9.1f} | {late:6.1f}")
        lines.append(f"{part:<12}" + "".join(f"{c:>22}" for c in cells))
    overhead = {
        c: mean(
            c,
            lambda r: (
                sum(r["parts"].get(p, 0.0) for p in PARTS if p != "generation") / r["trials"] * 1000
            ),
        )
        for c in names
    }
    lines.append(
        f"{'overhead':<12}"
        + "".join(f"{overhead[c]:>20.1f}  " for c in names)
        + "  (all but generation)"
    )
    lines.append(
        f"{'run CPU s':<12}" + "".join(f"{mean(c, lambda r: r['total']):>20.1f}  " for c in names)
    )
    lines.append(
        f"{'run wall s':<12}" + "".join(f"{mean(c, lambda r: r['wall']):>20.1f}  " for c in names)
    )
    lines.append(
        f"{'best cycles':<12}"
        + "".join(f"{'/'.join(str(r['best']) for r in found[c]):>20}  " for c in names)
    )
    histories = {
        r["history"] for config, runs in found.items() if config in TPE_CONFIGS for r in runs
    }
    if histories:
        lines.append(
            f"same {trials} trials (number, state, parameters, values) in every TPE run: {'yes' if len(histories) == 1 else 'NO'}"
        )
    for old, new in (("sqlite", "journal-tpe"), ("journal-tpe", "journal")):
        if new in found and old in found:
            lines.append(
                f"whole-run CPU, {old} / {new}: {mean(old, lambda r: r['total']) / mean(new, lambda r: r['total']):.2f}x"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"trials": 10, "only": "journal"})
    parser.add_argument(
        "--trials",
        type=int,
        default=1000,
        help="trials per run (default 1000; fewer for a quick look)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="runs of each configuration, interleaved (default 1)"
    )
    parser.add_argument(
        "--only",
        default=",".join(CONFIGS),
        help=f"configurations to run (default {','.join(CONFIGS)})",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--results", help=argparse.SUPPRESS)
    parser.add_argument("--storage", help=argparse.SUPPRESS)
    parser.add_argument("--sampler", help=argparse.SUPPRESS)
    parser.add_argument("--spaces", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    configs = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown:
        parser.error(f"unknown configuration {unknown[0]!r} (known: {', '.join(CONFIGS)})")
    found: dict[str, list[dict]] = {c: [] for c in configs}
    for config in configs:  # compile (or load) the GA-1 engine's kernels, untimed
        print(f"warm-up: {config} ...", file=sys.stderr, flush=True)
        run_one(config, ROOT, WARM_UP_TRIALS)
    for round_number in range(args.rounds):
        for config in configs:
            print(f"round {round_number + 1}: {config} ...", file=sys.stderr, flush=True)
            found[config].append(run_one(config, ROOT, args.trials))
    print(
        f"default study 128x128x128, 64 slots, seed 0, {args.trials} trials; "
        "journal runs the default sampler (guided), the others TPE"
    )
    print(table(found, args.trials))
    return 0


if __name__ == "__main__":
    harness.run(main)
