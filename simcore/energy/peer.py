"""How the systolic counts line up with ZigZag's memory levels, and the energy terms by which
ZigZag's conventions differ (benchmarks/energy/bench_energy.py; the golden test holds both).

ZigZag reports, per operand (I = A, W = B, O = C) and memory level, the elements moved in each
direction: rd_out_to_low (read towards the MACs), wr_in_by_high (written from the level above),
wr_in_by_low (written by the level below) and rd_out_to_high (read towards the level above).
The levels are those of benchmarks/peers/zigzag_runner.py: rf_stationary (the stationary input's PE
register), rf_output (each PE's output register), sram, and dram for the stationary operand.
ZigZag's energy is systolic_cost's under the ZIGZAG accounting (simcore.energy.accountings).
"""

from __future__ import annotations

from simcore.energy.accountings import ZIGZAG
from simcore.energy.systolic import SystolicCounts, convention_items
from simcore.energy.technology import Technology

Level = tuple[str, str, str]  # operand, memory, direction
# The line items by which ZIGZAG's accounting charges more than PHYSICAL (systolic_cost).
CONVENTIONS = (
    "output register reads to pass sums up",
    "output register writes from read-backs",
    "first-pass partial-sum read-backs",
    "C writes' extra partial-sum width",
)


def zigzag_pairs(counts: SystolicCounts, hbm: bool) -> dict[Level, int]:
    """Our count for every ZigZag (operand, memory, direction) the two models share."""
    t, df = counts.traffic, counts.dataflow
    pairs: dict[Level, int] = {("O", "sram", "wr_in_by_low"): t.psum_writes + t.c_writes}
    if df == "os":
        pairs[("I", "sram", "rd_out_to_low")] = t.a_reads
        pairs[("W", "sram", "rd_out_to_low")] = t.b_reads
        pairs[("O", "sram", "rd_out_to_high")] = counts.writeback_reads
        if hbm:
            pairs[("O", "dram", "wr_in_by_low")] = counts.hbm_writes
        return pairs
    held, streamed = ("W", "I") if df == "ws" else ("I", "W")
    held_reads, streamed_reads = (t.b_reads, t.a_reads) if df == "ws" else (t.a_reads, t.b_reads)
    pairs.update(
        {
            (held, "rf_stationary", "wr_in_by_high"): counts.stationary_writes,
            (held, "rf_stationary", "rd_out_to_low"): counts.stationary_reads,
            (held, "sram", "rd_out_to_low"): held_reads,
            (held, "sram", "wr_in_by_high"): counts.fetch_writes,
            (streamed, "sram", "rd_out_to_low"): streamed_reads,
            ("O", "sram", "rd_out_to_low"): t.psum_readbacks,
        }
    )
    if hbm:
        pairs[(held, "dram", "rd_out_to_low")] = counts.hbm_reads
    return pairs


def zigzag_gap_terms(counts: SystolicCounts, tech: Technology) -> dict[str, float]:
    """pJ by which ZigZag's energy exceeds ours under the physical accounting, by convention
    (simcore.energy.accountings.ZIGZAG; 0 where a convention does not apply, as for os): what
    systolic_cost charges under ZIGZAG beyond PHYSICAL for the same counts."""
    register, on_chip = convention_items(counts, tech, ZIGZAG)
    charged = {
        item.name.removesuffix(f" ({ZIGZAG.name})"): item.total for item in register + on_chip
    }
    return {name: charged.get(name, 0.0) for name in CONVENTIONS}
