"""Lower bounds that no schedule on the machine beats, per GEMM C = A B (A is M x K, B K x N).

* Compute: a PE does at most one multiply-accumulate a cycle, so any run takes at least
  ceil(MKN / (R C)) cycles.
* Compulsory traffic: every element of A and B comes in at least once and every output leaves
  once: MK + KN + MN elements.
* Traffic for an on-chip capacity of S elements (red-blue pebbling): Smith, Lowery, Langou and
  van de Geijn (A Tight I/O Lower Bound for Matrix Multiplication, 2019) prove that computing
  C := AB + C by the classical algorithm (every product a b computed once, no algebraic tricks)
  with a fast memory of S elements moves at least 2MNK / sqrt(S) - 2S elements between slow and
  fast memory. A run here computes C := AB, reading no initial C; reading it on first use would
  add at most MN transfers, so the run moves at least 2MNK / sqrt(S) - 2S - MN elements. S counts
  every place an element can be held on chip: the capacity of every buffer in elements (a
  partial sum takes at least one word), the accumulator store's entries and four registers per
  PE (stationary, shadow, forwarding and partial sum).
* The link moves one request at a time at most its bandwidth, each element at least
  min(1, accumulator_bits, output_bits / word_bits) words (A and B and the outputs exactly at
  their widths for the compulsory part), and the run ends after its last write's latency:
  cycles >= ceil(words / bandwidth) + latency.
The bound is the larger of the compute and link bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from simcore.shape import Shape
from simcore.systolic.machine import SystolicMachine

REGISTERS_PER_PE = 4


@dataclass(frozen=True)
class Bound:
    compute_cycles: int
    capacity_elements: int  # S
    compulsory_elements: int
    pebbling_elements: int  # the red-blue pebbling bound for S (may be below compulsory)
    link_words: Fraction  # words the link moves at least
    link_cycles: int

    @property
    def traffic_elements(self) -> int:
        return max(self.compulsory_elements, self.pebbling_elements)

    @property
    def cycles(self) -> int:
        return max(self.compute_cycles, self.link_cycles)

    @property
    def bound_by(self) -> str:
        return "compute" if self.compute_cycles >= self.link_cycles else "memory"


def on_chip_elements(machine: SystolicMachine) -> int:
    memory = machine.memory
    total = sum(store.capacity for store in memory.stores)
    if memory.accumulator is not None:
        total += memory.accumulator.capacity
    return total + REGISTERS_PER_PE * machine.array.pes


def bound(machine: SystolicMachine, shape: Shape) -> Bound:
    m, k, n = shape.m, shape.k, shape.n
    compute = -(-shape.macs // machine.array.pes)
    s = on_chip_elements(machine)
    compulsory = m * k + k * n + m * n
    pebbling = max(0, math.floor(2 * shape.macs / math.sqrt(s) - 2 * s - m * n))
    out_words = machine.output_words
    least = min(Fraction(1), machine.accumulator_words, out_words)
    words = max(m * k + k * n + m * n * out_words, pebbling * least)
    link = machine.memory.dram
    link_cycles = math.ceil(words / link.words_per_cycle) + link.latency
    return Bound(compute, s, compulsory, pebbling, words, link_cycles)
