#!/usr/bin/env python3
"""How good can a strip schedule be? Every point of a grid over the strip family, simulated.

At 128^3 with 16 slots the strip family without the delay stops at 58,260. This grid
(both strip axes, reserve 1-3, split 0/2/3/4, lookahead 4-20, protect 0-48, tail 0-2, both
partitions, both strip orders, flip on and off: 31,104 points, about 10 s of CPU with the compiled
engine) shows whether the family holds anything better that the search misses. It prints the best
points, and the best for each reserve with the blocks it builds.

    python -m benchmarks.quality.grid_strips                      # 128x128x128, slots=16
    python -m benchmarks.quality.grid_strips --shape 160x160x240 --machine slots=20
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from autotune.oracles.ga1 import ORACLE as GA1
from benchmarks import harness
from search_spaces.strips import StripsFamily
from simcore.ga1.generator.strips import strip_blocks
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.shape import parse_shape

AXES = ("col", "row")
RESERVES = (1, 2, 3)
SPLITS = (0, 2, 3, 4)
LOOKAHEADS = tuple(range(4, 22, 2))
PROTECTS = (0, 8, 16, 24, 32, 48)
TAILS = (0, 1, 2)


def grid() -> list[dict[str, Any]]:
    points = []
    for axis, reserve, split, lookahead, protect, tail, partition, order, flip in itertools.product(
        AXES,
        RESERVES,
        SPLITS,
        LOOKAHEADS,
        PROTECTS,
        TAILS,
        ("balanced", "uniform"),
        ("narrow", "wide"),
        (True, False),
    ):
        points.append(
            dict(
                strip_axis=axis,
                reserve=reserve,
                strip_order=order,
                first_reverse=False,
                partition=partition,
                split=split,
                flip=flip,
                tail=tail,
                lookahead=lookahead,
                store_first=False,
                protect=protect,
            )
        )
    return points


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)
    parser.add_argument("--shape", default="128x128x128")
    parser.add_argument(
        "--machine", default="slots=16", help="machine overrides (default slots=16)"
    )
    args = parser.parse_args(argv)
    shape, machine = parse_shape(args.shape), machine_from(parse_overrides(args.machine), None)
    family = StripsFamily()
    started = time.process_time()
    found = []
    for point in itertools.islice(grid(), 200 if args.quick else None):  # quick: the first 200
        if family.violation(point, shape, machine) == 0:
            metrics = GA1.evaluate(family, point, shape, machine)
            found.append((int(metrics["cycles"]), int(metrics["tiles_moved"]), len(found), point))
    found.sort(key=lambda row: row[:3])  # ties: grid order
    print(
        f"{args.shape} {args.machine}: {len(found):,} strip points simulated in {time.process_time() - started:.1f} s CPU"
    )
    for cycles, tiles, _, point in found[:3]:
        print(f"  {cycles:,} cycles, {tiles:,} tiles moved: {point}")
    for reserve in RESERVES:
        mine = [row for row in found if row[3]["reserve"] == reserve]
        if mine:
            cycles, tiles, _, point = mine[0]
            sizes = sorted(
                {
                    (len(rows), len(cols))
                    for rows, cols in strip_blocks(shape, machine, family.to_params(point))
                }
            )
            print(
                f"  best with reserve {reserve}: {cycles:,} cycles, {tiles:,} tiles moved, blocks {sizes}"
            )
    return 0


if __name__ == "__main__":
    harness.run(main)
