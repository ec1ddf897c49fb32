"""SCALE-Sim 3.0's memory system, reproduced fast: per layer its Total Cycles, Stall Cycles,
Total Cycles incl. prefetch, and DRAM reads and writes of each operand (words), exactly as its
double-buffered scratchpads (scalesim/memory/) compute them in USER bandwidth mode.

SCALE-Sim steps its demand matrices row by row (one row a cycle) and each request in it through
Python loops; the model gets the same figures in three passes:

1. the read buffers' misses, from the addresses alone (simcore.systolic.scalesim_misses);
2. the OFMAP words each demand row writes, per fold, in closed form;
3. a walk over the rows where something happens (a miss, a drain starting, a stall), jumping
   the rows in between with prefix sums: the cycle of row i is i + the stalls so far, and a
   row's stall is the largest of its read buffers' (a miss's prefetch end, counted SCALE-Sim's
   way) and its write buffer's (simcore.systolic.scalesim_writes).

simcore.systolic.scalesim_memory_reference steps every request the way SCALE-Sim does; the
tests hold the two equal, and both to SCALE-Sim's own reports (tests/simcore/golden/).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.systolic.scalesim_buffers import (
    ReadGeometry,
    ScalesimMemoryReport,
    WriteGeometry,
)
from simcore.systolic.scalesim_config import ScalesimConfig, ScalesimConfigError
from simcore.systolic.scalesim_demand import fold_block, fold_demand, specs
from simcore.systolic.scalesim_layer import (
    NULL,
    Folding,
    ScalesimLayer,
    filter_addresses,
    folding,
    ifmap_addresses,
    ofmap_addresses,
)
from simcore.systolic.scalesim_misses import Misses, find_misses, read_buffer_geometry
from simcore.systolic.scalesim_writes import WriteBuffer

__all__ = [
    "ModelCost",
    "ScalesimMemoryReport",
    "model_cost",
    "read_stall",
    "scalesim_memory_report",
]

# What the model costs, measured (peak RSS and CPU time of GEMMs from 64^3 to 2048^3 on 1x1 and
# 32x32 arrays, and of 22-million-element operands of every aspect and dataflow): at most about
# 64 bytes per element of the read operands' address matrices (A and B, with the misses found in
# them), 16 per element of C's, and 64 per element of one fold's demand matrices; its time follows
# the demand matrices' elements plus a fixed cost per fold worth about FOLD_STEPS elements, at
# about STEPS_PER_SECOND.
BYTES_PER_READ, BYTES_PER_WRITE, BYTES_PER_DEMAND = 64, 16, 64
FOLD_STEPS = 2000
STEPS_PER_SECOND = 80_000_000
PROCESS_BYTES = 64 << 20  # the process's own peak before the model (numpy and the reader)


def read_stall(cycle: int, before: int, after: int, g: ReadGeometry) -> int:
    """A row's read stall (finish - cycle - 1) when its prefetches take the count from `before`
    to `after`. Prefetch q ends at q p - 1 (p = prefetch lines + 1); the finish x starts at
    cycle + 1 and each prefetch's end e makes it e (e <= x) or 2 e - x. Measured from e, the
    lead r = x - e goes to 0 if r >= p, else to p - r: from the second prefetch on it alternates."""
    p = g.prefetch_lines + 1
    leads = [cycle + 1 - g.prefetch_end(before)]
    for _ in range(3):
        leads.append(0 if leads[-1] >= p else p - leads[-1])
    count = after - before
    lead = leads[count] if count < 3 else leads[2 + count % 2]
    return g.prefetch_end(after) + lead - cycle - 1


def _write_profile(f: Folding, fc: int, fr: int) -> np.ndarray:
    """OFMAP words written in each demand row of fold (fc, fr)."""
    r, c, t = f.rows, f.cols, f.t
    width = min(c, f.sc - fc * c)
    height = {"ws": t, "is": t, "os": min(r, f.sr - fr * r)}[f.dataflow]
    block = np.zeros((height, width), dtype=np.int64)
    demand = fold_demand(specs(f)["ofmap"], block)
    return np.count_nonzero(demand != NULL, axis=1).astype(np.int64)


def request_rows(f: Folding, operand: str, matrix: np.ndarray) -> tuple[int, int]:
    """The first and the last demand row with a request of the operand (a fold of a
    convolution's IFMAP may hold none: every window in it runs past the input's edge)."""
    spec = specs(f)[operand]
    folds = [(fc, fr) for fc in range(f.col_folds) for fr in range(f.row_folds)]

    def used(number: int) -> np.ndarray:
        demand = fold_demand(spec, fold_block(f, operand, matrix, *folds[number]))
        return number * f.rows_per_fold + np.flatnonzero((demand != NULL).any(axis=1))

    first = next(rows[0] for n in range(len(folds)) if len(rows := used(n)))
    last = next(rows[-1] for n in reversed(range(len(folds))) if len(rows := used(n)))
    return int(first), int(last)


class _Events:
    """The rows the walk stops at: where a read buffer misses, and the rows whose cycles
    SCALE-Sim reports (each operand's first and last row with a request)."""

    def __init__(
        self, misses: list[Misses], geometries: list[ReadGeometry], watched: set[int]
    ) -> None:
        self.geometries = geometries
        rows = set(watched)
        for m in misses:
            rows.update(m.rows.tolist())
        self.rows = sorted(rows)
        self.where = [
            dict(zip(m.rows.tolist(), zip(m.before.tolist(), m.after.tolist()))) for m in misses
        ]
        self.next = 0
        self.watched = watched
        self.seen: dict[int, tuple[list[int], int]] = {}

    def next_row(self) -> int:
        return self.rows[self.next] if self.next < len(self.rows) else -1

    def serve(self, row: int, cycle: int, accepted: int) -> int:
        """The row's stall; remembers a watched row's cycles."""
        if self.next < len(self.rows) and self.rows[self.next] == row:
            self.next += 1
        finishes = [cycle + 1, cycle + 1]
        for b, (where, g) in enumerate(zip(self.where, self.geometries)):
            if row in where:
                before, after = where[row]
                finishes[b] += read_stall(cycle, before, after, g)
        if row in self.watched:
            self.seen[row] = (finishes, accepted)
        return max(finishes[0] - cycle - 1, finishes[1] - cycle - 1, accepted - cycle)


def _walk(f: Folding, events: _Events, buffer: WriteBuffer) -> tuple[int, int]:
    """Every demand row in order; returns (stall cycles, the last row's accepted cycle)."""
    stalls = 0
    accepted = -1
    profiles: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    active = buffer.g.active_words
    fold_number = 0
    for fc in range(f.col_folds):
        for fr in range(f.row_folds):
            key = (int(fc == f.col_folds - 1), int(fr == f.row_folds - 1))
            if key not in profiles:
                words = _write_profile(f, fc, fr)
                profiles[key] = (words, np.concatenate([[0], np.cumsum(words)]))
            words, cum = profiles[key]
            base = fold_number * f.rows_per_fold
            i, end = 0, f.rows_per_fold
            while i < end:
                nxt = events.next_row()
                limit = nxt - base if 0 <= nxt - base < end else end
                # rows before `busy` run while a drain is under way (cycle < drain end)
                busy = min(max(buffer.drain_end - stalls - base, i), limit)
                need = cum[i] + max(buffer.free, 1)
                event = int(np.searchsorted(cum, need)) - 1
                if event >= busy:
                    free = buffer.free - int(cum[busy] - cum[i])
                    need = cum[busy] + max(free - active + 1, 1)
                    event = max(int(np.searchsorted(cum, need)) - 1, busy)
                event = min(event, limit)
                if event > i:
                    buffer.take(int(cum[event] - cum[i]))
                if event >= end:
                    accepted = base + end - 1 + stalls
                    break
                cycle = base + event + stalls
                accepted = buffer.serve(int(words[event]), cycle)
                stalls += events.serve(base + event, cycle, accepted)
                i = event + 1
            fold_number += 1
    return stalls, accepted


@dataclass(frozen=True)
class ModelCost:
    """What `scalesim_memory_report` will take on a layer, before it runs: peak bytes (an upper
    estimate) and steps (demand-matrix elements and folds), with its time at the measured rate."""

    bytes: int
    steps: int

    @property
    def seconds(self) -> float:
        return self.steps / STEPS_PER_SECOND


def model_cost(config: ScalesimConfig, layer: ScalesimLayer) -> ModelCost:
    """The model's cost on `layer`, from its sizes alone (nothing is allocated)."""
    m, k, n = layer.pixels, layer.window, layer.filters
    f = folding(layer, config.dataflow, config.array_rows, config.array_cols)
    width = max(config.array_rows, config.array_cols)
    return ModelCost(
        PROCESS_BYTES
        + BYTES_PER_READ * (m * k + k * n)
        + BYTES_PER_WRITE * m * n
        + BYTES_PER_DEMAND * f.rows_per_fold * width,
        f.demand_rows * width + FOLD_STEPS * f.folds,
    )


def scalesim_memory_report(config: ScalesimConfig, layer: ScalesimLayer) -> ScalesimMemoryReport:
    """SCALE-Sim 3.0's figures for one layer on one configuration (USER bandwidth mode)."""
    why = config.memory_unsupported()
    if why is not None:
        raise ScalesimConfigError(f"SCALE-Sim's memory model: {why}")
    f = folding(layer, config.dataflow, config.array_rows, config.array_cols)
    o = config.offsets
    operands = {
        "ifmap": (ifmap_addresses(layer, o.ifmap), config.ifmap_kb, config.ifmap_bank_bandwidth),
        "filter": (
            filter_addresses(layer, o.filter),
            config.filter_kb,
            config.filter_bank_bandwidth,
        ),
    }
    geometries, misses, spans = [], [], []
    for name, (matrix, kb, bandwidth) in operands.items():
        g = read_buffer_geometry(f, name, matrix, kb * 1024, bandwidth)
        geometries.append(g)
        misses.append(find_misses(f, name, matrix, g))
        spans.append(request_rows(f, name, matrix))
    spans.append(request_rows(f, "ofmap", ofmap_addresses(layer, o.ofmap)))
    events = _Events(misses, geometries, {row for span in spans for row in span})
    buffer = WriteBuffer(WriteGeometry(config.ofmap_kb * 1024, config.ofmap_bandwidth))
    stalls, accepted = _walk(f, events, buffer)
    buffer.finish(accepted)
    read_cycles = [
        (-g.first_lines, max(g.prefetch_end(m.prefetches), -1)) for g, m in zip(geometries, misses)
    ]
    sram = [
        (events.seen[first][0][b], events.seen[last][0][b])
        for b, (first, last) in enumerate(spans[:2])
    ]
    sram.append((events.seen[spans[2][0]][1], events.seen[spans[2][1]][1]))
    first_drain = buffer.first_drain if buffer.first_drain is not None else 0
    return ScalesimMemoryReport(
        total_cycles=accepted,
        stall_cycles=stalls,
        cycles_with_prefetch=buffer.last_drain_end - min(c[0] for c in read_cycles),
        ifmap_dram_reads=geometries[0].dram_reads(misses[0].prefetches),
        filter_dram_reads=geometries[1].dram_reads(misses[1].prefetches),
        ofmap_dram_writes=buffer.writes,
        ifmap_dram_cycles=read_cycles[0],
        filter_dram_cycles=read_cycles[1],
        ofmap_dram_cycles=(first_drain, buffer.last_drain_end),
        ifmap_sram_cycles=sram[0],
        filter_sram_cycles=sram[1],
        ofmap_sram_cycles=sram[2],
        demand_rows=f.demand_rows,
    )
