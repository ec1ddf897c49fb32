"""Starting points of the general schedule, chosen from the shape and the machine by slot and
tile arithmetic alone: the block with the fewest loads per product (default_params), one that
keeps a panel of an operand resident (panel_params), and one that keeps the matrix unit busy
(overlap_params)."""

from __future__ import annotations

from simcore.ga1.generator.order import GeneralParams, largest_band, shortest_band
from simcore.ga1.machine import Machine
from simcore.shape import Shape

# overlap_params: the most of a block's time its transfers may take. A step loads in bursts, so
# a block whose transfers fill all of its products' time stalls the matrix unit now and then.
# Chosen by measurement: 344x344x96 on 56 slots, 5 x 6 blocks at 97.5% end 1.2% above the bound;
# 248x512x280 on 64 slots, 6 x 5 at 95.6% come within 0.02% of it.
OVERLAP_DMA_SHARE = 0.97


def _band_heights(total: int, most: int) -> list[tuple[int, int]]:
    """(longest balanced band, smallest band size giving it) for sizes 1..min(total, most)."""
    found: dict[int, int] = {}
    for size in range(1, min(total, most) + 1):
        found.setdefault(largest_band(total, size, "balanced"), size)
    return list(found.items())


def default_params(shape: Shape, machine: Machine) -> GeneralParams:
    """A good starting point: the block with the fewest loads per product whose working set fits.

    A k step streams its A tiles one by one past the step's w B tiles, so a block of h x w
    accumulators needs about h w + w + 2 slots; the slots left over set the lookahead. Ties go to
    the narrower block, then the taller, then the smallest band sizes. A fitting block has
    h <= slots - 3, and a band size is less than twice its band, so sizes up to 2 slots suffice;
    each band length is tried once, with the smallest size that gives it."""
    Mt, _Kt, Nt = shape.tiles(machine.T)
    S = machine.slots
    best: tuple[float, int, int, int, int] | None = None
    widths = _band_heights(Nt, 2 * S + 2)
    for h, bi in _band_heights(Mt, 2 * S + 2):
        for w, bj in widths:
            spare = S - (h * w + w + 2)
            if spare < 0:
                continue
            cand = ((h + w) / (h * w), w, -h, bi, bj)  # fewest loads, then fewest B tiles held
            if best is None or cand < best:
                best = cand
                lookahead = 2 if spare <= 1 else 4 * spare
    if best is None:  # fewer than 5 slots: one accumulator, its A and its B
        return GeneralParams(bi=1, bj=1, tail=0, lookahead=1, store_first=False)
    bi, bj = best[3], best[4]
    return GeneralParams(
        bi=bi,
        bj=bj,
        partition="balanced",
        inner="lshape",
        tail=0,
        lookahead=lookahead,
        store_first=False,
    )


def overlap_params(
    shape: Shape, machine: Machine, default: GeneralParams | None = None
) -> GeneralParams | None:
    """A starting point for a machine whose matrix unit can be the bottleneck.

    default_params takes the block with the fewest loads per product, which on a large scratchpad
    leaves few slots to prefetch with, though the DMA has time to spare. This takes, of the blocks
    whose transfers fit under their products with a margin (Kt (h + w) D + h w D <=
    OVERLAP_DMA_SHARE Kt h w m for every h x w block of the bands, its stores included), the one
    that needs the fewest slots, and lets the DMA run two whole steps ahead. 248x512x280 on 64
    slots: 7 x 5 (42 slots) ends within 0.02% of the bound, the default's 7 x 7 (58) 2.3% above.
    None when no block keeps the matrix unit busy or when the choice is the default's block.
    `default`: default_params(shape, machine), when the caller has it."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    S, D, m = machine.slots, machine.dma_cycles, machine.mxu_cycles
    best: tuple[int, float, int, int, int, int] | None = None
    # With each band length, its shortest band: the block with the most loads per product.
    widths = [(w, bj, shortest_band(Nt, bj, "balanced")) for w, bj in _band_heights(Nt, 2 * S + 2)]
    for h, bi in _band_heights(Mt, 2 * S + 2):
        low_h = shortest_band(Mt, bi, "balanced")
        for w, bj, low_w in widths:
            need = h * w + w + 2
            transfers = Kt * (low_h + low_w) * D + low_h * low_w * D
            if need > S or transfers > OVERLAP_DMA_SHARE * Kt * low_h * low_w * m:
                continue
            cand = (need, (h + w) / (h * w), w, -h, bi, bj)
            if best is None or cand < best:
                best = cand
    default = default or default_params(shape, machine)
    if best is None or (best[4], best[5]) == (default.bi, default.bj):
        return None
    h, w = -best[3], best[2]
    # Two whole steps of products ahead: the free slots, not the lookahead, then limit the prefetch.
    return GeneralParams(
        bi=best[4],
        bj=best[5],
        partition="balanced",
        block_order="col",
        serpentine=True,
        k_direction="alternate",
        inner="lshape",
        tail=2,
        lookahead=2 * h * w,
        store_first=False,
    )


def panel_params(
    shape: Shape, machine: Machine, default: GeneralParams | None = None
) -> GeneralParams | None:
    """A starting point that keeps a whole panel of one operand resident, when that moves fewer
    tiles than default_params's block; None otherwise.

    Visiting blocks along rows, a band of h rows uses the same h Kt tiles of A in every block of
    the band: with those tiles held (h Kt slots, plus h accumulators of a one-column block and an
    A and a B in flight), the next-use eviction keeps them, so A moves once (Mt Kt tiles) and B
    once per band (bands x Kt Nt). Columns likewise with a panel of B. Small K makes panels fit
    (384x64x512 on 48 slots: 4 x 8 tiles of A held, 9,479 tiles moved against 10,658 for the
    best streaming block). The slots left over set the lookahead (twice the spare: a panel
    needs less run-ahead than a streaming block, whose default is four times). `default`:
    default_params(shape, machine), when the caller has it."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    S = machine.slots
    default = default or default_params(shape, machine)
    h, w = (
        largest_band(Mt, default.bi, default.partition),
        largest_band(Nt, default.bj, default.partition),
    )
    best: tuple[float, str, int, int] = (
        Mt * Kt * Nt * (h + w) / (h * w),
        "",
        0,
        0,
    )  # loads to beat: the default's
    for order, rows, cols in (("row", Mt, Nt), ("col", Nt, Mt)):
        for height, size in _band_heights(rows, S):
            spare = S - (height * Kt + height + 4)
            if spare < 0:
                break
            loads = rows * Kt + -(-rows // size) * Kt * cols
            if loads < best[0]:
                best = (loads, order, size, spare)
    _, order, size, spare = best
    if not order:
        return None
    bi, bj = (size, 1) if order == "row" else (1, size)
    return GeneralParams(
        bi=bi,
        bj=bj,
        partition="balanced",
        block_order=order,
        serpentine=True,
        k_direction="alternate",
        inner="row",
        tail=0,
        lookahead=max(2, 2 * spare),
        store_first=False,
    )
