"""The cycle-level reference of a vector operation on a systolic machine: the timing rule of
`simcore.systolic.vector_stream` stepped one cycle at a time, for tests on small operations.

Each cycle the link, if idle, starts its next request in issue order when it may (a store once
its chunk is done); a request spends its set-up cycles, then moves its words at its rate, one
cycle after another, and a load's data is in place the link's latency after its last word. The
vector unit, if idle, starts the next chunk once its data is in place; each cycle it does one
cycle of lane work (group of rows by group, pass by pass) and reads and writes up to its port share; the
chunk is done when all three are. Nothing here uses the recurrence or its durations.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from simcore.systolic.machine import SystolicMachine
from simcore.systolic.vector_ops import VectorTask, class_cycles
from simcore.systolic.vector_stream import VectorPlan, vector_store

Transfer = tuple[int, Fraction, Fraction]  # set-up cycles, words, words a cycle


def _lane_cycles(machine: SystolicMachine, task: VectorTask, rows: int) -> int:
    unit, work = machine.vector_unit, task.work()
    if work.dma:
        return 0
    per_pass = class_cycles(work.lane_ops, unit.special)
    if not (work.reductions or work.row_ops):
        return -(-rows * task.cols // unit.lanes) * per_pass
    total, pack = 0, max(1, unit.lanes // task.cols)
    for _group in range(0, rows, pack):
        width, steps = min(unit.lanes, task.cols), 0
        while width > 1:  # a reduction tree halves the partial sums each step
            width, steps = -(-width // 2), steps + 1
        total += math.ceil(task.cols / unit.lanes) * per_pass
        total += class_cycles(work.row_ops, unit.special) + work.reductions * steps
    return total


def _requests(machine: SystolicMachine, task: VectorTask, rows: int) -> dict[str, list[Transfer]]:
    work, link = task.work(), machine.memory.dram
    buffer = vector_store(machine).buffer
    into = min(link.words_per_cycle, buffer.write_width)
    out_of = min(link.words_per_cycle, buffer.read_width)
    elements = rows * task.cols
    loads = [(link.setup, Fraction(elements), into)] * work.streams
    loads += [(link.setup, Fraction(task.cols), into)] * work.params
    stored = elements * work.streams if work.dma else (rows if work.reduced else elements)
    return {"load": loads, "store": [(link.setup, Fraction(stored), out_of)]}


def reference_cycles(machine: SystolicMachine, task: VectorTask, plan: VectorPlan) -> int:
    rows_left, sizes = task.total_rows, []
    while rows_left > 0:
        sizes.append(min(plan.chunk_rows, rows_left))
        rows_left -= sizes[-1]
    n, b, latency = len(sizes), plan.buffers, machine.memory.dram.latency
    order = [("load", i) for i in range(min(b, n))]
    for i in range(n):
        order += [("store", i)] + ([("load", i + b)] if i + b < n else [])
    work, port = task.work(), machine.vector_unit.port
    in_place: dict[int, int] = {}
    done: dict[int, int] = {}
    link: list[list[Any]] = []  # the current request's transfers left: [setup, words left, rate]
    request = 0
    vector: list[Any] | None = None  # [chunk, lane cycles left, reads left, writes left]
    next_chunk, end, t = 0, None, 0
    while end is None:
        if not link and request < len(order):
            kind, i = order[request]
            if kind == "load" or (i in done and done[i] <= t):
                link = [list(x) for x in _requests(machine, task, sizes[i])[kind]]
                current = (kind, i)
                request += 1
        if vector is None and next_chunk < n and in_place.get(next_chunk, t + 1) <= t:
            rows = sizes[next_chunk]
            elements = rows * task.cols
            outputs = rows if work.reduced else elements
            vector = [
                next_chunk,
                _lane_cycles(machine, task, rows),
                Fraction(work.sweeps * elements),
                Fraction(work.writes * outputs),
            ]
            next_chunk += 1
            if vector[1] == 0 and vector[2] == 0 and vector[3] == 0:
                done[vector[0]] = t
                vector = None
                continue  # the next chunk may start this same cycle
        if link:
            head = link[0]
            if head[0] > 0:
                head[0] -= 1
            else:
                head[1] -= head[2]
            if head[1] <= 0:
                link.pop(0)
                if not link:
                    kind, i = current
                    if kind == "load":
                        in_place[i] = t + 1 + latency
                    elif i == n - 1:
                        end = t + 1 + latency
        if vector is not None:
            vector[1] = max(0, vector[1] - 1)
            vector[2] = max(Fraction(0), vector[2] - port)
            vector[3] = max(Fraction(0), vector[3] - port)
            if vector[1] == 0 and vector[2] == 0 and vector[3] == 0:
                done[vector[0]] = t + 1
                vector = None
        t += 1
    return end
