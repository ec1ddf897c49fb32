"""Lower bounds on the cycles of any GA-1 schedule for C = A @ B, for any shape, machine and slots.

Two independent bounds, each a true lower bound:

* `compute_pipeline_bound`: the matrix unit's work, plus the products that cannot start until
  enough tiles have arrived, plus the fill and one store at the end;
* `io_bound_tiles`: the tiles any schedule must move with S slots (a red-blue-pebble argument in
  which accumulators occupy slots like operands), times the cycles of one transfer.

`lower_bound` is the larger of the two, in cycles.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from simcore.ga1.machine import Machine
from simcore.shape import Shape


def _pair_products(s: int, mt: int, nt: int) -> int:
    """h(s): the most products of one k step that s tiles of that step (a of A, b of B) allow:
    the most of a (s - a) for max(0, s - nt) <= a <= min(mt, s). The product is concave in a, so
    the best a is the one nearest s / 2 (no loop: a bound over large tile counts stays cheap)."""
    low, high = max(0, s - nt), min(mt, s)
    if low > high:
        return 0
    a = min(max(s // 2, low), high)
    return a * (s - a)


def max_products_after(n: int, mt: int, kt: int, nt: int) -> int:
    """g(n): the most tile products that can run once n operand tiles have been loaded.

    A product (i, j, k) needs A(i, k) and B(k, j); with s_k tiles of step k loaded, at most
    h(s_k) products of step k can run. h is convex on 0..mt+nt (its increments floor((s+1)/2),
    then min(mt, nt), never decrease), so the sum of h over steps with n tiles in all is largest
    when every step but one is full or empty: g(n) = q * mt * nt + h(r), n = q (mt + nt) + r."""
    period = mt + nt
    q, r = divmod(n, period)
    if q >= kt:
        return mt * kt * nt
    return q * mt * nt + _pair_products(r, mt, nt)


@functools.lru_cache(maxsize=1024)  # every trial of a study asks for the same shape's
def compute_pipeline_bound(shape: Shape, machine: Machine) -> int:
    """Cycles no schedule can beat because of the matrix unit and its start and finish.

    Derivation. Let P = Mt Kt Nt products of `mxu_cycles` m each, run one at a time in the
    matrix unit's order, and D = dma_cycles. The DMA moves one tile at a time, so the n-th load
    finishes no earlier than n D. The q-th product needs n loads done, where n is the least with
    g(n) >= q (g: `max_products_after`), so it starts no earlier than n D and the last product
    finishes no earlier than n D + (P - q + 1) m. For each n the binding q is the first product
    that needs n tiles, q = g(n - 1) + 1, hence

        F >= max over n with g(n - 1) < P of  n D + (P - g(n - 1)) m.

    The last product's tile can be read fill cycles after it finishes and must then be stored
    (D cycles): the bound is F + mxu_fill + D. For 128^3 on the default GA-1, g(n) = floor(n^2/4)
    for small n and the maximum is at n = 6 (g(5) = 6): 6 * 20 + (32768 / 8 - 6) * 8 = 32840,
    plus 8 + 20 = 32868.

    g(n - 1) grows by the same amount every mt + nt tiles, so n D - g(n - 1) m changes by a fixed
    amount per period: its maximum is in the first or the last period, the only ones evaluated.
    Within a period g(n - 1) m is convex in n (h is), so n D - g(n - 1) m is concave there and
    its maximum is found by bisection: the work is logarithmic in the tiles."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    P = Mt * Kt * Nt
    D = machine.dma_cycles
    m = machine.mxu_cycles
    period = Mt + Nt
    n_max = Kt * period  # g(n_max - 1) < P <= g(n_max)

    def done(n: int) -> int:
        return max_products_after(n - 1, Mt, Kt, Nt)

    def finish_after(n: int) -> int:
        return n * D + (P - done(n)) * m

    finish = P * m
    for low, high in ((2, min(n_max, period + 2)), (max(2, n_max - period - 1), n_max)):
        for start, end in _periods(low, high, period):
            end = _last(start, end, lambda n: done(n) < P)
            if end >= start:
                best = _first(
                    start, end, lambda n: n == end or finish_after(n + 1) < finish_after(n)
                )
                finish = max(finish, finish_after(best))
    return finish + machine.mxu_fill + D


