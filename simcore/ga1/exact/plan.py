"""A matmul schedule as the exact model sees it, and its conversion to and from a GA-1 program.

A `Plan` is a set of residencies and timed products:

* an operand residency holds one tile of A or B: a load starts it, its last reader ends it;
* an accumulator residency ("part") holds one tile of C: a zero (its first part) or a load of
  the partial sum stored by its previous part starts it, products accumulate into it, a store
  ends it (when the store finishes);
* a product (i, j, k) starts at a cycle and reads one residency of each of A(i, k), B(k, j) and
  C(i, j).

`program_of` turns a plan into a program: slots by greedy interval colouring of the residencies
(at most as many slots as residencies overlap at any cycle, which the model keeps within the
scratchpad), and the instructions in order of start. The ordinary timing rule then starts every
instruction no later than the plan does (each engine's queue in that order, and every slot
dependence of the rule is one the plan already respects), so the program runs in at most the
plan's cycles. `plan_of` reads any program of loads, stores, zeros and products back into a plan,
timed by the ordinary rule: the exact model takes it as a starting point.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from simcore.ga1.machine import Machine
from simcore.ga1.program import (
    LOAD,
    MXU,
    STORE,
    TENSOR_A,
    TENSOR_B,
    TENSOR_C,
    ZERO,
    Program,
    ProgramBuilder,
)
from simcore.ga1.timing import run_timing
from simcore.shape import Shape

Tile = tuple[int, int, int]  # (tensor, x, y): TENSOR_A (i, k), TENSOR_B (k, j) or TENSOR_C (i, j)
Product = tuple[int, int, int]  # (i, j, k): C(i, j) += A(i, k) @ B(k, j)


class PlanError(ValueError):
    """A program is outside the exact model's scope, or a plan is inconsistent."""


@dataclass(frozen=True)
class Residency:
    """One tile held in one slot from `start` (its load or zero starts) to `end` (its last read
    finishes; an accumulator: its store finishes). `store` is an accumulator's store start."""

    tile: Tile
    start: int
    end: int
    opened_by_load: bool
    store: int | None = None


@dataclass(frozen=True)
class TimedProduct:
    product: Product
    start: int
    a: int  # indices into Plan.residencies
    b: int
    c: int


@dataclass(frozen=True)
class Plan:
    residencies: tuple[Residency, ...]
    products: tuple[TimedProduct, ...]
    makespan: int


# Program order at one cycle: any order is valid (instructions starting together are
# independent), this one is fixed so that a plan gives one program.
_ENGINE_RANK = {LOAD: 0, STORE: 0, ZERO: 1, MXU: 2}


def assign_slots(residencies: tuple[Residency, ...], slots: int) -> list[int]:
    """A slot for each residency, no two overlapping in one slot (intervals are [start, end))."""
    order = sorted(
        range(len(residencies)), key=lambda r: (residencies[r].start, residencies[r].end, r)
    )
    busy: list[tuple[int, int]] = []  # (end, slot)
    free = list(range(slots))
    heapq.heapify(free)
    slot_of = [-1] * len(residencies)
    for r in order:
        start = residencies[r].start
        while busy and busy[0][0] <= start:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if not free:
            raise PlanError(f"more than {slots} tiles are resident at cycle {start}")
        slot_of[r] = heapq.heappop(free)
        heapq.heappush(busy, (residencies[r].end, slot_of[r]))
    return slot_of


def program_of(plan: Plan, machine: Machine) -> Program:
    """The GA-1 program of a plan: instructions in order of their start in the plan."""
    slot = assign_slots(plan.residencies, machine.slots)
    events: list[
        tuple[int, int, int, tuple[int, ...]]
    ] = []  # (start, engine rank, tie, instruction)
    for r, res in enumerate(plan.residencies):
        tensor, x, y = res.tile
        if res.opened_by_load:
            events.append((res.start, 0, len(events), (LOAD, slot[r], tensor, x, y)))
        else:
            events.append((res.start, 1, len(events), (ZERO, slot[r])))
        if res.store is not None:
            events.append((res.store, 0, len(events), (STORE, slot[r], tensor, x, y)))
    for timed in plan.products:
        events.append(
            (timed.start, 2, len(events), (MXU, slot[timed.c], slot[timed.a], slot[timed.b]))
        )
    builder = ProgramBuilder()
    names = ("A", "B", "C")
    for _start, _rank, _tie, ins in sorted(events):
        if ins[0] == LOAD:
            builder.load(ins[1], names[ins[2]], ins[3], ins[4])
        elif ins[0] == STORE:
            builder.store(ins[1], names[ins[2]], ins[3], ins[4])
        elif ins[0] == ZERO:
            builder.zero(ins[1])
        else:
            builder.mxu(ins[1], ins[2], ins[3])
    return builder.build()


@dataclass
class _Open:
    """A residency being read back: what the slot holds and when its uses end."""

    tile: Tile | None  # None: a zeroed accumulator whose C tile its first product names
    start: int
    opened_by_load: bool
    end: int
    used: bool = False
    store: int | None = None


