"""Compile a sequence of tile products into a GA-1 program: slots, reuse, prefetch, stores.

The input is an order of tile products (i, j, k), meaning C(i, j) += A(i, k) @ B(k, j). The
compiler decides everything else:

* one unified pool of slots holds A tiles, B tiles and C accumulators; an accumulator is zeroed
  before its first product and stored after its last (C tiles are never spilled or reloaded);
* an operand tile still resident is reused; when a slot is needed and none is free, the
  resident operand whose next use is farthest away is evicted (Belady), never one needed by a
  product inside the prefetch window;
* a DMA "frontier" walks the products ahead of the matrix unit (at most `lookahead` products
  ahead) and emits their loads and zeros as soon as a slot can be given to them. Because every
  engine runs its queue in program order, the program order *is* the schedule: a load into a
  slot is always emitted after (in program order) the products that read the slot's previous
  tile, so the hardware waits for them, and it is emitted as early as that allows;
* a finished accumulator's store is emitted right after its last product, before or after the
  loads due at that point (`store_first`); with `store_delay` > 0 it waits until the matrix unit
  has run that many more products, so the next products' loads go first and two blocks'
  accumulators may be live at once. A product that cannot start for want of a slot takes every
  waiting store first, so any order compiles with the same slots as without the delay;
* with `protect` > 0 a prefetch (a load for a product after the one the matrix unit runs next)
  may only evict a tile whose next use lies more than `protect` products beyond the product it
  prefetches for: evicting a tile needed that soon only moves it twice. A demand load still
  evicts as before, so every order compiles with the same slots; `protect` = 0 is the plain rule.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import Sequence

from simcore.ga1.machine import Machine
from simcore.ga1.program import (
    LOAD,
    MATMUL_TENSORS,
    MXU,
    NONE,
    STORE,
    TENSOR_A,
    TENSOR_B,
    TENSOR_C,
    ZERO,
    Program,
)
from simcore.ga1.schedules import ScheduleError
from simcore.shape import Shape

Product = tuple[int, int, int]  # (i, j, k): C(i, j) += A(i, k) @ B(k, j)


@dataclass(frozen=True)
class CompileOptions:
    """How far the DMA runs ahead, which of a ready store and a ready load goes first, how
    near a tile's next use must be for a prefetch to leave it alone, and how many products a
    finished accumulator's store waits."""

    lookahead: int = 16  # products ahead of the matrix unit whose tiles may be prefetched
    store_first: bool = True  # emit finished accumulators' stores before the loads due now
    protect: int = 0  # a prefetch never evicts a tile needed within this many products of it
    store_delay: int = 0  # products the matrix unit runs before a finished accumulator is stored

    def __post_init__(self) -> None:
        for name in ("lookahead", "protect", "store_delay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ScheduleError(f"{name} must be a non-negative integer, got {value!r}")


def check_products(shape: Shape, machine: Machine, products: Sequence[Product]) -> None:
    """Every tile product of the shape exactly once (the k's of a C tile in any order)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    total = Mt * Kt * Nt
    if len(products) != total:
        raise ScheduleError(
            f"expected {total} tile products for {shape} (tiles {Mt}x{Kt}x{Nt}), got {len(products)}"
        )
    seen = bytearray(total)
    for i, j, k in products:
        if not (0 <= i < Mt and 0 <= j < Nt and 0 <= k < Kt):
            raise ScheduleError(f"tile product {(i, j, k)} is outside the {Mt}x{Kt}x{Nt} tile grid")
        index = (i * Nt + j) * Kt + k
        if seen[index]:
            raise ScheduleError(f"tile product {(i, j, k)} appears twice")
        seen[index] = 1


def compile_products(
    shape: Shape,
    machine: Machine,
    products: Sequence[Product],
    options: CompileOptions = CompileOptions(),
    *,
    validate: bool = True,
) -> Program:
    """A program computing C = A @ B with the tile products in the given order."""
    if validate:
        check_products(shape, machine, products)
    Mt, Kt, Nt = shape.tiles(machine.T)
    S = machine.slots
    P = len(products)
    n_a = Mt * Kt
    n_ab = n_a + Kt * Nt
    inf = P + 1  # "never used again"
    pinned = P + 2  # next-use value of an accumulator slot: never evicted

    # Tile ids in one space: A tiles, then B tiles, then C tiles.
    a_ids = [i * Kt + k for i, _j, k in products]
    b_ids = [n_a + k * Nt + j for _i, j, k in products]
    c_ids = [n_ab + i * Nt + j for i, j, _k in products]

    # Next use of the same operand tile after each product; first and last product of each C.
    next_a = [inf] * P
    next_b = [inf] * P
    later = [inf] * n_ab
    for p in range(P - 1, -1, -1):
        a = a_ids[p]
        next_a[p] = later[a]
        later[a] = p
        b = b_ids[p]
        next_b[p] = later[b]
        later[b] = p
    c_last: dict[int, int] = {}
    for p, c in enumerate(c_ids):
        c_last[c] = p
    c_last_list = [c_last[c] == p for p, c in enumerate(c_ids)]

    where = [-1] * (n_ab + Mt * Nt)  # slot holding each tile, or -1
    slot_tile = [-1] * S
    slot_next = [inf] * S  # next use of the operand in a slot (pinned for accumulators)
    # Free slots, the longest free first, in two pools: slots whose last reader was a product and
    # slots freed by a store. A zero (vector unit) prefers the first: a store-freed slot is only
    # writable once the DMA has reached that store. A load prefers the second: the DMA queue is in
    # order, so the store is already done when the load starts.
    free: deque[int] = deque(range(S))
    free_stored: deque[int] = deque()
    # Eviction candidates: (-next use, slot), stale entries skipped lazily. Only a product moves an
    # operand's next use past the frontier, so only products push.
    farthest: list[tuple[int, int]] = []
    heappush, heappop = heapq.heappush, heapq.heappop
    rows: list[tuple[int, ...]] = []
    emit = rows.append
    # Finished accumulators, in finishing order: (slot, the product after which it may be stored).
    pending_stores: list[tuple[int, int]] = []
    lookahead = options.lookahead
    store_first = options.store_first
    protect = options.protect
    delay = options.store_delay
    current = 0  # the product the matrix unit runs next (a frontier beyond it is prefetching)

    def take_slot(horizon: int, for_load: bool) -> int:
        """A slot to write now: a free one, else evict the operand used farthest after `horizon`
        (after `horizon + protect` when the slot is for a prefetch)."""
        if horizon > current:
            horizon += protect
        first, second = (free_stored, free) if for_load else (free, free_stored)
        if first:
            return first.popleft()
        if second:
            return second.popleft()
        while farthest:
            key, best = farthest[0]
            if slot_next[best] != -key:
                heappop(farthest)  # stale: the slot's tile or its next use changed since
                continue
            if -key <= horizon:
                return -1  # the farthest next use is inside the prefetch window: nothing to evict
            heappop(farthest)
            where[slot_tile[best]] = -1
            slot_tile[best] = -1
            return best
        return -1

    def tile_row(tile: int) -> tuple[int, int, int]:
        if tile < n_a:
            return TENSOR_A, tile // Kt, tile % Kt
        return TENSOR_B, (tile - n_a) // Nt, (tile - n_a) % Nt

    frontier = 0  # next product whose tiles the frontier has not yet made resident
    blocked = False  # the frontier could not find a slot and nothing has been freed since

    def advance(limit: int) -> None:
        nonlocal frontier, blocked
        while frontier < limit and not blocked:
            q = frontier
            for tile in (a_ids[q], b_ids[q]):
                s = where[tile]
                if s >= 0:
                    if slot_next[s] > q:
                        slot_next[s] = q
                    continue
                s = take_slot(q, True)
                if s < 0:
                    blocked = True
                    return
                where[tile] = s
                slot_tile[s] = tile
                slot_next[s] = q
                tensor, x, y = tile_row(tile)
                emit((LOAD, NONE, s, NONE, NONE, tensor, x, y))
            c = c_ids[q]
            if where[c] < 0:
                s = take_slot(q, False)
                if s < 0:
                    blocked = True
                    return
                where[c] = s
                slot_tile[s] = c
                slot_next[s] = pinned
                emit((ZERO, NONE, s, NONE, NONE, NONE, NONE, NONE))
            frontier = q + 1

    def flush_stores(due: int | None = None) -> None:
        """Store the finished accumulators that may be stored after product `due` (None: all)."""
        nonlocal blocked
        ready = [s for s, after in pending_stores if due is None or after <= due]
        if not ready:
            return
        for s in ready:
            c = slot_tile[s] - n_ab
            emit((STORE, NONE, s, NONE, NONE, TENSOR_C, c // Nt, c % Nt))
            where[slot_tile[s]] = -1
            slot_tile[s] = -1
            slot_next[s] = inf
            free_stored.append(s)
        blocked = False
        pending_stores[:] = [(s, a) for s, a in pending_stores if due is not None and a > due]

    for p in range(P):
        limit = p + 1 + lookahead
        if limit > P:
            limit = P
        current = p
        if protect and frontier <= p:
            blocked = False  # a demand load may evict what a prefetch could not
        if store_first and pending_stores:
            flush_stores(p - 1)
        if frontier < limit and not blocked:
            advance(limit)
        if pending_stores:
            flush_stores(p - 1)
            if frontier < limit:
                advance(limit)
        if frontier <= p and pending_stores:
            flush_stores()  # the product waits for a slot: the delayed stores go now
            advance(limit)
        if frontier <= p:
            live = sum(1 for s in range(S) if slot_next[s] == pinned)
            raise ScheduleError(
                f"{S} slots cannot hold the working set at product {p} {products[p]}: "
                f"{live} live accumulators plus the product's A and B tiles"
            )
        sa = where[a_ids[p]]
        sb = where[b_ids[p]]
        sc = where[c_ids[p]]
        emit((MXU, NONE, sc, sa, sb, NONE, NONE, NONE))
        # The operands' next uses move on; a tile never used again frees its slot now.
        nxt = next_a[p]
        slot_next[sa] = nxt
        if nxt == inf:
            where[a_ids[p]] = -1
            slot_tile[sa] = -1
            free.append(sa)
            blocked = False
        else:
            heappush(farthest, (-nxt, sa))
            if nxt >= frontier:
                blocked = False
        nxt = next_b[p]
        slot_next[sb] = nxt
        if nxt == inf:
            where[b_ids[p]] = -1
            slot_tile[sb] = -1
            free.append(sb)
            blocked = False
        else:
            heappush(farthest, (-nxt, sb))
            if nxt >= frontier:
                blocked = False
        if c_last_list[p]:
            pending_stores.append((sc, p + delay))
    flush_stores()

    return Program.from_rows(rows, MATMUL_TENSORS)
