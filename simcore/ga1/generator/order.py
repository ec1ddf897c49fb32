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


def shortest_band(total: int, size: int, partition: str) -> int:
    """The shortest of bands(total, size, partition) (its last), without listing them."""
    size = min(size, total)
    count = -(-total // size)
    if partition == "uniform":
        return total - (count - 1) * size
    return total // count


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
