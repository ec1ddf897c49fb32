"""Cheap analytic estimates of GA-1 schedules from the tile model, for ranking candidates before
paying for a simulation. An estimate is not a bound and never replaces the simulator."""

from __future__ import annotations

from simcore.ga1.machine import Machine
from simcore.shape import Shape
from simcore.tile_model import MatmulTile


def output_stationary_estimate(
    shape: Shape, machine: Machine, bi: int, bj: int, overlapped: bool = True
) -> int:
    """Cycles of an output-stationary schedule with bi x bj blocks of GA-1 tiles.

    The tile model counts element moves with the tiling (A once per block column, B once per
    block row, C once); on the padded matrix, divided by a tile's words, that is GA-1's tile
    traffic. Overlapped (loads run ahead into spare slots), the estimate is the longer of the DMA
    and matrix-unit times plus one block's first loads, which nothing can overlap; without
    overlap (one operand buffer) the two times add up."""
    T = machine.T
    Mt, Kt, Nt = shape.tiles(T)
    model = MatmulTile(
        m=Mt * T,
        n=Nt * T,
        k=Kt * T,
        tile_m=min(bi, Mt) * T,
        tile_n=min(bj, Nt) * T,
        tile_k=T,
        operand_bytes=1,
        accumulator_bytes=1,
    )
    tiles_moved = model.tiled_moves // machine.tile_words
    dma = tiles_moved * machine.dma_cycles
    compute = Mt * Kt * Nt * machine.mxu_cycles
    start = (min(bi, Mt) + min(bj, Nt)) * machine.dma_cycles
    return max(dma, compute) + start if overlapped else dma + compute
