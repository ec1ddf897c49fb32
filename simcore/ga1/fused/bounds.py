"""Lower bounds on a fused group's work on GA-1, which no program of the group (fused or not)
beats, so a timed program carries its ratio.

* Tile products: every product of the classical algorithm, in tiles: a GEMM's Mt Kt Nt, the
  MLP's Mt Ht (Dt + Ot), attention's Dt per key tile a query tile row sees, twice (Q K^T and
  P V); a tile wholly above a causal diagonal needs none. The matrix unit takes mxu_cycles for
  each.
* Compulsory tiles: every tile of an external input loaded once (A, B, a residual, a gate, the bias
  tiles; X, W1, W2 and the biases; Q, and the K and V tiles some query sees) and every output
  tile stored once; intermediates need no transfer. Constant tiles (masks) are left out: a
  program could make them.
* Capacity: the scratchpad holds S = slots T^2 words. A GEMM whose output is stored moves at
  least Smith et al.'s 2 M N K / sqrt(S) - 2 S - M N words; the first product of the MLP and
  attention's Q K^T, whose outputs are consumed on chip, at least the segment bound of
  simcore/fusion/traffic.py. Words are counted in tiles of T^2 (a transfer moves one tile).
* Cycles: at least the matrix unit's products and at least the DMA's tiles, each a transfer.
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.fusion.groups import EpilogueGemm, FusedAttention, FusedGroup, FusedMlp
from simcore.fusion.traffic import consumed_product_traffic, stored_product_traffic
from simcore.ga1.fused.emit import tiles
from simcore.ga1.machine import Machine


@dataclass(frozen=True)
class FusedBound:
    products: int  # tile products
    compulsory_tiles: int
    capacity_tiles: int  # from the capacity of the scratchpad (may be below compulsory)
    compute_cycles: int
    dma_cycles: int

    @property
    def tiles(self) -> int:
        return max(self.compulsory_tiles, self.capacity_tiles)

    @property
    def cycles(self) -> int:
        return max(self.compute_cycles, self.dma_cycles)

    @property
    def bound_by(self) -> str:
        return "compute" if self.compute_cycles >= self.dma_cycles else "memory"


def _attention(g: FusedAttention, T: int) -> tuple[int, int]:
    """(tile products, compulsory tiles) of attention."""
    Qt, Kt, Dt = tiles(g.queries, T), tiles(g.keys, T), tiles(g.head_dim, T)
    if g.causal:
        reach = (T - 1 + g.causal_offset) // T
        seen = sum(min(Kt, i + 1 + reach) for i in range(Qt))
        needed = min(Kt, Qt + reach)
    else:
        seen, needed = Qt * Kt, Kt
    products = 2 * g.heads * seen * Dt
    compulsory = g.heads * Dt * (2 * Qt + 2 * needed)
    return products, compulsory


def bound(group: FusedGroup, machine: Machine) -> FusedBound:
    """The group's lower bound on `machine` (see the module's note)."""
    T, S = machine.T, machine.slots * machine.tile_words
    words = 0
    if isinstance(group, EpilogueGemm):
        g = group
        Mt, Kt, Nt = tiles(g.m, T), tiles(g.k, T), tiles(g.n, T)
        products = g.batch * Mt * Kt * Nt
        outputs = Mt * Nt * (1 + ("residual" in g.epilogue) + ("gate" in g.epilogue))
        compulsory = g.batch * (Mt * Kt + Kt * Nt + outputs) + (Nt if "bias" in g.epilogue else 0)
        words = g.batch * stored_product_traffic(g.m, g.n, g.k, S)
    elif isinstance(group, FusedMlp):
        g2 = group
        Mt, Dt, Ht, Ot = (tiles(n, T) for n in (g2.m, g2.d, g2.hidden, g2.d_out))
        products = Mt * Ht * (Dt + Ot)
        compulsory = Mt * Dt + Dt * Ht + Ht * Ot + Mt * Ot + ((Ht + Ot) if g2.bias else 0)
        words = consumed_product_traffic(g2.m * g2.d * g2.hidden, g2.d, S)
    else:
        assert isinstance(group, FusedAttention)
        products, compulsory = _attention(group, T)
        # Q K^T's multiply-adds over the keys each query sees, every head (one run)
        words = consumed_product_traffic(group.macs // 2, group.head_dim, S)
    capacity = -(-words // machine.tile_words)
    return FusedBound(
        products,
        compulsory,
        capacity,
        products * machine.mxu_cycles,
        max(compulsory, capacity) * machine.dma_cycles,
    )
