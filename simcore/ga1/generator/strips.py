"""Strip schedules: output-stationary blocks sized by the scratchpad, laid out in strips.

For small scratchpads the general generator's one block shape (bi x bj everywhere) wastes loads at
the matrix's edges and stalls on the step boundaries. A strip schedule chooses every block from the
slot count instead, and orders each k step so that the DMA can keep streaming.

The order is defined by these rules (orientation "col"; "row" is the same with the roles of rows
and columns, A and B, swapped):

1. Slot rule. A block of h x w accumulators keeps the shorter side's operand tiles of the current
   k step resident (min(h, w) of them) while the longer side's tiles stream past through `reserve`
   more slots: h w + min(h, w) + reserve <= S. The height of a strip of width w is the largest
   h <= Mt that obeys it, height(w).
2. Strip widths. C's columns are cut into strips of widths w_1 + ... + w_n = Nt. A strip of width w
   is cut into ceil(Mt / height(w)) blocks (near-equal heights for "balanced", height(w) and a
   shorter last one for "uniform"), so one k step of the strip loads Mt A tiles and
   ceil(Mt / height(w)) w B tiles: cost(w) = Mt + ceil(Mt / height(w)) w. The widths minimise the
   sum of cost(w_i) (a knapsack over Nt: best(n) = min over w of best(n - w) + cost(w), the smallest
   w winning ties), and are visited narrowest first ("narrow") or widest first ("wide").
3. Visiting order. Strip by strip; the blocks of strip s run top to bottom when s + first_reverse
   is even, bottom to top otherwise (serpentine: consecutive blocks share their columns).
4. k direction. Block number b (in visiting order) walks k up when b is even and down when b is
   odd, so consecutive blocks meet on the same k step and can reuse its tiles.
5. One k step of an h x w block. If h <= w the A tiles (rows) are held and the B tiles (columns)
   stream; otherwise the B tiles are held and the A tiles stream. Let the streamed lines be
   0, 1, ..., L - 1 (reversed in odd blocks when `flip`, so the turnaround reuses the last streamed
   tiles first) and t = min(split, L). The first L - t streamed lines visit, each, every held line;
   the last t streamed lines are then visited held line by held line, so the held tiles retire one
   by one and the next step's held tiles can load behind them.
6. Tail. The last `tail` k steps of a block (tail < Kt) run cell by cell, in step 5's cell order,
   so the block's accumulators finish one after another and their stores overlap the products.

The compiler (compile.py) then assigns slots, prefetches up to `lookahead` products ahead and, with
`protect`, never lets a prefetch evict a tile needed within `protect` products of it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fractions import Fraction

from simcore.ga1.estimate import MAX_STRIPS as MAX_STRIPS  # where the engine and tests read it
from simcore.ga1.generator.compile import CompileOptions, Product, compile_products
from simcore.ga1.generator.order import PARTITIONS, bands, block_products
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.schedules import ScheduleError
from simcore.shape import Shape

STRIP_AXES: tuple[str, ...] = ("col", "row")
STRIP_ORDERS: tuple[str, ...] = ("narrow", "wide")

Block = tuple[range, range]  # (rows, columns) of C tiles


@dataclass(frozen=True)
class StripParams:
    """Scalar parameters of a strip schedule (each maps to one search-space dimension)."""

    axis: str = "col"  # "col": column strips, blocks stacked down a strip; "row": row strips
    reserve: int = 2  # slots per block beyond its accumulators and held tiles, >= 1
    strip_order: str = "narrow"  # strips narrowest first ("narrow") or widest first ("wide")
    first_reverse: bool = False  # the first strip runs bottom to top (right to left for "row")
    partition: str = (
        "balanced"  # block heights inside a strip: near-equal, or full and a shorter last
    )
    split: int = 2  # the last `split` streamed lines of a step go held line by held line, >= 0
    flip: bool = True  # odd blocks stream in reverse, so the turnaround reuses tiles
    tail: int = 0  # the last `tail` k steps of a block run cell by cell, >= 0
    lookahead: int = 16  # products the DMA may run ahead of the matrix unit, >= 0
    store_first: bool = False  # a ready store goes before the loads due at the same point
    protect: int = 8  # a prefetch never evicts a tile needed within this many products, >= 0
    store_delay: int = 0  # products the matrix unit runs before a finished accumulator is stored

    def __post_init__(self) -> None:
        for name, low in (
            ("reserve", 1),
            ("split", 0),
            ("tail", 0),
            ("lookahead", 0),
            ("protect", 0),
            ("store_delay", 0),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ScheduleError(f"{name} must be an integer >= {low}, got {value!r}")
        for name, allowed in (
            ("axis", STRIP_AXES),
            ("strip_order", STRIP_ORDERS),
            ("partition", PARTITIONS),
        ):
            if getattr(self, name) not in allowed:
                raise ScheduleError(
                    f"unknown {name} {getattr(self, name)!r} (use one of {', '.join(allowed)})"
                )
        for name in ("first_reverse", "flip", "store_first"):
            if not isinstance(getattr(self, name), bool):
                raise ScheduleError(f"{name} must be a bool, got {getattr(self, name)!r}")

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def options(self) -> CompileOptions:
        return CompileOptions(
            lookahead=self.lookahead,
            store_first=self.store_first,
            protect=self.protect,
            store_delay=self.store_delay,
        )


def block_height(width: int, slots: int, reserve: int, limit: int) -> int:
    """height(w): the tallest block of width `width` (at most `limit`) that obeys the slot rule."""
    best = 0
    for h in range(1, limit + 1):
        if h * width + min(h, width) + reserve > slots:
            break  # the left side grows with h
        best = h
    return best


# MAX_STRIPS (simcore.ga1.estimate, which prices them without loading numpy): strips a schedule
# may cut C into; a schedule of more is refused (TooManyStrips). The knapsack that chooses the
# widths is refused past STRIP_TABLE_WORK steps (seconds of Python), which only a scratchpad of
# thousands of slots with as many tiles across reaches.
STRIP_TABLE_WORK = 1 << 24

Runs = tuple[tuple[int, int], ...]  # (width, how many strips of it), narrowest first


class TooManyStrips(ScheduleError):
    """The strip schedule would cut C into more strips than the engine plans, or choosing its
    widths would take too long."""


def _strip_costs(long_tiles: int, cut_tiles: int, slots: int, reserve: int) -> list[int]:
    """cost(w) for w = 1, 2, ... while a block of width w obeys the slot rule (index w - 1)."""
    costs: list[int] = []
    for w in range(1, cut_tiles + 1):
        h = block_height(w, slots, reserve, long_tiles)
        if h == 0:
            break  # wider strips only need more slots
        costs.append(long_tiles + math.ceil(long_tiles / h) * w)
    return costs


def _knapsack(costs: list[int], length: int) -> tuple[list[int], list[int]]:
    """best[n] and choice[n] for n = 0..length: the least total cost of widths summing to n, and
    the narrowest width that starts such a sum."""
    best = [0] * (length + 1)
    choice = [0] * (length + 1)
    for n in range(1, length + 1):
        top, pick = best[n - 1] + costs[0], 1
        for w in range(2, min(n, len(costs)) + 1):
            value = best[n - w] + costs[w - 1]
            if value < top:
                top, pick = value, w
        best[n], choice[n] = top, pick
    return best, choice


def strip_width_runs(long_tiles: int, cut_tiles: int, slots: int, reserve: int) -> tuple[int, Runs]:
    """(loads per k step, widths as runs): the strip widths summing to `cut_tiles` of least total
    cost, narrowest first; (0, ()) when even a 1 x 1 block breaks the slot rule.

    The knapsack is periodic. Let w* be a width of least cost per tile across, W the widest. Any
    w* widths other than w* hold some that sum to a multiple of w*, which w* strips cover at no
    more cost, so from n >= w* W on a best cut holds a w* strip: best(n) = best(n - w*) + cost(w*);
    and from n >= (w* + 1) W on, the narrowest best first width of n is that of n - w*. The table
    is kept up to there; past it the walk n -> n - choice(n) depends on n modulo w* alone, and once
    a residue recurs the cycle between is repeated at once. Work: about W^2 w* steps, whatever
    the cut; TooManyStrips past STRIP_TABLE_WORK."""
    costs = _strip_costs(long_tiles, cut_tiles, slots, reserve)
    if not costs:
        return 0, ()
    W = len(costs)
    star = min(range(1, W + 1), key=lambda w: (Fraction(costs[w - 1], w), w))
    periodic_from = (star + 1) * W  # choice(n) = choice(n - star) from here on
    length = min(cut_tiles, periodic_from + star)
    if length * W > STRIP_TABLE_WORK:
        raise TooManyStrips(
            f"planning strips across {cut_tiles} tiles with blocks up to {W} wide takes "
            f"{length * W:.3g} steps, more than {STRIP_TABLE_WORK:.3g}"
        )
    best, choice = _knapsack(costs, length)

    def first_width(n: int) -> int:
        return choice[n if n <= length else periodic_from + (n - periodic_from) % star]

    counts = [0] * (W + 1)
    n = cut_tiles
    seen: dict[int, tuple[int, list[int]]] = {}  # residue -> (n, counts) when the walk was there
    while n > length:
        residue = (n - periodic_from) % star
        if residue in seen:  # the walk repeats: skip its whole cycles
            before_n, before_counts = seen[residue]
            span = before_n - n
            repeats = (n - length) // span
            n -= repeats * span
            counts = [c + repeats * (c - b) for c, b in zip(counts, before_counts)]
            seen = {}
            if n <= length:
                break
        seen[residue] = (n, list(counts))
        w = first_width(n)
        counts[w] += 1
        n -= w
    while n:
        counts[choice[n]] += 1
        n -= choice[n]
    cost = sum(count * costs[w - 1] for w, count in enumerate(counts) if count)
    return cost, tuple((w, count) for w, count in enumerate(counts) if count)


def strip_widths(
    long_tiles: int, cut_tiles: int, slots: int, reserve: int
) -> tuple[int, list[int]]:
    """(loads per k step, widths): the strip widths summing to `cut_tiles` of least total cost,
    narrowest first (`strip_width_runs`, listed).

    `long_tiles` is the length of every strip (Mt for column strips). Returns (0, []) when even a
    1 x 1 block breaks the slot rule."""
    cost, runs = strip_width_runs(long_tiles, cut_tiles, slots, reserve)
    return cost, [w for w, count in runs for _ in range(count)]


def strip_blocks(shape: Shape, machine: Machine, params: StripParams) -> list[Block]:
    """The blocks of C in visiting order (rules 1 to 3); empty when no block fits the slots."""
    Mt, _Kt, Nt = shape.tiles(machine.T)
    long_tiles, cut_tiles = (Mt, Nt) if params.axis == "col" else (Nt, Mt)
    _cost, widths = strip_widths(long_tiles, cut_tiles, machine.slots, params.reserve)
    if params.strip_order == "wide":
        widths.reverse()
    out: list[Block] = []
    start = 0
    for s, width in enumerate(widths):
        across = range(start, start + width)
        start += width
        height = block_height(width, machine.slots, params.reserve, long_tiles)
        along = bands(long_tiles, height, params.partition)
        if (s + params.first_reverse) % 2:
            along.reverse()
        if params.axis == "col":
            out += [(rows, across) for rows in along]
        else:
            out += [(across, cols) for cols in along]
    return out


def step_cells(h: int, w: int, split: int, reverse: bool) -> list[tuple[int, int]]:
    """Rule 5: the (x, y) cells of an h x w block in the order one k step visits them."""
    held, streamed = (h, w) if h <= w else (w, h)
    lines = list(range(streamed))
    if reverse:
        lines.reverse()
    t = min(split, streamed)
    order = [(s, k) for s in lines[: streamed - t] for k in range(held)]
    order += [(s, k) for k in range(held) for s in lines[streamed - t :]]
    # (streamed line, held line) -> (x, y)
    return [(k, s) for s, k in order] if h <= w else [(s, k) for s, k in order]


def strip_order(shape: Shape, machine: Machine, params: StripParams) -> list[Product]:
    """Every tile product (i, j, k) once, in the order of rules 1 to 6."""
    _Mt, Kt, _Nt = shape.tiles(machine.T)
    tail = min(params.tail, Kt - 1)
    order: list[Product] = []
    extend = order.extend
    for index, (rows, cols) in enumerate(strip_blocks(shape, machine, params)):
        ks = range(Kt - 1, -1, -1) if index % 2 else range(Kt)
        local = step_cells(len(rows), len(cols), params.split, params.flip and index % 2 == 1)
        extend(block_products([(rows[x], cols[y]) for x, y in local], ks, tail))
    return order


def strip_slots_needed(shape: Shape, machine: Machine, params: StripParams) -> int:
    """Slots the compiled order needs: its largest block's accumulators plus an A and a B tile.

    Every block's accumulators are live together unless K is a single step; blocks never overlap.
    The blocks are sized by `machine.slots`, so the need is at most the slots whenever a 1 x 1 block
    obeys the slot rule; otherwise it is the slots a 1 x 1 block with the reserve would need."""
    _Mt, Kt, _Nt = shape.tiles(machine.T)
    blocks = strip_blocks(shape, machine, params)
    if not blocks:
        return 2 + params.reserve
    if Kt == 1:
        return 3
    return max(len(rows) * len(cols) for rows, cols in blocks) + 2


def strips(shape: Shape, machine: Machine, params: StripParams) -> Program:
    """The program of the strip schedule: the product order, compiled."""
    need = strip_slots_needed(shape, machine, params)
    if need > machine.slots:
        raise ScheduleError(
            f"strip schedule {params} needs {need} slots, the scratchpad has {machine.slots}"
        )
    return compile_products(
        shape, machine, strip_order(shape, machine, params), params.options(), validate=False
    )


def strip_loads_estimate(shape: Shape, machine: Machine, params: StripParams) -> int:
    """Tiles the schedule moves without any reuse between blocks: Kt loads-per-step plus C's stores."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    loads = sum(len(rows) + len(cols) for rows, cols in strip_blocks(shape, machine, params))
    return Kt * loads + Mt * Nt