def _periods(low: int, high: int, period: int) -> list[tuple[int, int]]:
    """low..high cut where n - 1 starts a new period (g's q steps up)."""
    pieces = []
    while low <= high:
        end = min(high, ((low - 1) // period + 1) * period)
        pieces.append((low, end))
        low = end + 1
    return pieces


def _first(low: int, high: int, holds: Callable[[int], bool]) -> int:
    """The least n in low..high for which `holds`, a predicate false then true (true at high)."""
    while low < high:
        mid = (low + high) // 2
        if holds(mid):
            high = mid
        else:
            low = mid + 1
    return low


def _last(low: int, high: int, holds: Callable[[int], bool]) -> int:
    """The greatest n in low..high for which `holds`, a predicate true then false; low - 1 if none."""
    if low > high or not holds(low):
        return low - 1
    return _first(low, high, lambda n: n == high or not holds(n + 1))


@functools.lru_cache(maxsize=256)
def _window_products(budget_max: int, mt: int, nt: int, cells: int) -> tuple[int, ...]:
    """F[B] for B = 0..budget_max: the most products of one window holding B distinct tiles.

    With c accumulators (C tiles) and the rest of the B tiles operands, step k's products are at
    most min(h(s_k), c) for its s_k operand tiles; the best split of the operands over steps is an
    unbounded knapsack (its optimum is an upper bound, the step count not being limited)."""
    out = [0] * (budget_max + 1)
    h = [_pair_products(s, mt, nt) for s in range(min(budget_max, mt + nt) + 1)]
    for c in range(1, min(cells, budget_max) + 1):
        # A step bigger than the first that reaches c products only costs more.
        sizes = [s for s in range(1, len(h)) if h[s] > 0]
        cap = next((s for s in sizes if h[s] >= c), None)
        if cap is not None:
            sizes = [s for s in sizes if s <= cap]
        values = [min(h[s], c) for s in sizes]
        items = list(zip(sizes, values))
        dp = [0] * (budget_max - c + 1)
        for b in range(1, len(dp)):
            best = dp[b - 1]
            for s, v in items:
                if s > b:
                    break
                cand = dp[b - s] + v
                if cand > best:
                    best = cand
            dp[b] = best
        for total in range(c, budget_max + 1):
            if dp[total - c] > out[total]:
                out[total] = dp[total - c]
    return tuple(out)


def window_products(budget_max: int, mt: int, nt: int, cells: int) -> tuple[int, ...]:
    """F[B] for B = 0..budget_max: the most products of one window of an Mt x Nt tile grid (with
    `cells` C tiles) holding B distinct tiles; cached."""
    return _window_products(budget_max, mt, nt, cells)


def forget_bounds() -> None:
    """Drop the cached bounds of shapes, so that the next bound is computed as for a new shape
    (the window products, which depend on the tile grid only, stay cached)."""
    compute_pipeline_bound.cache_clear()
    _io_bound.cache_clear()


def io_bound_tiles(shape: Shape, machine: Machine) -> int:
    """Tiles any schedule must move (loads plus stores) with `machine.slots` slots.

    Model: every product runs once; each C tile's accumulation starts once, by a zero or a load,
    and every zeroed accumulator is eventually stored (no vector-unit sums of partial results),
    as in the chapter's schedules and the generator's. A zero then costs no transfer, but it is
    matched by a store, so tiles moved = loads + stores >= loads + zeros =: I.

    Derivation (red-blue pebble, accumulators counted as tiles). Order the events of I (loads and
    zeros) by start and cut them into windows of X events; a window's products are those that start
    between its first event's start and the next window's. A product reads tiles written by an
    earlier event that started no later than the product: one of the window's own (at most X), or
    one written before the window and still held when the window's first event starts. That event
    writes a slot whose old value no product of the window can read (a write waits until the last
    read of the slot's old value has finished), so at most S - 1 such tiles remain, and none in the
    first window. A window thus uses at most B = S - 1 + X distinct tiles (the first at most X): c
    C tiles and s_k operand tiles of each step k. Its products of step k need distinct C tiles and
    an A and a B tile each, so number at most min(h(s_k), c); summed, at most F(B)
    (`_window_products`). All P products lie in ceil(I / X) windows, so
    F(X) + (ceil(I / X) - 1) F(S - 1 + X) >= P, i.e. I >= X ceil((P - F(X)) / F(S - 1 + X)) + 1,
    for every X. The bound is the best X, and never less than moving every tile of A and B in and
    of C out once. For 128^3 with 16 slots: X = 28, F(43) = 50, F(28) = 27,
    I >= 28 * ceil(4069 / 50) + 1 = 2297 (45,940 cycles)."""
    return _io_bound(shape.tiles(machine.T), machine.slots)


# The window argument's dynamic program costs about min(cells, budget) x budget steps of Python
# (budget: slots plus the largest window tried). Beyond this it would take seconds; the bound then
# falls back to moving every tile once, still a proven lower bound (only a weaker one).
WINDOW_WORK = 1_200_000


@functools.lru_cache(maxsize=1024)
def _io_bound(tiles: tuple[int, int, int], S: int) -> int:
    Mt, Kt, Nt = tiles
    P = Mt * Kt * Nt
    compulsory = Mt * Kt + Kt * Nt + Mt * Nt
    held = S - 1  # tiles a window may find written before it (see io_bound_tiles)
    # A window that may hold every tile (held + X >= compulsory) allows every product, so its term
    # is at most X + 1 <= compulsory: such windows are not tried, and with S >= compulsory none is.
    # This keeps the work independent of the slot count.
    x_max = min(3 * S + 8, compulsory - held - 1)
    if x_max < 1 or min(Mt * Nt, held + x_max) * (held + x_max) > WINDOW_WORK:
        return compulsory
    F = _window_products(held + x_max, Mt, Nt, Mt * Nt)
    best = compulsory
    for X in range(1, x_max + 1):
        per_window = F[held + X]
        if per_window <= 0 or F[X] >= P:
            continue
        best = max(best, X * math.ceil((P - F[X]) / per_window) + 1)
    return best


def io_bound_cycles(shape: Shape, machine: Machine) -> int:
    """The DMA's time for `io_bound_tiles`: it moves one tile at a time."""
    return io_bound_tiles(shape, machine) * machine.dma_cycles


def lower_bound(shape: Shape, machine: Machine) -> int:
    """The larger of the pipeline bound and the I/O bound, in cycles."""
    return max(compute_pipeline_bound(shape, machine), io_bound_cycles(shape, machine))


__all__ = [
    "compute_pipeline_bound",
    "forget_bounds",
    "io_bound_tiles",
    "io_bound_cycles",
    "lower_bound",
    "max_products_after",
    "window_products",
]
