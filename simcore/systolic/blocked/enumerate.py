"""An enumerative search over block schedules, for benchmarks and the bound study (the tuner's
own search replaces it in the product).

Candidates: block sides from powers of two (from the array's side, at least 8, or the dimension
when smaller) up to each dimension, the dimension itself and its half, third and quarter; the six loop orders; for each operand the three spans that
differ (its whole operand, the blocks of its inner loop, one block: other spans name the same
tile); and for each, every buffering whose tiles fit and that no other fitting buffering beats
by doubling a slot. `least_traffic` finds the fewest DRAM words by the counts alone (no timing),
over every candidate. `fastest` evaluates candidates in the order of a lower bound of their
own (the machine's bound, their link time from their counts, their array loads), stops when the
next one's bound is no better than the best run found, and at `budget` evaluations.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

from simcore.shape import Shape
from simcore.systolic.blocked.bounds import bound, ends
from simcore.systolic.blocked.counts import block_counts, block_parts, loads
from simcore.systolic.blocked.evaluate import MemoryRun, evaluate
from simcore.systolic.blocked.schedule import (
    INDEXED_BY,
    LOOP_ORDERS,
    SINGLE,
    Batch,
    BlockSchedule,
    feasibility,
)
from simcore.systolic.blocked.stream import block_tiles
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign

BUFFERINGS: tuple[tuple[int, int, int], ...] = tuple(
    (a, b, c) for a in (2, 1) for b in (2, 1) for c in (2, 1)
)


def sides(dim: int, least: int = 8) -> list[int]:
    """Block sides along one dimension: powers of two from min(least, dim), dim itself and its
    half, third and quarter (rounded up)."""
    out = {dim} | {-(-dim // q) for q in (2, 3, 4) if -(-dim // q) >= min(least, dim)}
    side = 1
    while side < dim:
        if side >= min(least, dim):
            out.add(side)
        side *= 2
    return sorted(out)


def _spans(order: str) -> list[tuple[int, int, int]]:
    """The span triples that name distinct tiles: per operand, 0, its inner loop's level, 3."""
    per = []
    for operand in "abc":
        inner = max(order.index(d) for d in INDEXED_BY[operand])
        per.append(sorted({0, inner, 3}))
    return [(a, b, c) for a in per[0] for b in per[1] for c in per[2]]


# Most maximal bufferings per block, order and span: an antichain of {1, 2}^3 has at most three.
MOST_MAXIMAL = 3


def most_candidates(machine: SystolicMachine, shape: Shape, lanes: int = 1) -> int:
    """At most how many candidates `candidates` yields (every block fitting, at most
    MOST_MAXIMAL bufferings each): the run keys a search holds are priced with it."""
    array = machine.lane_array(lanes)
    least = max(8, min(array.rows, array.cols))
    blocks = 1
    for dim in (shape.m, shape.k, shape.n):
        blocks *= len(sides(dim, least))
    return blocks * sum(len(_spans(order)) for order in LOOP_ORDERS) * MOST_MAXIMAL


def candidates(machine: SystolicMachine, shape: Shape, lanes: int = 1) -> Iterator[BlockSchedule]:
    """Every candidate that fits (`lanes` copies of its tiles), with its maximal bufferings."""
    array = machine.lane_array(lanes)
    least = max(8, min(array.rows, array.cols))
    dims = (sides(shape.m, least), sides(shape.k, least), sides(shape.n, least))
    for bm, bk, bn in itertools.product(*dims):
        for order in LOOP_ORDERS:
            for span in _spans(order):

                def fit(b: tuple[int, int, int]) -> bool:
                    schedule = BlockSchedule(bm, bk, bn, order, b, span)
                    return feasibility(machine, schedule, shape, lanes).ok

                if fit((2, 2, 2)):
                    yield BlockSchedule(bm, bk, bn, order, (2, 2, 2), span)
                    continue
                if not fit((1, 1, 1)):
                    continue
                fits = [b for b in BUFFERINGS if fit(b)]
                for b in fits:
                    raised = (tuple(2 if x == n else v for x, v in enumerate(b)) for n in range(3))
                    if not any(r != b and r in fits for r in raised):
                        yield BlockSchedule(bm, bk, bn, order, b, span)


@dataclass(frozen=True)
class Found:
    schedule: BlockSchedule
    value: float
    examined: int  # candidates counted or evaluated


def least_traffic(
    machine: SystolicMachine, design: SystolicDesign, shape: Shape, by: str = "words"
) -> Found:
    """The candidate with the fewest DRAM words (link words; by="elements": elements whatever
    their width; ties: fewer requests)."""
    best: tuple[Fraction, int] | None = None
    choice = None
    seen = 0
    for schedule in candidates(machine, shape):
        seen += 1
        dram = block_counts(machine, design, schedule, shape).dram
        amount = dram.link_words(machine) if by == "words" else Fraction(dram.elements)
        key = (amount, dram.requests)
        if best is None or key < best:
            best, choice = key, schedule
    assert best is not None and choice is not None
    return Found(choice, float(best[0]), seen)


