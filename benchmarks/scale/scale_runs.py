"""The parts of benchmarks/scale/bench_scale.py that run whole studies and peers: default runs of the
command line at LLM scale, their convergence, ZigZag's per-layer search on the same layers, and
the lower bounds at 16 and 32 slots against the default schedule's cycles."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import ROOT

CHECKPOINTS = (10, 50, 100, 200, 300, 500, 1000)
COUNTS = ("cycles", "busy", "loads", "stores", "products")


def run_child(argv: list[str], log: Path) -> dict[str, object]:
    """One child process: its exit code, wall time, CPU time and peak RSS (os.wait4: this
    child's own resource usage, not the maximum over every child so far)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with log.open("w") as out:
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    return {
        "returncode": child.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,  # Linux reports kilobytes
        "output": log.read_text().splitlines()[-40:],
    }


def default_run(shape: str, out: Path, extra: tuple[str, ...] = ()) -> dict[str, object]:
    """`python -m autotune --shape SHAPE` in a fresh results folder, then `plot` on its study;
    the winner read back from the leaderboard and the best-so-far curve from the journal."""
    import autotune

    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        results = Path(tmp)
        argv = ["-m", "autotune", "--shape", shape, *extra, "--results", str(results)]
        row: dict[str, object] = {"shape": shape, "command": "python " + " ".join(argv[:-2])}
        row["tune"] = run_child([sys.executable, *argv], out / f"tune_{shape}.log")
        studies = [p.name for p in results.iterdir() if p.is_dir()]
        if row["tune"]["returncode"] != 0 or len(studies) != 1:  # type: ignore[index]
            row["error"] = "the run failed or wrote no single study"
            return row
        study = row["study"] = studies[0]
        board = autotune.load(results / study)
        best = board.sort_values("rank").iloc[0] if "rank" in board else board.iloc[0]
        for key in ("cycles", "lower_bound", "ratio_to_bound", "verification", "timing"):
            row[key] = best[key].item() if hasattr(best[key], "item") else best[key]
        row["verification_detail"] = str(best.get("verification_detail", ""))
        plot_argv = [sys.executable, "-m", "autotune", "plot", study, "--results", str(results)]
        row["plot"] = run_child(plot_argv, out / f"plot_{shape}.log")
        plots = results / study / "plots"
        row["plots_written"] = sorted(p.name for p in plots.glob("*.png"))
        if (plots / "history.png").exists():
            shutil.copy(plots / "history.png", out / f"history_{shape}.png")
        row["convergence"] = convergence(results, study, float(row["lower_bound"]))  # type: ignore[arg-type]
    return row


def convergence(results: Path, study: str, bound: float) -> dict[str, object]:
    """The best feasible cycles so far, over the trials in the order they were numbered, as a
    ratio to the lower bound; at the checkpoints and the trial that first reached the best."""
    from autotune.record import TrialRecord
    from autotune.storage import local_storage, read_study

    found = read_study(local_storage(results, study), study)  # type: ignore[arg-type]
    curve: list[float] = []
    best = float("inf")
    timed: dict[str, list[float]] = {}  # per timing method: trials, their seconds
    for trial in sorted(found.trials, key=lambda t: t.number):  # type: ignore[union-attr]
        entry = TrialRecord.of_trial(trial)
        if entry is not None and entry.cycles is not None:
            best = min(best, float(entry.cycles))
        if entry is not None and trial.datetime_complete is not None:
            counts = timed.setdefault(entry.timing or "untimed", [0, 0.0])
            counts[0] += 1
            counts[1] += (trial.datetime_complete - trial.datetime_start).total_seconds()
        curve.append(best / bound)
    final = curve[-1] if curve else float("inf")
    return {
        "trials": len(curve),
        "at": {n: curve[n - 1] for n in CHECKPOINTS if n <= len(curve)},
        "timed": timed,
        "first_within": {
            str(limit): next((i + 1 for i, r in enumerate(curve) if r <= limit), None)
            for limit in (1.1, 1.01, 1.001)
        },
        "first_at_best": next((i + 1 for i, r in enumerate(curve) if r == final), None),
        "curve": curve,
    }


def plot_convergence(runs: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for run in runs:
        curve = run.get("convergence", {}).get("curve")  # type: ignore[union-attr]
        if curve:
            ax.semilogx(range(1, len(curve) + 1), curve, label=str(run["shape"]))
    ax.set_xlabel("trial")
    ax.set_ylabel("best cycles so far / lower bound")
    ax.set_title("Default runs (64 slots, guided sampler, seed 0)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def zigzag_layer(python: str | None, layer: dict[str, object], out: Path) -> dict[str, object]:
    """ZigZag's search and one mapping on one layer (benchmarks/peers/zigzag_search_runner.py under
    ZigZag's own Python); a row that says so when ZigZag is not installed there."""
    if python is None or shutil.which(python) is None:
        return {"installed": False, "reason": f"no ZigZag Python ({python or 'none given'})"}
    runner = ROOT / "benchmarks" / "peers" / "zigzag_search_runner.py"
    done = subprocess.run(
        [python, str(runner)], input=json.dumps([layer]), capture_output=True, text=True
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        (out / f"zigzag_{layer['id']}.log").write_text(done.stderr)
        return {"installed": False, "reason": f"the ZigZag runner failed: {tail}"}
    found = json.loads(done.stdout)
    return {"installed": True, "version": found["zigzag_version"], **found["results"][0]}


def lower_bound_rows(cases: tuple[tuple[int, int, int, int], ...], repeats: int) -> list[dict]:
    """For each (m, k, n, slots): the lower bound's CPU time from cold caches, the default
    schedule timed in full and periodically, and whether the bound is at most the cycles."""
    from simcore import Machine, Shape
    from simcore.ga1 import engine, lower_bounds
    from simcore.ga1.generator import default_params

    rows = []
    for m, k, n, slots in cases:
        shape, machine = Shape(m, k, n), Machine(slots=slots)
        bound_s = []
        for _ in range(repeats):
            lower_bounds.forget_bounds()  # a cold bound, as a new shape computes it
            started = time.process_time()
            bound = lower_bounds.lower_bound(shape, machine)
            bound_s.append(time.process_time() - started)
        generator = engine.General(shape, machine, default_params(shape, machine))
        periodic = generator.timing()  # loads the kernels before anything is timed
        full_s, periodic_s = [], []
        for _ in range(repeats):
            started = time.process_time()
            full = generator.timing("full")
            full_s.append(time.process_time() - started)
            started = time.process_time()
            periodic = generator.timing()
            periodic_s.append(time.process_time() - started)
        rows.append(
            {
                "shape": f"{m}x{k}x{n}",
                "slots": slots,
                "products": generator.products,
                "lower_bound": bound,
                "bound_ms": 1e3 * statistics.median(bound_s),
                "cycles_full": full.cycles,
                "cycles_periodic": periodic.cycles,
                "method": periodic.method,
                "full_s": statistics.median(full_s),
                "periodic_ms": 1e3 * statistics.median(periodic_s),
                "bound_holds": bound <= full.cycles and bound <= periodic.cycles,
                "methods_agree": all(getattr(full, k) == getattr(periodic, k) for k in COUNTS),
                "ratio": full.cycles / bound,
            }
        )
    return rows
