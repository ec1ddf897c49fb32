"""Cycle-exact timing at LLM scale: the periodic method's cost of one evaluation from 512^3 to
16384^3, and its exactness against full simulation on random cases.

(a) One evaluation (engine.General(...).timing(), the periodic method) of the general family's
    default schedule (simcore.ga1.generator.default_params) on GA-1 with 64 slots at 512^3,
    1024^3, 2048^3, 4096^3, 4096x4096x11008 (LLaMA-7B's feed-forward product at a 4096-token
    prefill), 8192^3 and 16384^3: CPU time (time.process_time), the median of --repeats, the
    shapes interleaved round by round; with the products, the products simulated, the signatures
    taken and the jumps. Full simulation (timing("full")) is timed beside it up to --full-up-to
    products, and agrees in every count. A table, and a log-log plot of time against products.
(b) A differential run: --cases random cases (shapes up to 1024 a side, half with sides drawn
    log-uniformly from 1, half uniformly from 64; at most 2^21 tile products; T of 4, 8 or 16;
    random machines; every family: general blocks and rotating windows, strips, the chapter's
    blocked and k-outermost) timed both ways; the differences in cycles, busy times, loads,
    stores and products (0 expected), and how many were timed in full (no period found: mostly
    the smallest shapes, whose loops are too short to repeat), by family and by size.

(c) Default runs, each a child process in a fresh temporary --results folder:
    `python -m autotune --shape SHAPE --timeout SECONDS` (--run-timeout, 900 by default: the
    trials started within it are ranked and verified) for LLaMA-7B's layers at a 4096-token prefill (4096^3,
    4096x4096x11008, 4096x11008x4096), GPT-2's MLP at 1024 tokens (1024x768x3072) and 16384^3:
    wall time, CPU time and peak RSS of the child (os.wait4), the winner read back with
    autotune.load (cycles, lower bound, ratio, verification label, timing method), then
    `python -m autotune plot STUDY --results DIR` and the pictures it wrote; and the
    convergence: the best cycles so far over the lower bound after 10 ... 1000 trials, read
    from the study's journal (a table and bench_scale_convergence.png).
(d) ZigZag side by side, right after each default run, where --zigzag-python names a Python
    with zigzag-dse (the `bench` extra): its per-layer mapping search and one mapping of the
    same layer (benchmarks/peers/zigzag_search_runner.py says how), and our run's time over its
    search's, in wall and CPU time. Without ZigZag the rows say so and the rest runs.
(e) Lower bounds at scale: at 16 and 32 slots, 2048^3 and 1024x2048x4096, lower_bound's CPU
    time from cold caches, and the default schedule timed in full and periodically: both
    equal, and not below the bound.
Then every goal measured, beside its goal.

Usage: python -m benchmarks.scale.bench_scale [--repeats N] [--cases N] [--seed S] [--out DIR]
           [--full-up-to PRODUCTS] [--zigzag-python PYTHON] [--quick]
           [--skip-scale] [--skip-differential] [--skip-runs] [--skip-bounds]
--quick: every part, small (3 shapes to 512^3, 20 cases, one 40-trial run, 2 bound checks).
Writes DIR/bench_scale.json, bench_scale.png, bench_scale_convergence.png, history_SHAPE.png
and the runs' logs (DIR: results/bench_scale by default).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
import warnings
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT
from benchmarks.scale import scale_report, scale_runs
from simcore import Machine, Shape
from simcore.ga1 import engine
from simcore.ga1.engine import methods
from simcore.ga1.engine.periodic import JUMPS, SIGNATURES
from simcore.ga1.generator import GeneralParams, default_params, slots_needed
from simcore.ga1.generator.order import (
    BLOCK_ORDERS,
    INNER_ORDERS,
    K_DIRECTIONS,
    PARTITIONS,
    STRUCTURES,
)
from simcore.ga1.generator.strips import STRIP_AXES, STRIP_ORDERS, StripParams
from simcore.ga1.schedules import ScheduleError

MACHINE = Machine(slots=64)
SHAPES = (
    (512, 512, 512),
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (4096, 4096, 11008),
    (8192, 8192, 8192),
    (16384, 16384, 16384),
)
QUICK_SHAPES = ((128, 128, 128), (256, 256, 256), (512, 512, 512))
# The layers run by default and searched by ZigZag: LLaMA-7B's at a 4096-token prefill, GPT-2's
# MLP at 1024 tokens, and the largest cube.
LAYERS = (
    ("4096x4096x11008", "LLaMA-7B feed-forward up and gate"),
    ("16384x16384x16384", "the largest cube"),
    ("4096x11008x4096", "LLaMA-7B feed-forward down"),
    ("1024x768x3072", "GPT-2 MLP up"),
    ("4096x4096x4096", "LLaMA-7B attention projection (q, k, v, o)"),
)
QUICK_LAYERS = (("128x128x256", "a small product"),)
BOUNDS = tuple(
    (*dims, slots) for slots in (16, 32) for dims in ((2048, 2048, 2048), (1024, 2048, 4096))
)
QUICK_BOUNDS = ((128, 128, 128, 16), (64, 128, 256, 32))
KEYS = ("cycles", "busy", "loads", "stores", "products")
SIZE_BUCKETS = (
    ("products <= 1e3", 10**3),
    ("products <= 1e5", 10**5),
    ("products <= 2^21", 1 << 21),
)


def cpu(call: object) -> float:
    started = time.process_time()
    call()  # type: ignore[operator]
    return time.process_time() - started


def scale_rows(
    shapes: tuple[tuple[int, int, int], ...], repeats: int, full_up_to: int
) -> list[dict[str, object]]:
    """Part (a): every shape's evaluation, interleaved round by round."""
    generators = {
        dims: engine.General(Shape(*dims), MACHINE, default_params(Shape(*dims), MACHINE))
        for dims in shapes
    }
    rows: dict[tuple[int, int, int], dict[str, object]] = {}
    for dims, generator in generators.items():
        timing = generator.timing()  # also loads (or compiles) the kernels
        stats = methods.LAST_STATS.copy()
        row: dict[str, object] = {
            "shape": "x".join(map(str, dims)),
            "products": generator.products,
            "cycles": timing.cycles,
            "method": timing.method,
            "simulated": timing.simulated,
            "signatures": int(stats[SIGNATURES]),
            "jumps": [int(v) for v in stats[JUMPS : JUMPS + 3]],
            "params": generator.params.as_dict(),
            "seconds": [],
            "full_seconds": [],
        }
        if generator.products <= full_up_to:
            full = generator.timing("full")
            if [getattr(full, k) for k in KEYS] != [getattr(timing, k) for k in KEYS]:
                raise SystemExit(
                    f"{dims}: the periodic timing disagrees with full simulation: {timing} != {full}"
                )
            row["full_agrees"] = True
        rows[dims] = row
    for _ in range(repeats):
        for dims, generator in generators.items():
            rows[dims]["seconds"].append(cpu(generator.timing))  # type: ignore[attr-defined]
            if generator.products <= full_up_to:
                rows[dims]["full_seconds"].append(cpu(lambda g=generator: g.timing("full")))  # type: ignore[attr-defined]
    for row in rows.values():
        row["ms"] = 1e3 * statistics.median(row["seconds"])  # type: ignore[arg-type]
        row["full_ms"] = (
            1e3 * statistics.median(row["full_seconds"]) if row["full_seconds"] else None
        )  # type: ignore[arg-type]
    return list(rows.values())


