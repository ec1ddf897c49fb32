"""A vector operation on a systolic machine: its rows streamed from DRAM through the store that
holds a, worked on by the vector unit, and written back (`VectorPlan`, `vector_run`).

The rows are cut into chunks of `chunk_rows` rows (the last may be shorter), `buffers` chunks
in the store at once. Per chunk: a load (its input words, and the parameter vectors), the
vector unit's work, a store of its outputs. The timing rule:

* the link serves its requests one at a time, in the order L0 .. L(B-1), then S0, L(B), S1,
  L(B+1), ... (each store frees its slot for the load after it); a request takes
  setup + ceil(words / rate) cycles, rate the link's (or the store's port width, when slower);
  a load's data is in place the link's latency after the link has moved it;
* the vector unit works on chunk i once chunk i - 1 is done and chunk i's data is in place, for
  max(its lane work, its reads and its writes over its port share). An elementwise operation's
  lane work is ceil(elements / lanes) passes of its pass cycles; one along its rows works on
  groups of floor(lanes / cols) rows side by side (one row when a row is wider than the lanes),
  each group ceil(cols / lanes) passes and then its row cycles (reduction trees, scalar steps);
* a store starts once its chunk is done (and the link is free);
* the run ends the link's latency after the last store has moved.

`vector_run` times the rule by its recurrence, request after request, jumping whole periods once
the state (relative to the link's time) repeats over identical chunks: exact at any size.
`simcore.systolic.vector_reference` steps the same rule cycle by cycle; tests hold them equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from simcore.systolic.machine import Store, SystolicMachine
from simcore.systolic.vector_ops import VectorTask

BUFFERINGS: tuple[int, ...] = (1, 2)
CHUNK_CHOICES = 10  # chunk sizes tried: the largest that fits, halved this many times at most


class VectorPlanError(ValueError):
    """A plan that does not fit the store (the message names the words and the capacity)."""


@dataclass(frozen=True)
class VectorPlan:
    chunk_rows: int
    buffers: int = 2

    def label(self) -> str:
        return f"chunk_rows={self.chunk_rows}, buffers={self.buffers}"


@dataclass(frozen=True)
class Chunk:
    """One chunk's words and durations (link occupancy of its load and store, vector cycles)."""

    rows: int
    load_words: Fraction
    store_words: Fraction
    load: int
    store: int
    work: int
    unit_reads: Fraction
    unit_writes: Fraction


@dataclass(frozen=True)
class VectorRun:
    task: VectorTask
    plan: VectorPlan
    cycles: int
    bound: int
    chunks: int
    dram_read_words: Fraction
    dram_write_words: Fraction
    requests: int
    unit_reads: Fraction  # words the vector unit reads from the store
    unit_writes: Fraction
    vector_busy: int

    @property
    def dram_words(self) -> Fraction:
        return self.dram_read_words + self.dram_write_words


def vector_store(machine: SystolicMachine) -> Store:
    store = machine.memory.store_of("a")
    assert store is not None  # a machine's a is always held by a buffer
    return store


def chunk_footprint(task: VectorTask, rows: int) -> int:
    """Store words one chunk of `rows` rows holds: its inputs, its outputs, its parameters."""
    work = task.work()
    inputs = work.streams * rows * task.cols
    outputs = rows if work.reduced else rows * task.cols
    if work.dma:
        outputs = 0  # a copy stores the words it loaded
    return inputs + outputs + work.params * task.cols


