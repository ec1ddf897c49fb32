"""The fewest DMA transfers of a GA-1 matrix product on S slots: a pebbling bound, found by A*.

Forget time and keep only the scratchpad. A program of the exact model's scope (see
`simcore.ga1.exact`) then becomes a game on the set of resident tiles, of at most S at once:

* loading an A or B tile costs one transfer; dropping one is free;
* an accumulator opens with a zero (free) the first time, with a reload (one transfer) after a
  partial store, and leaves with a store (one transfer);
* a tile product may run while its A, B and C tiles are all resident.

Reading a timed program's residencies in order of time gives a game with its transfers (a
residency holds its slot from its load's start to its end, and the game asks no more), and the
DMA moves one tile at a time: makespan >= dma_cycles x the game's fewest transfers. This holds
for every slot count, where the I/O bound of lower_bounds.py counts windows.

The search is exact: A* over (products done, tiles resident) with the compulsory transfers left
as its heuristic (admissible and consistent: each move lowers it by at most its cost). Free moves
are made at once, since they never hurt: every product whose tiles are resident runs, a finished
accumulator is stored and an operand nobody reads again is dropped. A tile is only dropped to make
room for another. The states grow quickly with the tile products: `MAX_PRODUCTS` keeps the
search to instances it finishes within seconds, and `max_states` stops it (None: no answer).
"""

from __future__ import annotations

import heapq

from simcore.ga1.machine import Machine
from simcore.shape import Shape

# The largest instance searched by default, in tile products: 2 x 2 x 2 tiles take under a second,
# 2 x 2 x 3 five to twenty.
MAX_PRODUCTS = 8
MAX_STATES = 400_000


def tile_products(tiles: tuple[int, int, int]) -> tuple[list[tuple[int, int, int]], list[int]]:
    """The tile products (i, j, k) in that order as (A, B, C) tile ids, the tiles numbered A(i, k)
    = i Kt + k, then B(k, j), then C(i, j); and per tile the bit mask of the products reading it."""
    Mt, Kt, Nt = tiles
    n_a, n_op = Mt * Kt, Mt * Kt + Kt * Nt
    products = [
        (i * Kt + k, n_a + k * Nt + j, n_op + i * Nt + j)
        for i in range(Mt)
        for j in range(Nt)
        for k in range(Kt)
    ]
    uses = [0] * (n_op + Mt * Nt)
    for p, (a, b, c) in enumerate(products):
        for tile in (a, b, c):
            uses[tile] |= 1 << p
    return products, uses


class _Game:
    """The instance's tiles and products as bit masks: A tiles, then B, then C."""

    def __init__(self, tiles: tuple[int, int, int], slots: int) -> None:
        Mt, Kt, Nt = tiles
        self.slots = slots
        self.operands = Mt * Kt + Kt * Nt
        self.count = self.operands + Mt * Nt
        self.products, self.uses = tile_products(tiles)  # uses: the products reading each tile
        self.everything = (1 << len(self.products)) - 1
        self.of_accumulator = {  # per C tile: (product bit, A tile bit, B tile bit)
            c: [(1 << p, 1 << a, 1 << b) for p, (a, b, cc) in enumerate(self.products) if cc == c]
            for c in range(self.operands, self.count)
        }

    def settle(self, done: int, resident: int) -> tuple[int, int, int]:
        """The free moves until none is left: (done, resident, transfers spent on stores)."""
        stores = 0
        changed = True
        while changed:
            changed = False
            for c in range(self.operands, self.count):
                if not resident >> c & 1:
                    continue
                for product, a, b in self.of_accumulator[c]:
                    if not done & product and resident & a and resident & b:
                        done |= product
                        changed = True
                if self.uses[c] & ~done == 0:
                    resident &= ~(1 << c)
                    stores += 1
            for t in range(self.operands):
                if resident >> t & 1 and self.uses[t] & ~done == 0:
                    resident &= ~(1 << t)
        return done, resident, stores

    def cost_in(self, tile: int, done: int) -> int:
        """Transfers to make a tile resident: a load, a reload, or a zero (free)."""
        return 1 if tile < self.operands or self.uses[tile] & done else 0

    def left(self, done: int, resident: int) -> int:
        """Transfers no program can avoid from here: a load of each operand still to be read and
        not resident, a store of each open accumulator and a reload of each one stored part-way."""
        total = 0
        for t in range(self.count):
            if self.uses[t] & ~done == 0:
                continue
            here = resident >> t & 1
            if t < self.operands:
                total += 0 if here else 1
            else:
                total += 1 + (0 if here or not self.uses[t] & done else 1)
        return total

    def moves(self, done: int, resident: int) -> list[tuple[int, int, int]]:
        """(cost, done, resident) after bringing one tile in, dropping another first when full."""
        wanted = [t for t in range(self.count) if not resident >> t & 1 and self.uses[t] & ~done]
        if bin(resident).count("1") < self.slots:
            victims = [(-1, 0)]
        else:  # an operand leaves for free, an open accumulator with a partial store
            victims = [
                (v, 0 if v < self.operands else 1) for v in range(self.count) if resident >> v & 1
            ]
        out = []
        for victim, spill in victims:
            kept = resident if victim < 0 else resident & ~(1 << victim)
            for tile in wanted:
                after, held, stores = self.settle(done, kept | 1 << tile)
                out.append((spill + self.cost_in(tile, done) + stores, after, held))
        return out


def fewest_transfers_of(
    tiles: tuple[int, int, int], slots: int, max_states: int = MAX_STATES
) -> int | None:
    """The fewest loads plus stores of any program of the scope with `slots` slots (None: the
    search expanded `max_states` states without an answer). Needs at least 3 slots."""
    if slots < 3:
        raise ValueError(f"a tile product needs 3 slots, got {slots}")
    game = _Game(tiles, slots)
    done, resident, spent = game.settle(0, 0)
    best = {(done, resident): spent}
    frontier = [(spent + game.left(done, resident), spent, done, resident)]
    expanded = 0
    while frontier:
        _, cost, done, resident = heapq.heappop(frontier)
        if best[(done, resident)] < cost:
            continue  # reached again more cheaply since
        if done == game.everything:
            return cost
        expanded += 1
        if expanded > max_states:
            return None
        for step, after, held in game.moves(done, resident):
            total = cost + step
            if best.get((after, held), total + 1) <= total:
                continue
            best[(after, held)] = total
            heapq.heappush(frontier, (total + game.left(after, held), total, after, held))
    raise AssertionError("every instance with 3 slots has a program")


def fewest_transfers(
    shape: Shape, machine: Machine, max_products: int = MAX_PRODUCTS
) -> int | None:
    """fewest_transfers_of the instance when it has at most `max_products` tile products (None:
    larger, or the search did not finish)."""
    tiles = shape.tiles(machine.T)
    if tiles[0] * tiles[1] * tiles[2] > max_products or machine.slots < 3:
        return None
    return fewest_transfers_of(tiles, machine.slots)