def random_case(rng: random.Random) -> engine.Generator:
    """One random schedule of a random family on a random machine and shape (at most 2**21 tile products)."""
    while True:
        T = rng.choice([4, 8, 16])
        if (
            rng.random() < 0.5
        ):  # sides from 1 to 1024, small ones as likely as large ones (edges, single tiles)
            shape = Shape(*(round(2 ** rng.uniform(0, 10)) for _ in range(3)))
        else:  # large shapes: the steady states the method is for
            shape = Shape(*(rng.randint(64, 1024) for _ in range(3)))
        Mt, Kt, Nt = shape.tiles(T)
        if Mt * Kt * Nt <= 1 << 21:
            break
    base = Machine(
        T=T,
        dma_setup=rng.randint(0, 20),
        dma_words_per_cycle=rng.choice([1, 4, 16, 64]),
        mxu_cycles=rng.randint(1, 16),
        mxu_fill=rng.randint(0, 12),
    )
    family = rng.choice(["general", "general", "strips", "blocked", "kouter"])
    if family == "general":
        params = GeneralParams(
            bi=rng.randint(1, 9),
            bj=rng.randint(1, 9),
            partition=rng.choice(PARTITIONS),
            block_order=rng.choice(BLOCK_ORDERS),
            serpentine=rng.random() < 0.5,
            k_direction=rng.choice(K_DIRECTIONS),
            inner=rng.choice(INNER_ORDERS),
            tail=rng.randint(0, 6),
            lookahead=rng.choice([0, 1, 4, 16, 40, 64]),
            store_first=rng.random() < 0.5,
            structure=rng.choice(STRUCTURES) if rng.random() < 0.2 else "blocks",
            ramp=rng.randint(0, 8),
        )
        slots = slots_needed(shape, base, params) + rng.choice([0, 1, 3, 10, 30])
        return engine.General(shape, base.replace(slots=slots), params)
    if family == "strips":
        strip = StripParams(
            axis=rng.choice(STRIP_AXES),
            reserve=rng.randint(1, 8),
            strip_order=rng.choice(STRIP_ORDERS),
            first_reverse=rng.random() < 0.5,
            partition=rng.choice(PARTITIONS),
            split=rng.randint(0, 6),
            flip=rng.random() < 0.5,
            tail=rng.randint(0, 6),
            lookahead=rng.choice([0, 1, 4, 16, 40, 64]),
            store_first=rng.random() < 0.5,
            protect=rng.randint(0, 64),
        )
        return engine.Strips(shape, base.replace(slots=rng.randint(6, 64)), strip)
    buffers = rng.randint(1, 3)
    if family == "blocked":
        bi, bj = rng.randint(1, 8), rng.randint(1, 8)
        return engine.Blocked(
            shape,
            base.replace(slots=bi * bj + buffers * (bi + bj)),
            bi,
            bj,
            buffers,
            rng.choice(["row", "col"]),
        )
    return engine.KOuter(shape, base.replace(slots=3 * buffers), buffers)


