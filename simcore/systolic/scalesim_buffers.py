"""The sizes SCALE-Sim 3.0's double-buffered SRAMs derive from the configuration, and the report
both memory engines fill (simcore.systolic.scalesim_memory, scalesim_memory_reference).

Read buffer (IFMAP, filter; scalesim/memory/read_buffer.py), `words` = KB x 1024 one-byte words:
  * half the words are the active buffer, the other half the prefetch buffer;
  * it fetches its operand in the prefetch order (simcore.systolic.scalesim_demand), `bandwidth`
    words per DRAM request line; the order padded with -1 to whole lines makes `fetch_lines`;
  * it tracks what is on chip in "sets" of `set_words` = ceil(words / 100) consecutive real
    addresses of that order (the -1 entries skipped), `sets` of them including a last, possibly
    empty, one; the active buffer holds `active_sets` consecutive sets, circularly, and each
    new prefetch slides that window by `prefetch_sets`;
  * the first fill requests `first_lines` lines, ending the cycle before the first demand; each
    later prefetch requests `prefetch_lines` lines, one per cycle after the previous prefetch's
    last, and returns one cycle later; a DRAM read counts every requested line in full.

Write buffer (OFMAP; scalesim/memory/write_buffer.py): half the words are active, the rest
(`drain_words`) is drained `drain_lines` lines of `bandwidth` words at a time, one line a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.checks import ceil_div
from simcore.systolic.scalesim_layer import NULL


@dataclass(frozen=True)
class ReadGeometry:
    words: int
    bandwidth: int
    order_length: int
    real: int  # real addresses in the prefetch order

    @property
    def active_words(self) -> int:
        return ceil_div(self.words, 2)

    @property
    def prefetch_words(self) -> int:
        return self.words - self.active_words

    @property
    def set_words(self) -> int:
        return ceil_div(self.words, 100)

    @property
    def sets(self) -> int:
        return self.real // self.set_words + 1

    @property
    def active_sets(self) -> int:
        return min(ceil_div(self.active_words, self.set_words), self.sets)

    @property
    def prefetch_sets(self) -> int:
        return min(ceil_div(self.prefetch_words, self.set_words), self.sets - self.active_sets)

    @property
    def fetch_lines(self) -> int:
        return ceil_div(self.order_length, self.bandwidth)

    @property
    def first_lines(self) -> int:
        return min(ceil_div(self.active_words, self.bandwidth), self.fetch_lines)

    @property
    def prefetch_lines(self) -> int:
        return ceil_div(self.prefetch_words, self.bandwidth)

    def prefetch_end(self, prefetches: int) -> int:
        """The cycle the `prefetches`-th prefetch after the first fill has all its data (0: the
        first fill's, which ends the cycle before the first demand at cycle 0)."""
        return prefetches * (self.prefetch_lines + 1) - 1

    def dram_reads(self, prefetches: int) -> int:
        return (self.first_lines + prefetches * self.prefetch_lines) * self.bandwidth


def read_geometry(words: int, bandwidth: int, order: np.ndarray) -> ReadGeometry:
    return ReadGeometry(words, bandwidth, len(order), int(np.count_nonzero(order != NULL)))


@dataclass(frozen=True)
class WriteGeometry:
    words: int
    bandwidth: int

    @property
    def active_words(self) -> int:
        return ceil_div(self.words, 2)

    @property
    def drain_words(self) -> int:
        return self.words - self.active_words

    @property
    def drain_lines(self) -> int:
        return ceil_div(self.drain_words, self.bandwidth)


@dataclass(frozen=True)
class ScalesimMemoryReport:
    """SCALE-Sim 3.0's figures for one layer (COMPUTE_REPORT.csv and DETAILED_ACCESS_REPORT.csv).

    total_cycles is its "Total Cycles": the cycle the last demand row's OFMAP writes are
    accepted (cycles count from 0, so one less than the demand rows when nothing stalls);
    cycles_with_prefetch its "Total Cycles (incl. prefetch)": from the first DRAM read to the
    last DRAM write. DRAM counts are in words; the (start, stop) cycles of each operand's DRAM
    traffic are its DETAILED_ACCESS_REPORT's.
    """

    total_cycles: int
    stall_cycles: int
    cycles_with_prefetch: int
    ifmap_dram_reads: int
    filter_dram_reads: int
    ofmap_dram_writes: int
    ifmap_dram_cycles: tuple[int, int]
    filter_dram_cycles: tuple[int, int]
    ofmap_dram_cycles: tuple[int, int]
    ifmap_sram_cycles: tuple[int, int]
    filter_sram_cycles: tuple[int, int]
    ofmap_sram_cycles: tuple[int, int]
    demand_rows: int

    @property
    def dram(self) -> dict[str, int]:
        """DRAM words per operand, named for C = A B: A = IFMAP, B = filter, C = OFMAP."""
        return {
            "a_reads": self.ifmap_dram_reads,
            "b_reads": self.filter_dram_reads,
            "c_writes": self.ofmap_dram_writes,
        }
