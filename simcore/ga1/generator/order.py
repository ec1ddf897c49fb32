"""Orders of tile products for C = A @ B, described by a few scalar parameters.

The order is output-stationary by blocks: C is cut into blocks of about bi x bj tiles (bands
need not divide the matrix; "balanced" makes them near-equal), blocks are visited row- or
column-wise (optionally serpentine), and inside a block K is walked one step at a time, every
accumulator of the block taking one product per step. The knobs shape what the compiler can
overlap: the k direction of each block (reuse of the previous block's last operands), the order
of products inside a step (an L-shaped front needs few loads to start), and a tail that finishes
accumulators one after another so that their stores overlap the remaining products.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from simcore.ga1.generator.compile import CompileOptions, Product, compile_products
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.schedules import ScheduleError
from simcore.shape import Shape

PARTITIONS: tuple[str, ...] = ("uniform", "balanced")
BLOCK_ORDERS: tuple[str, ...] = ("row", "col")
K_DIRECTIONS: tuple[str, ...] = ("up", "alternate")
INNER_ORDERS: tuple[str, ...] = ("row", "col", "lshape", "zigzag")
STRUCTURES: tuple[str, ...] = ("blocks", "rotate")
# overlap_params: the most of a block's time its transfers may take. A step loads in bursts, so
# a block whose transfers fill all of its products' time stalls the matrix unit now and then.
# Chosen by measurement: 344x344x96 on 56 slots, 5 x 6 blocks at 97.5% end 1.2% above the bound;
# 248x512x280 on 64 slots, 6 x 5 at 95.6% come within 0.02% of it.
OVERLAP_DMA_SHARE = 0.97


@dataclass(frozen=True)
class GeneralParams:
    """Scalar parameters of the general schedule (each maps to one search-space dimension)."""

    bi: int = 4  # block height in tiles, >= 1 (clipped to the matrix)
    bj: int = 4  # block width in tiles, >= 1
    partition: str = (
        "balanced"  # "uniform": bands of bi (the last shorter); "balanced": near-equal bands
    )
    block_order: str = "row"  # visit blocks along rows ("row") or along columns ("col")
    serpentine: bool = (
        True  # reverse every other row (column) of blocks, so neighbours share operands
    )
    k_direction: str = (
        "alternate"  # "up": k ascending in every block; "alternate": every other block descends
    )
    inner: str = (
        "lshape"  # order inside a k step: "row", "col", "lshape" (growing square), "zigzag"
    )
    tail: int = 2  # the last `tail` k steps of a block run accumulator by accumulator, >= 0
    lookahead: int = 16  # products the DMA may run ahead of the matrix unit, >= 0
    store_first: bool = True  # a ready store goes before the loads due at the same point
    store_delay: int = 0  # products the matrix unit runs before a finished accumulator is stored
    structure: str = "blocks"  # "blocks": k-synchronous blocks; "rotate": a sliding window of units (see rotate_order)
    ramp: int = 0  # rotate: the first `ramp` units all start at step 0 (a faster start), >= 0

    def __post_init__(self) -> None:
        for name in ("bi", "bj"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ScheduleError(f"{name} must be a positive integer, got {value!r}")
        for name in ("tail", "lookahead", "store_delay", "ramp"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ScheduleError(f"{name} must be a non-negative integer, got {value!r}")
        for name, allowed in (
            ("partition", PARTITIONS),
            ("block_order", BLOCK_ORDERS),
            ("k_direction", K_DIRECTIONS),
            ("inner", INNER_ORDERS),
            ("structure", STRUCTURES),
        ):
            if getattr(self, name) not in allowed:
                raise ScheduleError(
                    f"unknown {name} {getattr(self, name)!r} (use one of {', '.join(allowed)})"
                )
        for name in ("serpentine", "store_first"):
            if not isinstance(getattr(self, name), bool):
                raise ScheduleError(f"{name} must be a bool, got {getattr(self, name)!r}")

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def options(self) -> CompileOptions:
        return CompileOptions(
            lookahead=self.lookahead, store_first=self.store_first, store_delay=self.store_delay
        )


def bands(total: int, size: int, partition: str) -> list[range]:
    """Cut 0..total-1 into bands of about `size`: uniform (last one shorter) or near-equal."""
    size = min(size, total)
    if partition == "uniform":
        return [range(start, min(start + size, total)) for start in range(0, total, size)]
    count = math.ceil(total / size)
    base, extra = divmod(total, count)
    out, start = [], 0
    for index in range(count):
        height = base + (1 if index < extra else 0)
        out.append(range(start, start + height))
        start += height
    return out


def cell_order(h: int, w: int, inner: str) -> list[tuple[int, int]]:
    """The (x, y) cells of an h x w block in the order a k step visits them."""
    if inner == "row":
        return [(x, y) for x in range(h) for y in range(w)]
    if inner == "col":
        return [(x, y) for y in range(w) for x in range(h)]
    if inner == "zigzag":  # rows alternate direction: consecutive products share an operand
        return [(x, y if x % 2 == 0 else w - 1 - y) for x in range(h) for y in range(w)]
    # lshape: square shells; after a rows and b columns are loaded, all a*b cells are done
    cells = []
    for r in range(max(h, w)):
        cells += [(x, r) for x in range(min(r, h)) if r < w]
        cells += [(r, y) for y in range(min(r + 1, w)) if r < h]
    return cells


def blocks(shape: Shape, machine: Machine, params: GeneralParams) -> list[tuple[range, range]]:
    """The blocks (row band, column band) of C, in visiting order."""
    Mt, _Kt, Nt = shape.tiles(machine.T)
    row_bands = bands(Mt, params.bi, params.partition)
    col_bands = bands(Nt, params.bj, params.partition)
    out: list[tuple[range, range]] = []
    if params.block_order == "row":
        for r, rows in enumerate(row_bands):
            cols_seq = col_bands[::-1] if params.serpentine and r % 2 else col_bands
            out += [(rows, cols) for cols in cols_seq]
    else:
        for c, cols in enumerate(col_bands):
            rows_seq = row_bands[::-1] if params.serpentine and c % 2 else row_bands
            out += [(rows, cols) for rows in rows_seq]
    return out


def units(shape: Shape, machine: Machine, params: GeneralParams) -> list[list[tuple[int, int]]]:
    """rotate: the C tiles cut into units (a column of a row band, or a row of a column band),
    in visiting order; consecutive units share their band's operand tiles."""
    Mt, _Kt, Nt = shape.tiles(machine.T)
    out: list[list[tuple[int, int]]] = []
    if params.block_order == "row":
        for r, rows in enumerate(bands(Mt, params.bi, params.partition)):
            cols = range(Nt - 1, -1, -1) if params.serpentine and r % 2 else range(Nt)
            out += [[(i, j) for i in rows] for j in cols]
    else:
        for c, cols_band in enumerate(bands(Nt, params.bj, params.partition)):
            rows_seq = range(Mt - 1, -1, -1) if params.serpentine and c % 2 else range(Mt)
            out += [[(i, j) for j in cols_band] for i in rows_seq]
    return out