def differential(cases: int, seed: int) -> dict[str, object]:
    """Part (b): random cases timed both ways."""
    rng, per_family = random.Random(seed), {}  # type: ignore[var-annotated]
    differences, examples, periodic_s, full_s = 0, [], 0.0, 0.0
    done = 0
    while done < cases:
        generator = random_case(rng)
        try:
            started = time.process_time()
            full = generator.timing("full")
            full_s += time.process_time() - started
        except ScheduleError:
            continue  # the compiler found the working set too big: no program to time
        with warnings.catch_warnings():
            warnings.simplefilter(
                "error", RuntimeWarning
            )  # a rebuilt state that disagreed is a failure here
            started = time.process_time()
            periodic = generator.timing()
            periodic_s += time.process_time() - started
        done += 1
        name = (
            type(generator).__name__
            if not isinstance(generator, engine.General)
            else f"General/{generator.params.structure}"
        )
        bucket = next(label for label, top in SIZE_BUCKETS if generator.products <= top)
        for key in (name, bucket):
            counts = per_family.setdefault(
                key, {"cases": 0, "periodic": 0, "full": 0, "differences": 0}
            )
            counts["cases"] += 1
            counts[periodic.method] += 1
        if [getattr(full, k) for k in KEYS] != [getattr(periodic, k) for k in KEYS]:
            differences += 1
            per_family[name]["differences"] += 1
            per_family[bucket]["differences"] += 1
            examples.append(f"{name} {generator.shape} {generator.machine}: {periodic} != {full}")
    fallbacks = sum(c["full"] for key, c in per_family.items() if not key.startswith("products"))
    return {
        "cases": done,
        "seed": seed,
        "differences": differences,
        "fallbacks": fallbacks,
        "fallback_rate": fallbacks / max(done, 1),
        "by_family": per_family,
        "examples": examples[:10],
        "periodic_seconds": periodic_s,
        "full_seconds": full_s,
    }


