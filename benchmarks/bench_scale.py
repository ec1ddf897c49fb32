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

Usage: python benchmarks/bench_scale.py [--repeats N] [--cases N] [--seed S] [--out DIR]
                                        [--full-up-to PRODUCTS] [--skip-differential]
Writes DIR/bench_scale.json and DIR/bench_scale.png (DIR: results/bench_scale by default).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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
GOALS_MS = {(4096, 4096, 4096): 5.0, (4096, 4096, 11008): 5.0, (16384, 16384, 16384): 10.0}
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


def scale_rows(repeats: int, full_up_to: int) -> list[dict[str, object]]:
    """Part (a): every shape's evaluation, interleaved round by round."""
    generators = {
        dims: engine.General(Shape(*dims), MACHINE, default_params(Shape(*dims), MACHINE))
        for dims in SHAPES
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
    ax.set_xlabel("tile products per evaluation")
    ax.set_ylabel("CPU ms per evaluation (median)")
    ax.set_title("GA-1, 64 slots, general family default schedule")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--full-up-to", type=int, default=1 << 21, metavar="PRODUCTS")
    parser.add_argument("--skip-differential", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench_scale")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = scale_rows(args.repeats, args.full_up_to)
    print(
        f"{'shape':>18} {'tile products':>15} {'simulated':>10} {'signatures':>10} {'jumps (bands, blocks, steps)':>28}"
        f" {'periodic ms':>11} {'full ms':>9}  goal"
    )
    for row in rows:
        dims = tuple(int(v) for v in str(row["shape"]).split("x"))
        goal = GOALS_MS.get(dims)  # type: ignore[arg-type]
        verdict = (
            "" if goal is None else f"<= {goal:g} ms: {'met' if row['ms'] <= goal else 'MISSED'}"
        )  # type: ignore[operator]
        full = f"{row['full_ms']:9.1f}" if row["full_ms"] is not None else f"{'-':>9}"
        print(
            f"{row['shape']:>18} {row['products']:>15.3e} {row['simulated']:>10} {row['signatures']:>10} "
            f"{row['jumps']!s:>28} {row['ms']:>11.2f} {full}  {verdict}"
        )
    growth = rows[-1]["ms"] / rows[0]["ms"]  # type: ignore[operator]
    print(
        f"growth from {rows[0]['shape']} to {rows[-1]['shape']}: {growth:.2f}x (goal <= 4x), "
        f"over {rows[-1]['products'] / rows[0]['products']:.0f}x the products"
    )  # type: ignore[operator]
    plot(rows, args.out / "bench_scale.png")
    report: dict[str, object] = {"scale": rows, "growth": growth, "machine": MACHINE.as_dict()}
    if not args.skip_differential:
        found = differential(args.cases, args.seed)
        report["differential"] = found
        print(
            f"differential: {found['cases']} random cases up to 1024 a side, {found['differences']} differences, "
            f"{found['fallbacks']} timed in full ({found['fallback_rate']:.1%}); CPU {found['periodic_seconds']:.1f} s "
            f"periodic, {found['full_seconds']:.1f} s full"
        )
        by_family: dict[str, dict[str, int]] = found["by_family"]  # type: ignore[assignment]
        for name, counts in sorted(by_family.items()):
            print(f"  {name:>18}: {counts}")
        for example in found["examples"]:  # type: ignore[attr-defined]
            print("  DIFFERENCE", example)
    (args.out / "bench_scale.json").write_text(json.dumps(report, indent=1, default=str))
    print(f"wrote {args.out / 'bench_scale.json'} and {args.out / 'bench_scale.png'}")


if __name__ == "__main__":
    main()