def largest_chunk(machine: SystolicMachine, task: VectorTask, buffers: int) -> int:
    """The most rows a chunk may hold with `buffers` chunks in the store (0: not one row)."""
    capacity = vector_store(machine).capacity
    one = chunk_footprint(task, 1) - task.work().params * task.cols
    fixed = task.work().params * task.cols
    most = (capacity // buffers - fixed) // one if capacity // buffers > fixed else 0
    return min(task.total_rows, max(0, most))


def chunk_of(machine: SystolicMachine, task: VectorTask, rows: int) -> Chunk:
    work = task.work()
    unit = machine.vector_unit
    store = vector_store(machine).buffer
    link = machine.memory.dram
    elements = rows * task.cols
    inputs = work.streams * elements
    outputs = rows if work.reduced else elements
    if work.dma:
        outputs = inputs
    load = sum(
        link.occupancy(w, store.write_width)
        for w in [elements] * work.streams + [task.cols] * work.params
    )
    store_cycles = link.occupancy(outputs, store.read_width)
    reads = Fraction(work.sweeps * elements)
    writes = Fraction(work.writes * (rows if work.reduced else elements))
    if work.dma:
        busy = 0
    else:
        if work.reductions or work.row_ops:  # rows packed side by side when they are short
            groups = -(-rows // max(1, unit.lanes // task.cols))
            compute = groups * (
                math.ceil(task.cols / unit.lanes) * task.pass_cycles(unit.special)
                + task.row_cycles(unit.lanes, unit.special)
            )
        else:
            compute = -(-elements // unit.lanes) * task.pass_cycles(unit.special)
        port = unit.port
        busy = max(compute, math.ceil(reads / port), math.ceil(writes / port))
    return Chunk(
        rows,
        Fraction(inputs + work.params * task.cols),
        Fraction(outputs),
        load,
        store_cycles,
        busy,
        reads,
        writes,
    )


def vector_run(machine: SystolicMachine, task: VectorTask, plan: VectorPlan) -> VectorRun:
    """The plan's exact cycles and counts (module doc); VectorPlanError when it does not fit."""
    fits = largest_chunk(machine, task, plan.buffers)
    if plan.chunk_rows > fits or plan.chunk_rows < 1:
        store = vector_store(machine)
        raise VectorPlanError(
            f"{task.kind}: {plan.buffers} chunk(s) of {plan.chunk_rows} rows need "
            f"{plan.buffers * chunk_footprint(task, plan.chunk_rows)} words, more than "
            f"buffers.{store.name} holds ({store.capacity})"
        )
    rows = task.total_rows
    n = -(-rows // plan.chunk_rows)
    full = chunk_of(machine, task, plan.chunk_rows)
    last = chunk_of(machine, task, rows - (n - 1) * plan.chunk_rows)
    cycles = _recurrence(n, plan.buffers, full, last, machine.memory.dram.latency)
    work = task.work()
    per_load = work.streams + work.params
    link_total = (n - 1) * (full.load + full.store) + last.load + last.store
    busy = (n - 1) * full.work + last.work
    return VectorRun(
        task,
        plan,
        cycles,
        max(link_total + machine.memory.dram.latency, busy),
        n,
        (n - 1) * full.load_words + last.load_words,
        (n - 1) * full.store_words + last.store_words,
        n * (per_load + 1),
        (n - 1) * full.unit_reads + last.unit_reads,
        (n - 1) * full.unit_writes + last.unit_writes,
        busy,
    )


def _recurrence(n: int, buffers: int, full: Chunk, last: Chunk, latency: int) -> int:
    """The rule's end, step by step over the link's requests, with periodic jumps."""

    def chunk(i: int) -> Chunk:
        return last if i == n - 1 else full

    link = 0  # the link is free from this cycle
    done = 0  # the vector unit's last chunk ended
    ready: dict[int, int] = {}  # loaded chunk -> the cycle its data is in place
    for first in range(min(buffers, n)):
        link += chunk(first).load
        ready[first] = link + latency
    seen: dict[tuple[int, ...], tuple[int, int]] = {}
    i = 0
    while i < n:
        c = chunk(i)
        done = max(done, ready.pop(i)) + c.work
        link = max(link, done) + c.store
        if i + buffers < n:
            link += chunk(i + buffers).load
            ready[i + buffers] = link + latency
        i += 1
        # identical steps ahead: full chunks and loads of full chunks only
        if i + buffers < n - 1 and i >= 1:
            key = (done - link, *(ready[j] - link for j in sorted(ready)))
            if key in seen:
                first, at = seen[key]
                period, shift = i - first, link - at
                jumps = (n - 1 - buffers - i) // period
                if jumps > 0:
                    i += jumps * period
                    link += jumps * shift
                    done += jumps * shift
                    ready = {j + jumps * period: t + jumps * shift for j, t in ready.items()}
                seen.clear()
            else:
                seen[key] = (i, link)
    return link + latency


def plans(machine: SystolicMachine, task: VectorTask) -> list[VectorPlan]:
    """The plans that fit: per buffering, the largest chunk and its halvings."""
    found = []
    for buffers in BUFFERINGS:
        rows = largest_chunk(machine, task, buffers)
        for _ in range(CHUNK_CHOICES):
            if rows < 1:
                break
            found.append(VectorPlan(rows, buffers))
            rows //= 2
    return found


def best_run(machine: SystolicMachine, task: VectorTask) -> VectorRun:
    """The fastest plan (ties: fewer chunks); VectorPlanError when not one row fits."""
    runs = [vector_run(machine, task, plan) for plan in plans(machine, task)]
    if not runs:
        store = vector_store(machine)
        raise VectorPlanError(
            f"{task.kind}: one row ({chunk_footprint(task, 1)} words) does not fit "
            f"buffers.{store.name} ({store.capacity} words)"
        )
    return min(runs, key=lambda r: (r.cycles, r.chunks, r.plan.buffers))
