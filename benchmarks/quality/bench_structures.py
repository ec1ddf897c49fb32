#!/usr/bin/env python3
"""Small scratchpads: the general family against the strip schedules, with the lower bounds.

For every case (a shape, a machine) both families get the same direct search (their seed points,
random feasible points, then coordinate descent over every parameter until no single change
helps), with a fixed seed, so the figures are reproducible. The best point of each family is then
verified exactly (functional result equals numpy's product, hazard replay clean).

    python -m benchmarks.quality.bench_structures            # every case (about 4 CPU minutes)
    python -m benchmarks.quality.bench_structures --cases 0,1 --random 60

The columns: cycles, tiles moved, DMA and matrix-unit busy fractions, the ratio to the lower bound,
and the evaluations the search used. The bounds: `compute` (the matrix unit's pipeline), `io` (the
I/O bound in cycles) and `bound` (their maximum, what the tuner reports).
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass

from autotune.oracles.ga1 import ORACLE as GA1
from benchmarks import harness
from search_spaces.base import GA1Family, canonical_json
from search_spaces.domains import Choice, IntRange, Point
from search_spaces.general import GeneralFamily
from search_spaces.strips import StripsFamily
from simcore.ga1.lower_bounds import (
    compute_pipeline_bound,
    io_bound_cycles,
    io_bound_tiles,
    lower_bound,
)
from simcore.ga1.machine import Machine
from simcore.ga1.schedules import ScheduleError
from simcore.shape import Shape, parse_shape

# (shape, machine parameters): 128^3 at the three scratchpads, then cases of our choosing.
CASES: tuple[tuple[str, dict[str, int]], ...] = (
    ("128x128x128", {"slots": 16}),
    ("128x128x128", {"slots": 32}),
    ("128x128x128", {"slots": 64}),
    ("96x200x40", {"slots": 16}),
    ("256x128x64", {"slots": 24}),
    ("1024x64x256", {"slots": 16}),
    ("128x128x128", {"slots": 16, "dma_setup": 4}),
    ("200x96x136", {"slots": 20}),
)


@dataclass(frozen=True)
class Found:
    point: Point
    metrics: dict[str, object]
    evaluations: int


class Search:
    """Seeds, random feasible points, then coordinate descent; every point evaluated once."""

    def __init__(self, family: GA1Family, shape: Shape, machine: Machine, seed: int) -> None:
        self.family, self.shape, self.machine = family, shape, machine
        self.params = family.params(shape, machine.T)
        self.rng = random.Random(seed)
        self.cache: dict[str, tuple[int, int] | None] = {}
        self.metrics: dict[str, dict[str, object]] = {}

    def score(self, point: Point) -> tuple[int, int] | None:
        point = self.family.canonical(point, self.shape, self.machine.T)
        key = canonical_json(point)
        if key not in self.cache:
            self.cache[key] = None
            if self.family.violation(point, self.shape, self.machine) == 0:
                try:
                    metrics = GA1.evaluate(self.family, point, self.shape, self.machine)
                except ScheduleError:
                    return None
                self.metrics[key] = metrics
                self.cache[key] = (int(metrics["cycles"]), int(metrics["tiles_moved"]))  # type: ignore[call-overload]
        return self.cache[key]

    def random_point(self) -> Point:
        point: Point = {}
        for param in self.params:
            domain = param.domain
            point[param.name] = (
                self.rng.choice(domain.options)
                if isinstance(domain, Choice)
                else self.rng.randint(domain.low, domain.high)
            )
        return point

    def neighbours(self, point: Point) -> list[Point]:
        out = []
        for param in self.params:
            domain = param.domain
            if isinstance(domain, Choice):
                values = list(domain.options)
            else:
                assert isinstance(domain, IntRange)
                value = int(point[param.name])
                values = sorted({domain.clip(value + d) for d in (-8, -4, -2, -1, 1, 2, 4, 8)})
            out += [{**point, param.name: v} for v in values if v != point[param.name]]
        return out

    def run(self, random_points: int, starts: int) -> Found:
        candidates = list(self.family.seed_points(self.shape, self.machine))
        tries = 0
        while (
            tries < 20 * random_points and sum(1 for s in self.cache.values() if s) < random_points
        ):
            candidates.append(self.random_point())
            self.score(candidates[-1])
            tries += 1
        ranked = sorted((p for p in candidates if self.score(p)), key=lambda p: self.score(p))  # type: ignore[arg-type, return-value]
        best = ranked[0]
        for start in ranked[:starts]:
            current = start
            improved = True
            while improved:
                improved = False
                for neighbour in self.neighbours(current):
                    value = self.score(neighbour)
                    if value is not None and value < self.score(current):  # type: ignore[operator]
                        current, improved = neighbour, True
            if self.score(current) < self.score(best):  # type: ignore[operator]
                best = current
        best = self.family.canonical(best, self.shape, self.machine.T)
        return Found(best, self.metrics[canonical_json(best)], len(self.cache))

    def fewest_tiles(self) -> Point:
        """The evaluated point that moved the fewest tiles (fewer cycles breaking ties)."""
        key = min(
            (k for k, v in self.cache.items() if v),
            key=lambda k: (self.cache[k][1], self.cache[k][0]),
        )  # type: ignore[index]
        return json.loads(key)


def verdict_text(family: GA1Family, point: Point, shape: Shape, machine: Machine) -> str:
    verdict = GA1.verify(family, point, shape, machine)
    return "exact, ok" if verdict.verified else verdict.detail


def row(name: str, found: Found, bound: int, verdict: str, seconds: float) -> str:
    m = found.metrics
    return (
        f"| {name} | {m['cycles']:,} | {m['tiles_moved']:,} | {float(m['dma_busy']):.1%} | "  # type: ignore[arg-type]
        f"{float(m['mxu_util']):.1%} | "  # type: ignore[arg-type]
        f"{int(m['cycles']) / bound:.3f} | {found.evaluations} | {seconds:.0f} | {verdict} |"
    )  # type: ignore[call-overload]


def main(argv: list[str] | None = None) -> int:
    quick = {"shape": "32x32x32", "slots": 8, "random": 10, "starts": 1}
    parser = harness.parser(__doc__, quick=quick)
    parser.add_argument("--cases", default="", help="comma-separated case numbers (default: all)")
    parser.add_argument(
        "--shape", default="", help="one extra case: MxKxN (with --slots and --machine)"
    )
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument(
        "--random", type=int, default=150, help="random feasible points per family (default 150)"
    )
    parser.add_argument(
        "--starts", type=int, default=3, help="coordinate-descent starts per family (default 3)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    cases = list(CASES)
    if args.cases:
        cases = [CASES[int(i)] for i in args.cases.split(",")]
    if args.shape:
        cases = [(args.shape, {"slots": args.slots})]
    for shape_text, overrides in cases:
        shape, machine = parse_shape(shape_text), Machine(**overrides)
        bound = lower_bound(shape, machine)
        print(
            f"\n### {shape} on {', '.join(f'{k}={v}' for k, v in overrides.items())}: "
            f"bound {bound:,} (compute {compute_pipeline_bound(shape, machine):,}, io {io_bound_cycles(shape, machine):,})"
        )
        print(
            "| family | cycles | tiles | DMA busy | MXU busy | / bound | evaluations | CPU s | verification |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        witnesses = []
        for family in (GeneralFamily(), StripsFamily()):
            start = time.process_time()
            search = Search(family, shape, machine, args.seed)
            found = search.run(args.random, args.starts)
            seconds = time.process_time() - start
            print(
                row(
                    family.name,
                    found,
                    bound,
                    verdict_text(family, found.point, shape, machine),
                    seconds,
                )
            )
            print(f"|   | `{canonical_json(found.point)}` |||||||| ", flush=True)
            witnesses.append((family, search.fewest_tiles()))
        # No bound on tiles moved alone can exceed what a verified program moves.
        family, point = min(
            witnesses, key=lambda w: GA1.evaluate(w[0], w[1], shape, machine)["tiles_moved"]
        )  # type: ignore[arg-type, return-value]
        metrics = GA1.evaluate(family, point, shape, machine)
        print(
            f"\nFewest tiles among the evaluated points: {metrics['tiles_moved']:,} ({family.name}, "
            f"{metrics['cycles']:,} cycles, {verdict_text(family, point, shape, machine)}); the I/O bound is "
            f"{io_bound_tiles(shape, machine):,} tiles, so no bound on tiles alone can exceed "
            f"{int(metrics['tiles_moved']) * machine.dma_cycles:,} cycles here: `{canonical_json(point)}`"
        )  # type: ignore[call-overload]
    return 0


if __name__ == "__main__":
    harness.run(main)
