"""SCALE-Sim 3.0's memory system stepped the way it steps it: every demand row, one cycle, every
address in it. Slow (a Python loop over every request) and plain: the reference the fast model
(simcore.systolic.scalesim_memory) is held equal to.

scalesim/memory/double_buffered_scratchpad_mem.py, `service_memory_requests`: row i of the
demand matrices is issued at cycle c = i + the stalls so far; the IFMAP and filter read buffers
and the OFMAP write buffer serve it, each from c; the row's stall is the largest of
  * a read buffer's finish - c - 1 (1 is its hit latency), which a prefetch may make negative,
  * the write buffer's finish - c (never negative).
After the last row the write buffer drains what it holds, one drain after another.

A read buffer's miss (scalesim/memory/read_buffer.py, `service_reads`) starts prefetches until
the address is in the active window. Each prefetch ends at its fixed cycle
(ReadGeometry.prefetch_end), however late the miss; the finish x (from c + 1) becomes that end
if the end is not later than x, and else x + 2 (end - x): SCALE-Sim adds a positive wait twice.
"""

from __future__ import annotations

import numpy as np

from simcore.systolic.scalesim_buffers import (
    ReadGeometry,
    ScalesimMemoryReport,
    WriteGeometry,
    read_geometry,
)
from simcore.systolic.scalesim_config import ScalesimConfig
from simcore.systolic.scalesim_demand import demand_matrix, prefetch_order
from simcore.systolic.scalesim_layer import (
    NULL,
    ScalesimLayer,
    filter_addresses,
    folding,
    ifmap_addresses,
    ofmap_addresses,
)


class ReferenceReadBuffer:
    def __init__(self, words: int, bandwidth: int, order: np.ndarray) -> None:
        self.geometry: ReadGeometry = read_geometry(words, bandwidth, order)
        real = order[order != NULL]
        self.sets_of: dict[int, set[int]] = {}
        for position, address in enumerate(real.tolist()):
            self.sets_of.setdefault(address, set()).add(position // self.geometry.set_words)
        self.prefetches = 0
        self.started = False

    def hit(self, address: int) -> bool:
        g = self.geometry
        start = (self.prefetches * g.prefetch_sets) % g.sets
        return any((s - start) % g.sets < g.active_sets for s in self.sets_of[address])

    def serve(self, row: np.ndarray, cycle: int) -> int:
        """The row's stall: its finish - cycle - 1."""
        self.started = True
        finish = cycle + 1
        for address in row.tolist():
            if address == NULL:
                continue
            while not self.hit(address):
                self.prefetches += 1
                end = self.geometry.prefetch_end(self.prefetches)
                wait = end - finish
                finish += 2 * wait if wait > 0 else wait
        return finish - cycle - 1

    def dram_cycles(self) -> tuple[int, int]:
        g = self.geometry
        return -g.first_lines, max(g.prefetch_end(self.prefetches), -1)


class ReferenceWriteBuffer:
    def __init__(self, words: int, bandwidth: int) -> None:
        self.geometry = WriteGeometry(words, bandwidth)
        self.free = words
        self.drain_end = 0
        self.lines: list[int] = []  # real words in each line written so far
        self.filling = 0  # words in the line being filled
        self.drained = 0  # lines drained
        self.writes = 0
        self.drains: list[tuple[int, int]] = []

    def _close_line(self) -> None:
        if self.filling:
            self.lines.append(self.filling)
            self.filling = 0

    def _drain(self, cycle: int) -> int:
        g = self.geometry
        block = self.lines[self.drained : self.drained + g.drain_lines]
        # every line counts in full except the unused tail of the block's last one
        words = len(block) * g.bandwidth - (g.bandwidth - block[-1])
        self.writes += words
        self.free += words
        self.drained += len(block)
        self.drains.append((cycle, cycle + len(block) - 1))
        return cycle + len(block) - 1

    def serve(self, row: np.ndarray, cycle: int) -> int:
        """The cycle the row's writes are accepted."""
        g = self.geometry
        for address in row.tolist():
            if address == NULL:
                continue
            self.filling += 1
            self.free -= 1
            if self.filling == g.bandwidth:
                self._close_line()
            if cycle < self.drain_end:
                if self.free <= 0:
                    cycle = self.drain_end
            elif self.free < g.active_words:
                self._close_line()
                self.drain_end = self._drain(cycle)
        return cycle

    def finish(self, cycle: int) -> None:
        self._close_line()
        while self.drained < len(self.lines):
            cycle = self._drain(cycle) + 1


def reference_memory_report(config: ScalesimConfig, layer: ScalesimLayer) -> ScalesimMemoryReport:
    """SCALE-Sim's figures for one layer, stepped row by row and request by request."""
    f = folding(layer, config.dataflow, config.array_rows, config.array_cols)
    o = config.offsets
    operands = {
        "ifmap": ifmap_addresses(layer, o.ifmap),
        "filter": filter_addresses(layer, o.filter),
        "ofmap": ofmap_addresses(layer, o.ofmap),
    }
    demand = {name: demand_matrix(f, name, m) for name, m in operands.items()}
    ifmap = ReferenceReadBuffer(
        config.ifmap_kb * 1024,
        config.ifmap_bank_bandwidth,
        prefetch_order(f, "ifmap", operands["ifmap"]),
    )
    filt = ReferenceReadBuffer(
        config.filter_kb * 1024,
        config.filter_bank_bandwidth,
        prefetch_order(f, "filter", operands["filter"]),
    )
    ofmap = ReferenceWriteBuffer(config.ofmap_kb * 1024, config.ofmap_bandwidth)
    stalls = 0
    accepted = 0
    served: dict[str, list[int]] = {name: [] for name in demand}  # rows with a request
    for i in range(f.demand_rows):
        cycle = i + stalls
        ifmap_stall = ifmap.serve(demand["ifmap"][i], cycle)
        filter_stall = filt.serve(demand["filter"][i], cycle)
        accepted = ofmap.serve(demand["ofmap"][i], cycle)
        stalls += max(ifmap_stall, filter_stall, accepted - cycle)
        for name, finish in (
            ("ifmap", cycle + 1 + ifmap_stall),
            ("filter", cycle + 1 + filter_stall),
            ("ofmap", accepted),
        ):
            if (demand[name][i] != NULL).any():
                served[name].append(finish)
    ofmap.finish(accepted)
    ifmap_cycles, filter_cycles = ifmap.dram_cycles(), filt.dram_cycles()
    ofmap_cycles = (min(s for s, _ in ofmap.drains), max(e for _, e in ofmap.drains))
    return ScalesimMemoryReport(
        total_cycles=accepted,
        stall_cycles=stalls,
        cycles_with_prefetch=ofmap_cycles[1] - min(ifmap_cycles[0], filter_cycles[0]),
        ifmap_dram_reads=ifmap.geometry.dram_reads(ifmap.prefetches),
        filter_dram_reads=filt.geometry.dram_reads(filt.prefetches),
        ofmap_dram_writes=ofmap.writes,
        ifmap_dram_cycles=ifmap_cycles,
        filter_dram_cycles=filter_cycles,
        ofmap_dram_cycles=ofmap_cycles,
        ifmap_sram_cycles=(served["ifmap"][0], served["ifmap"][-1]),
        filter_sram_cycles=(served["filter"][0], served["filter"][-1]),
        ofmap_sram_cycles=(served["ofmap"][0], served["ofmap"][-1]),
        demand_rows=f.demand_rows,
    )
