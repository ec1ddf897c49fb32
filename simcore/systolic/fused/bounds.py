"""Lower bounds on a fused group on a systolic machine, which no schedule of the group (fused or
not) beats, so a timed group carries its ratio like a single product does.

* Compute: every multiply-add of the group, one a PE a cycle: ceil(MACs / (R C)).
* Vector: every element of every elementwise step passes the vector unit once (the group fixes
  its steps): ceil(elements / lanes) passes of each step's cycles.
* Compulsory traffic: every external input read once and every output written once, at their
  widths (A, B, a residual and a bias; X, W1, W2 and the biases; the outputs at output width);
  an intermediate need not leave the chip.
* Capacity: S counts every place on chip an element can be held (simcore.systolic.blocked.
  bounds.on_chip_elements). A product whose output is stored moves at least Smith et al.'s
  2 M N K / sqrt(S) - 2 S - M N elements; the MLP's up projection, whose output is consumed on
  chip, at least the segment bound of simcore/fusion/traffic.py. Elements count at least the
  narrowest width's words.
* Link: the traffic bound's words over the bandwidth, plus the last write's latency.
The cycle bound is the largest of compute, vector and link.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from simcore.fusion.groups import EpilogueGemm, FusedMlp
from simcore.fusion.traffic import consumed_product_traffic, stored_product_traffic
from simcore.systolic.blocked.bounds import on_chip_elements
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.vector_unit import VectorUnit


@dataclass(frozen=True)
class FusedBound:
    compute_cycles: int
    vector_cycles: int
    compulsory_words: Fraction
    capacity_elements: int  # S
    capacity_traffic: int  # elements moved at least for the capacity (may be below compulsory)
    link_words: Fraction
    link_cycles: int

    @property
    def cycles(self) -> int:
        return max(self.compute_cycles, self.vector_cycles, self.link_cycles)

    @property
    def bound_by(self) -> str:
        best = self.cycles
        if best == self.compute_cycles:
            return "compute"
        return "vector" if best == self.vector_cycles else "memory"


def _work(group: EpilogueGemm | FusedMlp) -> tuple[int, list[tuple[tuple[str, ...], int]]]:
    """(multiply-adds, [(elementwise steps, elements)]) the group fixes."""
    if isinstance(group, EpilogueGemm):
        return group.macs, [(group.epilogue, group.m * group.n)] if group.epilogue else []
    g = group
    act: tuple[str, ...] = ("bias", g.activation) if g.bias else (g.activation,)
    steps = [(act, g.m * g.hidden)] + ([(("bias",), g.m * g.d_out)] if g.bias else [])
    return g.macs, steps


def _compulsory(group: EpilogueGemm | FusedMlp, machine: SystolicMachine) -> Fraction:
    out = machine.output_words
    if isinstance(group, EpilogueGemm):
        g = group
        inputs = g.m * g.k + g.k * g.n
        inputs += g.m * g.n if "residual" in g.epilogue else 0
        inputs += g.n if "bias" in g.epilogue else 0
        return inputs + g.m * g.n * out
    h = group
    inputs = h.m * h.d + h.d * h.hidden + h.hidden * h.d_out
    inputs += (h.hidden + h.d_out) if h.bias else 0
    return inputs + h.m * h.d_out * out


def fused_bound(
    machine: SystolicMachine, vector: VectorUnit, group: EpilogueGemm | FusedMlp
) -> FusedBound:
    macs, steps = _work(group)
    compute = -(-macs // machine.array.pes)
    vector_cycles = sum(-(-n // vector.lanes) * vector.pass_cycles(s) for s, n in steps)
    s = on_chip_elements(machine)
    if isinstance(group, EpilogueGemm):
        capacity = stored_product_traffic(group.m, group.n, group.k, s)
    else:
        capacity = consumed_product_traffic(group.m * group.d * group.hidden, group.d, s)
    least = min(Fraction(1), machine.accumulator_words, machine.output_words)
    compulsory = _compulsory(group, machine)
    words = max(compulsory, capacity * least)
    link = machine.memory.dram
    link_cycles = math.ceil(words / link.words_per_cycle) + link.latency
    return FusedBound(compute, vector_cycles, compulsory, s, capacity, words, link_cycles)
