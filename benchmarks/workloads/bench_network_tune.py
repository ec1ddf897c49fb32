"""A whole bundled network tuned end to end: every GEMM study of its graph tuned with the
default trials (`tune --workload NAME`), then every operation timed with the run's winners
(`ops NAME --oracle ORACLE --tuned DIR`: the products by the tuned schedules, the vector
operations by the best of their whole plan or schedule domains). Each step is a fresh
`python -m autotune` process in an empty results folder; the figure is the CPU time of both
(user + system of the processes, resource.getrusage), against the goal of 10 minutes.

Usage: python -m benchmarks.workloads.bench_network_tune [--network gpt2] [--trials N]
       [--oracles ga1,systolic]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT

ORACLES = {"ga1": [], "systolic": ["--arch", "tpuv4i"]}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def autotune(argv: list[str], folder: Path) -> tuple[float, str]:
    """(CPU seconds, standard output) of one `python -m autotune` process."""
    before = _cpu()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "autotune", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"autotune {' '.join(argv)}: {done.stderr.strip()[-400:]}")
    return _cpu() - before, done.stdout


def end_to_end(network: str, oracle: str, trials: int | None, tmp: Path) -> dict[str, object]:
    folder = tmp / oracle
    folder.mkdir()
    machine = ORACLES[oracle]
    extra = ["--trials", str(trials)] if trials else []
    tune_argv = ["tune", "--workload", network, *machine, *extra, "--results", "results"]
    if oracle != "ga1":
        tune_argv += ["--oracle", oracle]
    tune_cpu, _out = autotune(tune_argv, folder)
    (run,) = [p for p in (folder / "results").iterdir() if (p / "workload.parquet").is_file()]
    ops_argv = ["ops", network, "--oracle", oracle, *machine, "--json"]
    ops_cpu, tuned = autotune([*ops_argv, "--tuned", str(run)], folder)
    _cpu_plain, plain = autotune(ops_argv, folder)
    tuned_report, plain_report = json.loads(tuned), json.loads(plain)
    studies = sum(1 for p in (folder / "results").iterdir() if p.is_dir() and p != run)
    return {
        "command": " ".join(tune_argv) + f" && {' '.join(ops_argv[:-1])} --tuned DIR",
        "studies": studies,
        "tune_cpu": tune_cpu,
        "ops_cpu": ops_cpu,
        "tuned_cycles": tuned_report["total_cycles"],
        "plain_cycles": plain_report["total_cycles"],
        "non_gemm_share": tuned_report["non_gemm_share"],
        "untimed": len(tuned_report["untimed"]),
    }


def main_bench(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"trials": 2, "oracles": "ga1"})
    parser.add_argument("--network", default="gpt2")
    parser.add_argument("--trials", type=int, default=None, help="default: tune's own")
    parser.add_argument("--oracles", default="ga1,systolic")
    args = parser.parse_args(argv)
    print(
        "| oracle | command | studies | tune CPU s | ops CPU s | minutes | cycles (tuned) | "
        "cycles (untuned products) | non-GEMM share | untimed |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for oracle in args.oracles.split(","):
            r = end_to_end(args.network, oracle, args.trials, Path(tmp))
            minutes = (float(r["tune_cpu"]) + float(r["ops_cpu"])) / 60  # type: ignore[arg-type]
            print(
                f"| {oracle} | `{r['command']}` | {r['studies']} | {r['tune_cpu']:.1f} | "
                f"{r['ops_cpu']:.1f} | {minutes:.2f} | {r['tuned_cycles']:,.0f} | "
                f"{r['plain_cycles']:,.0f} | {r['non_gemm_share']:.2%} | {r['untimed']} |"
            )
    return 0


if __name__ == "__main__":
    harness.run(main_bench)