def plot(rows: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    products = [r["products"] for r in rows]
    ax.loglog(products, [r["ms"] for r in rows], "o-", label="periodic method (exact)")
    measured = [(r["products"], r["full_ms"]) for r in rows if r["full_ms"] is not None]
    if measured:
        ax.loglog(*zip(*measured), "s--", label="full simulation")
    for row in rows:
        ax.annotate(
            str(row["shape"]),
            (row["products"], row["ms"]),
            textcoords="offset points",
            xytext=(4, 6),
            fontsize=7,
        )
    ax.margins(x=0.2)  # room for the largest shape's label
    ax.set_xlabel("tile products per evaluation")
    ax.set_ylabel("CPU ms per evaluation (median)")
    ax.set_title("GA-1, 64 slots, general family default schedule")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def runs_and_zigzag(
    layers: tuple[tuple[str, str], ...],
    zigzag_python: str | None,
    out: Path,
    extra: tuple[str, ...],
) -> list[dict[str, object]]:
    """Parts (c) and (d), side by side: each layer's default run, then ZigZag's search of it."""
    runs = []
    for shape, name in layers:
        run = scale_runs.default_run(shape, out, extra)
        run["layer"] = name
        m, k, n = (int(v) for v in shape.split("x"))
        layer = {"id": shape, "m": m, "k": k, "n": n}
        run["zigzag"] = scale_runs.zigzag_layer(zigzag_python, layer, out)
        runs.append(run)
    scale_report.attach_zigzag_ratios(runs)
    return runs


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = harness.parser(__doc__)  # its own --quick: every part, small
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--full-up-to", type=int, default=1 << 21, metavar="PRODUCTS")
    parser.add_argument("--zigzag-python", metavar="PYTHON", help="a Python with zigzag-dse")
    parser.add_argument(
        "--run-timeout",
        type=int,
        default=900,
        metavar="SECONDS",
        help="each default run's --timeout",
    )
    for part in ("scale", "differential", "runs", "bounds"):
        parser.add_argument(f"--skip-{part}", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench_scale")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    quick = args.quick
    report: dict[str, object] = {"machine": MACHINE.as_dict(), "quick": quick}
    if not args.skip_scale:
        shapes = QUICK_SHAPES if quick else SHAPES
        rows = scale_rows(shapes, 1 if quick else args.repeats, args.full_up_to)
        report["scale"] = rows
        report["growth"] = rows[-1]["ms"] / rows[0]["ms"]  # type: ignore[operator]
        scale_report.print_scale(rows)
        plot(rows, args.out / "bench_scale.png")
    if not args.skip_differential:
        report["differential"] = differential(20 if quick else args.cases, args.seed)
        scale_report.print_differential(report["differential"])  # type: ignore[arg-type]
    if not args.skip_runs:
        layers = QUICK_LAYERS if quick else LAYERS
        extra = ("--trials", "60") if quick else ("--timeout", str(args.run_timeout))
        report["runs"] = runs = runs_and_zigzag(layers, args.zigzag_python, args.out, extra)
        scale_report.print_runs(runs)
        scale_report.print_zigzag(runs)
        scale_runs.plot_convergence(runs, args.out / "bench_scale_convergence.png")
    if not args.skip_bounds:
        cases = QUICK_BOUNDS if quick else BOUNDS
        report["bounds"] = scale_runs.lower_bound_rows(cases, 1 if quick else 3)
        scale_report.print_bounds(report["bounds"])  # type: ignore[arg-type]
    report["goals"] = goals = scale_report.goal_rows(report)
    if quick:
        print("--quick: small shapes and few cases, beside the goals of the full run")
    scale_report.print_goals(goals)
    (args.out / "bench_scale.json").write_text(json.dumps(report, indent=1, default=str))
    print(f"wrote {args.out}/bench_scale.json and its plots")
    return 0


if __name__ == "__main__":
    harness.run(main)