def _window(shape: Shape, machine: Machine, params: GeneralParams) -> int:
    Mt, _Kt, Nt = shape.tiles(machine.T)
    return min(params.bj, Nt) if params.block_order == "row" else min(params.bi, Mt)


def _entry_steps(count: int, kt: int, window: int, ramp: int) -> list[int]:
    # Unit u starts at step floor(u Kt / W): one unit leaves as another enters, so at most W
    # units are live and their stores are spread evenly; the first `ramp` (at most W) all start
    # at once, which keeps at most W live.
    ramp = min(ramp, window)
    return [0 if u < ramp else (u * kt) // window for u in range(count)]


def rotate_order(shape: Shape, machine: Machine, params: GeneralParams) -> list[Product]:
    """A sliding window of W units (W = bj for row bands, bi for column bands) over the C tiles.

    Global step t multiplies every live unit by k = t mod Kt, so all live units share the step's
    A and B tiles as in a block; a unit lives for Kt consecutive steps, which cover every k once
    (the k's of a C tile may come in any order). Units enter one at a time, so accumulators
    finish one unit at a time and their stores overlap the products, with no block restarts."""
    _Mt, Kt, _Nt = shape.tiles(machine.T)
    seq = units(shape, machine, params)
    window = _window(shape, machine, params)
    entry = _entry_steps(len(seq), Kt, window, params.ramp)
    order: list[Product] = []
    extend = order.extend
    steps = entry[-1] + Kt if seq else 0
    u_next = 0
    live: list[int] = []
    for t in range(steps):
        while u_next < len(seq) and entry[u_next] <= t:
            live.append(u_next)
            u_next += 1
        k = t % Kt
        for u in live:
            extend([(i, j, k) for i, j in seq[u]])
        live = [u for u in live if entry[u] + Kt - 1 > t]
    return order


def product_order(shape: Shape, machine: Machine, params: GeneralParams) -> list[Product]:
    """Every tile product (i, j, k) once, in the order the parameters describe."""
    if params.structure == "rotate":
        return rotate_order(shape, machine, params)
    _Mt, Kt, _Nt = shape.tiles(machine.T)
    order: list[Product] = []
    extend = order.extend
    tail = min(params.tail, Kt)
    cells_cache: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for index, (rows, cols) in enumerate(blocks(shape, machine, params)):
        ks = list(range(Kt))
        if params.k_direction == "alternate" and index % 2:
            ks.reverse()
        key = (len(rows), len(cols))
        if key not in cells_cache:
            cells_cache[key] = cell_order(len(rows), len(cols), params.inner)
        extend(block_products([(rows[x], cols[y]) for x, y in cells_cache[key]], ks, tail))
    return order


def block_products(cells: list[tuple[int, int]], ks: list[int] | range, tail: int) -> list[Product]:
    """One block's products: every cell at each k step in turn, then the last `tail` k steps
    cell by cell (each cell's accumulator finishes early so its store overlaps the rest)."""
    head = len(ks) - tail
    products = [(i, j, k) for k in ks[:head] for i, j in cells]
    products.extend((i, j, k) for i, j in cells for k in ks[head:])
    return products


def largest_band(total: int, size: int, partition: str) -> int:
    """The longest of bands(total, size, partition), without listing them; also the smallest
    size that cuts 0..total-1 into the same bands as `size`."""
    size = min(size, total)
    if partition == "uniform":
        return size
    return -(-total // -(-total // size))


def slots_needed(shape: Shape, machine: Machine, params: GeneralParams) -> int:
    """Slots the compiled order needs at least: its most live accumulators plus an A and a B.

    In a block, every accumulator starts before the first one finishes unless the whole K runs
    accumulator by accumulator (tail >= Kt) or K is a single step; blocks never overlap. The
    rotating window holds W units at most, and W consecutive units span at most two bands (a band
    has as many units as the window may hold), so the most live accumulators are W units of the
    tallest band. Closed forms: no list of blocks or units is made."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    if Kt == 1:
        return 3
    if params.structure == "rotate":
        unit = (
            largest_band(Mt, params.bi, params.partition)
            if params.block_order == "row"
            else largest_band(Nt, params.bj, params.partition)
        )
        return _window(shape, machine, params) * unit + 2
    if params.tail >= Kt:
        return 3
    return (
        largest_band(Mt, params.bi, params.partition)
        * largest_band(Nt, params.bj, params.partition)
        + 2
    )


def general(shape: Shape, machine: Machine, params: GeneralParams) -> Program:
    """The program of the general schedule: the product order, compiled."""
    need = slots_needed(shape, machine, params)
    if need > machine.slots:
        raise ScheduleError(
            f"general schedule {params} needs {need} slots, the scratchpad has {machine.slots}"
        )
    return compile_products(
        shape, machine, product_order(shape, machine, params), params.options(), validate=False
    )


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
    widths = [(w, bj, len(bands(Nt, bj, "balanced")[-1])) for w, bj in _band_heights(Nt, 2 * S + 2)]
    for h, bi in _band_heights(Mt, 2 * S + 2):
        low_h = len(bands(Mt, bi, "balanced")[-1])
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
