"""Lower bounds and the chapter's simple analytic models of traffic and time."""

from __future__ import annotations

import math
from dataclasses import dataclass

from simcore.ga1.machine import Machine
from simcore.shape import Shape


@dataclass(frozen=True)
class SimpleBounds:
    compute: int  # the matrix unit alone
    dma: int  # the DMA moving each tile of A and B in, and of C out, exactly once

    @property
    def best(self) -> int:
        return max(self.compute, self.dma)


def simple_bounds(shape: Shape, machine: Machine) -> SimpleBounds:
    """The chapter's two bounds: no schedule can beat either."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    return SimpleBounds(
        compute=Mt * Nt * Kt * machine.mxu_cycles,
        dma=(Mt * Kt + Kt * Nt + Mt * Nt) * machine.dma_cycles,
    )


def expected_blocked_traffic(shape: Shape, machine: Machine, bi: int, bj: int) -> tuple[int, int]:
    """(loads, stores) of blocked(bi, bj): per block and per k, one load per tile row and
    column of the (possibly clipped) block, and one store per tile of C."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    loads = 0
    for I in range(0, Mt, bi):
        for J in range(0, Nt, bj):
            loads += Kt * (min(bi, Mt - I) + min(bj, Nt - J))
    return loads, Mt * Nt


def expected_kouter_traffic(shape: Shape, machine: Machine) -> tuple[int, int]:
    """(loads, stores) of kouter: two operand loads per product, a partial-sum load for every
    k after the first, a store for every k."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    return 2 * Mt * Nt * Kt + Mt * Nt * (Kt - 1), Mt * Nt * Kt


def predicted_double_buffered_cycles(shape: Shape, machine: Machine, bi: int, bj: int) -> int:
    """The chapter's model of a double-buffered blocked schedule: a k step takes the longer of
    its loads and its products; each block's first loads and its stores are not overlapped."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    blocks = math.ceil(Mt / bi) * math.ceil(Nt / bj)
    load = (bi + bj) * machine.dma_cycles
    compute = bi * bj * machine.mxu_cycles
    return blocks * (Kt * max(load, compute) + load + bi * bj * machine.dma_cycles)
