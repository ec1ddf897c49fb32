"""What a block schedule on a machine with its memory reports besides the array oracle's
figures, declared once: stalls, DRAM traffic per operand (in link words: operand words, a
partial sum at accumulator width, an output at output width) and the buffers' area.

The array oracle without an architecture measures the objectives among them too: the cycles its
HBM link adds to the design's (stall_cycles), the stationary tiles' words over it (dram_words)
and its buffer's area."""

from __future__ import annotations

from autotune.oracles.measures import SUM, Measure

STALL_CYCLES = Measure(
    "stall_cycles",
    unit="cycles",
    total=SUM,
    dtype="int",
    help="the cycles the array waits for DRAM (or, without an architecture, its HBM link)",
)
DRAM_WORDS = Measure(
    "dram_words",
    unit="words",
    total=SUM,
    help="words over the DRAM link (or, without an architecture, the HBM link)",
)
# Columns only: the array oracle's link moves the stationary tiles alone.
DRAM_PARTS: tuple[Measure, ...] = tuple(
    Measure(part, unit="words", objective=False)
    for part in ("a_reads", "b_reads", "c_reads", "c_writes")
)
BUFFER_AREA = Measure(
    "buffer_area",
    unit="mm2",
    column="buffer_area_mm2",
    help="the area of the on-chip buffers and the accumulator store",
)
MEMORY_MEASURES: tuple[Measure, ...] = (
    STALL_CYCLES,
    DRAM_WORDS,
    *DRAM_PARTS,
    Measure("stall_share", objective=False),
    Measure("compute_cycles", unit="cycles", objective=False, dtype="int"),
    Measure("dram_requests", objective=False, dtype="int"),
    Measure("blocks", objective=False, dtype="int"),
    BUFFER_AREA,
)