def plan_of(program: Program, machine: Machine, shape: Shape) -> Plan:
    """The plan of a matmul program, timed by the ordinary rule. Loads nothing reads are dropped
    (the rule never lets dropping an instruction delay another); anything outside the model's
    scope (a vector operation, a product reading tiles that do not match) is a PlanError."""
    timing = run_timing(machine, program, record=True)
    assert timing.starts is not None and timing.finishes is not None
    names = program.tensors
    held: dict[int, _Open] = {}
    closed: list[_Open] = []
    products: list[tuple[Product, int, _Open, _Open, _Open]] = []
    for row, start, finish in zip(program.rows, timing.starts.tolist(), timing.finishes.tolist()):
        op, s0, s1, s2, t, x, y = row[0], row[2], row[3], row[4], row[5], row[6], row[7]
        if op in (LOAD, ZERO):
            if s0 in held:
                closed.append(held.pop(s0))
            tile = None if op == ZERO else (_tensor(names[t]), x, y)
            held[s0] = _Open(tile, start, op == LOAD, finish)
        elif op == STORE:
            res = held.get(s0)
            if (
                res is None
                or res.tile is None
                or res.tile[0] != TENSOR_C
                or (res.tile[1], res.tile[2]) != (x, y)
                or names[t] != "C"
            ):
                raise PlanError(f"a store of C({x}, {y}) does not store that tile's accumulator")
            res.store, res.end, res.used = start, finish, True
        elif op == MXU:
            products.append((_product(held, s0, s1, s2), start, held[s0], held[s1], held[s2]))
            for res in (held[s0], held[s1], held[s2]):
                res.end, res.used = max(res.end, finish), True
        else:
            raise PlanError("the exact model covers loads, stores, zeros and products only")
    closed.extend(held.values())
    return _assemble(closed, products, timing.cycles, shape, machine)


def _tensor(name: str) -> int:
    if name not in ("A", "B", "C"):
        raise PlanError(f"tensor {name!r} is not one of A, B, C")
    return ("A", "B", "C").index(name)


def _product(held: dict[int, _Open], c: int, a: int, b: int) -> Product:
    if a not in held or b not in held or c not in held:
        raise PlanError("a product reads a slot nothing was loaded into")
    ta, tb = held[a].tile, held[b].tile
    if ta is None or tb is None or ta[0] != TENSOR_A or tb[0] != TENSOR_B or ta[2] != tb[1]:
        raise PlanError("a product's operands are not A(i, k) and B(k, j)")
    i, k, j = ta[1], ta[2], tb[2]
    acc = held[c]
    if acc.tile is None:
        acc.tile = (TENSOR_C, i, j)
    if acc.tile != (TENSOR_C, i, j):
        raise PlanError(
            f"product ({i}, {j}, {k}) accumulates into a slot that does not hold C({i}, {j})"
        )
    return (i, j, k)


def _merge_copies(kept: list[_Open]) -> tuple[list[_Open], dict[int, _Open]]:
    """Two residencies of one operand tile that overlap in time become one, the first held until
    the later one's last read: one load fewer and never more slots at any cycle, so nothing
    starts later. (The exact model lets a tile's residencies follow each other only.)"""
    last: dict[Tile, _Open] = {}
    alias: dict[int, _Open] = {}
    merged = []
    for res in kept:
        assert res.tile is not None
        before = last.get(res.tile)
        if before is not None and res.tile[0] != TENSOR_C and res.start < before.end:
            before.end = max(before.end, res.end)
            alias[id(res)] = before
            continue
        last[res.tile] = res
        merged.append(res)
    return merged, alias


def _assemble(
    residencies: list[_Open],
    products: list[tuple[Product, int, _Open, _Open, _Open]],
    cycles: int,
    shape: Shape,
    machine: Machine,
) -> Plan:
    kept = [r for r in residencies if r.used and r.tile is not None]
    if any(r.tile is not None and r.tile[0] == TENSOR_C and r.store is None for r in kept):
        raise PlanError("an accumulator is never stored")
    kept.sort(key=lambda r: (r.start, r.tile))
    kept, alias = _merge_copies(kept)
    index = {id(r): n for n, r in enumerate(kept)}
    index.update({key: index[id(target)] for key, target in alias.items()})
    frozen = tuple(Residency(r.tile, r.start, r.end, r.opened_by_load, r.store) for r in kept)  # type: ignore[arg-type]
    timed = tuple(
        TimedProduct(p, start, index[id(a)], index[id(b)], index[id(c)])
        for p, start, c, a, b in products
    )
    Mt, Kt, Nt = shape.tiles(machine.T)
    if sorted(t.product for t in timed) != [
        (i, j, k) for i in range(Mt) for j in range(Nt) for k in range(Kt)
    ]:
        raise PlanError("the program does not run every tile product exactly once")
    return Plan(frozen, timed, cycles)


def relabel_by_first_use(plan: Plan) -> Plan:
    """The same schedule with rows i, columns j and steps k renumbered in the order of their first
    product (what the exact model's symmetry breaking asks of a solution). Renaming rows, columns or
    steps maps a schedule of C = A @ B to another of the same cycles."""
    maps = []
    for axis in range(3):
        first: dict[int, int] = {}
        for timed in sorted(plan.products, key=lambda t: t.start):
            first.setdefault(timed.product[axis], len(first))
        maps.append(first)
    rows, cols, steps = maps
    products = tuple(
        TimedProduct((rows[i], cols[j], steps[k]), t.start, t.a, t.b, t.c)
        for t in plan.products
        for i, j, k in [t.product]
    )
    by_tensor = {TENSOR_A: (rows, steps), TENSOR_B: (steps, cols), TENSOR_C: (rows, cols)}

    def tile(old: Tile) -> Tile:
        first_map, second_map = by_tensor[old[0]]
        return (old[0], first_map[old[1]], second_map[old[2]])

    residencies = tuple(
        Residency(tile(r.tile), r.start, r.end, r.opened_by_load, r.store) for r in plan.residencies
    )
    return Plan(residencies, products, plan.makespan)


__all__ = [
    "Plan",
    "PlanError",
    "Residency",
    "TimedProduct",
    "assign_slots",
    "plan_of",
    "program_of",
    "relabel_by_first_use",
]