def own_bound(
    machine: SystolicMachine,
    design: SystolicDesign,
    schedule: BlockSchedule,
    shape: Shape,
    batch: Batch = SINGLE,
) -> int:
    """A lower bound on the schedule's cycles: its own link time, its tiles' loads and their
    stream windows (a batch: every run's words and requests on the one link, each lane's runs'
    loads and windows one after the other on its array)."""
    s = schedule.clipped(shape)
    grid = dict(zip("mkn", s.grid(shape)))
    (a_times, a_blocks), (b_times, b_blocks), (visits, c_blocks) = (
        loads(s, grid, x) for x in "abc"
    )
    m, k, n = shape.m, shape.k, shape.n
    words = (
        m * k * a_times
        + k * n * b_times
        + 2 * m * n * (visits - 1) * machine.accumulator_words
        + m * n * machine.output_words
    )
    requests = a_blocks * a_times + b_blocks * b_times + c_blocks * (2 * visits - 1)
    words, requests = words * batch.runs, requests * batch.runs
    link = machine.memory.dram
    link_cycles = requests * link.setup + math.ceil(words / link.words_per_cycle)
    grid_m, grid_n = grid["m"], grid["n"]
    weight_loads = 0
    if design.dataflow != "os":  # every block loads its stationary tiles, kt >= k cycles each
        c = design.used.cols
        if design.dataflow == "ws":
            weight_loads = grid_m * shape.k * _column_tiles(shape.n, s.bn, c) * batch.rounds + 1
        else:
            weight_loads = grid_n * shape.k * _column_tiles(shape.m, s.bm, c) * batch.rounds + 1
    streams = batch.rounds * sum(
        cm * ck * cn * _windows(machine, design, bm, bk, bn)
        for bm, cm in block_parts(m, s.bm)
        for bk, ck in block_parts(k, s.bk)
        for bn, cn in block_parts(n, s.bn)
    )
    return max(link_cycles + link.latency, ends(machine) + max(weight_loads, streams))


def _windows(machine: SystolicMachine, design: SystolicDesign, m: int, k: int, n: int) -> int:
    """The stream windows of a block's tiles, one after another."""
    return sum(
        outer * sum(kind[5] * repeats for kind, repeats in group)
        for outer, group in block_tiles(machine, design, m, k, n)
    )


def _column_tiles(total: int, block: int, cols: int) -> int:
    """Array column folds over all blocks of one dimension."""
    full, edge = divmod(total, block)
    return full * math.ceil(block / cols) + (math.ceil(edge / cols) if edge else 0)


def run_key(schedule: BlockSchedule, shape: Shape) -> tuple[object, ...]:
    """What decides a schedule's run on a shape: its clipped blocks, the loops that have more
    than one block (a loop of one block never moves), the buffering, and for each operand the
    loops outside its span that index it and move (what replaces its tile). Schedules with
    the same key run alike."""
    s = schedule.clipped(shape)
    grid = dict(zip("mkn", s.grid(shape)))
    moving = "".join(d for d in s.order if grid[d] > 1)
    replaced = tuple(
        "".join(d for d in s.order[:span] if d in INDEXED_BY[operand] and grid[d] > 1)
        for operand, span in zip("abc", s.span)
    )
    return (s.bm, s.bk, s.bn, moving, s.buffering, replaced)


def distinct(schedules: Iterator[BlockSchedule], shape: Shape) -> Iterator[BlockSchedule]:
    """The first schedule of each run_key."""
    seen: set[tuple[object, ...]] = set()
    for schedule in schedules:
        key = run_key(schedule, shape)
        if key not in seen:
            seen.add(key)
            yield schedule


def fastest(
    machine: SystolicMachine, design: SystolicDesign, shape: Shape, budget: int = 400
) -> tuple[MemoryRun, int]:
    """The fastest candidate found, and how many were evaluated (one of each run_key)."""
    floor = bound(machine, shape, design).cycles
    # At most `budget` are ever evaluated: only the first `budget` by their bound are kept.
    ranked = heapq.nsmallest(
        budget,
        (
            (max(floor, own_bound(machine, design, s, shape)), n, s)
            for n, s in enumerate(distinct(candidates(machine, shape), shape))
        ),
    )
    best: MemoryRun | None = None
    evaluated = 0
    for least, _n, schedule in ranked:
        if best is not None and (least >= best.cycles or evaluated >= budget):
            break
        run = evaluate(machine, design, schedule, shape)
        evaluated += 1
        if best is None or run.cycles < best.cycles:
            best = run
    assert best is not None
    return best, evaluated
