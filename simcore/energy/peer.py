"""How the systolic counts line up with ZigZag's memory levels, and the energy terms by which
ZigZag's conventions differ (benchmarks/bench_energy.py; the golden test holds both).

ZigZag reports, per operand (I = A, W = B, O = C) and memory level, the elements moved in each
direction: rd_out_to_low (read towards the MACs), wr_in_by_high (written from the level above),
wr_in_by_low (written by the level below) and rd_out_to_high (read towards the level above).
The levels are those of benchmarks/zigzag_runner.py: rf_stationary (the stationary input's PE
register), rf_output (each PE's output register), sram, and dram for the stationary operand.
"""

from __future__ import annotations

from simcore.energy.systolic import SystolicCounts, buffer_kib
from simcore.energy.technology import Technology

Level = tuple[str, str, str]  # operand, memory, direction


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
    """pJ by which ZigZag's energy exceeds ours, by cause (0 for os, where none applies):
    * output register: ZigZag counts the spatial reduction over the array's rows as an
      accumulation in every PE's output register plus a transfer up, 4 accesses a MAC;
      the systolic chain writes each partial sum once and the next PE reads it once;
    * partial-sum read-backs: ZigZag's energy charges a read-back for every output tile pass,
      the first included (M N K/r; its own element count, like ours, is M N (K/r - 1));
    * final outputs: ZigZag writes every output into the SRAM at partial-sum width when any of
      them is read back; we write the final ones at word width."""
    if counts.dataflow == "os":
        return {"output register": 0.0, "partial-sum read-backs": 0.0, "final outputs": 0.0}
    finals = counts.traffic.c_writes
    kib = buffer_kib(counts, tech)
    read, write = tech.sram_read_pj(kib), tech.sram_write_pj(kib)
    wide = tech.accumulator_words
    per_mac = tech.accumulator_register_read_pj + tech.accumulator_register_write_pj
    return {
        "output register": counts.macs * per_mac,
        "partial-sum read-backs": finals * read * wide,
        "final outputs": finals * write * (wide - 1),
    }
