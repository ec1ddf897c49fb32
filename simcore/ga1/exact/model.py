"""The CP-SAT model of a GA-1 matrix product: the machine's rules, written as constraints.

Variables, for C = A @ B with Mt x Kt x Nt tiles, D = dma_cycles, m = mxu_cycles, f = mxu_fill:

* each product (i, j, k) starts at ps; the matrix unit runs one at a time (no overlap, m each);
* each operand tile has up to `copies` residencies r (a tile of A(i, k) is read by Nt products, so
  a program that loads it more often loads it for nothing): present or not, a load [ls, ls + D)
  on the DMA, and an occupancy [ls, oe) of one slot. Every product picks one residency of its A
  tile and one of its B tile, starts after the load (ps >= ls + D) and holds it (oe >= ps + m).
  Residencies of one tile follow each other (ls[r+1] >= oe[r]): two copies resident at once can
  always be merged into the first without delaying anything, so this loses no schedule;
* each C tile has up to Kt parts q, in order: part 0 opens with a zero (the vector unit, 1 cycle),
  part q > 0 with a load [os, os + D) that follows part q - 1's store; each part ends with a store
  [ss, ss + D) that waits for its products and the fill (ss >= ps + m + f) and occupies a slot
  [os, ss + D). Every product picks one part of its C tile and starts after its opener ends;
* the DMA moves one tile at a time (no overlap of loads and stores) and the vector unit runs one
  zero at a time; at no cycle are more residencies open than the scratchpad has slots
  (cumulative, capacity `slots`): slots are assigned afterwards by interval colouring;
* the objective is the makespan, the end of the last store.

Every program of the scope (see `simcore.ga1.exact`) timed by the ordinary rule is a solution of
this model with the same makespan (read by plan.plan_of, which drops unread loads and merges
overlapping copies, then renumbered by plan.relabel_by_first_use for the symmetry breaking), and
every solution becomes a program (plan.program_of) that runs in at most its makespan: the model's
optimum is the scope's optimum. `makespan_of_plan` checks the first direction on any program,
`solve_optimum` the second on every result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from simcore.ga1.exact.plan import (
    Plan,
    Product,
    Residency,
    Tile,
    TimedProduct,
    relabel_by_first_use,
)
from simcore.ga1.machine import Machine
from simcore.ga1.program import TENSOR_A, TENSOR_B, TENSOR_C
from simcore.shape import Shape


@dataclass
class _Copy:
    """One possible residency of a tile, with its variables."""

    present: cp_model.IntVar
    start: cp_model.IntVar
    end: cp_model.IntVar
    size: cp_model.IntVar
    store: cp_model.IntVar | None = None  # accumulators only
    users: list[tuple[Product, cp_model.IntVar | None]] = field(
        default_factory=list
    )  # None: the only copy


@dataclass
class ExactModel:
    """The model and its variables, by tile and by product."""

    shape: Shape
    machine: Machine
    horizon: int
    model: cp_model.CpModel
    makespan: cp_model.IntVar
    starts: dict[Product, cp_model.IntVar]
    copies: dict[Tile, list[_Copy]]

    def tiles_of(self, product: Product) -> tuple[Tile, Tile, Tile]:
        i, j, k = product
        return (TENSOR_A, i, k), (TENSOR_B, k, j), (TENSOR_C, i, j)


def build_model(
    shape: Shape,
    machine: Machine,
    horizon: int,
    lower: int,
    copies: int | None = None,
    least_transfers: int = 0,
) -> ExactModel:
    """The model with makespan in [lower, horizon]; `copies` caps the residencies of a tile and
    the parts of an accumulator (None: no cap beyond the number of its uses, the exact model);
    `least_transfers` is a proven lower bound on loads plus stores (redundant, for the proof)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    model = cp_model.CpModel()
    D, m, f = machine.dma_cycles, machine.mxu_cycles, machine.mxu_fill
    makespan = model.new_int_var(lower, horizon, "makespan")
    products = [(i, j, k) for i in range(Mt) for j in range(Nt) for k in range(Kt)]
    # A product's operands are loaded one after the other, and its store follows it.
    latest = horizon - m - f - D
    starts = {p: model.new_int_var(2 * D, latest, f"ps{p}") for p in products}
    model.add_no_overlap(
        [model.new_fixed_size_interval_var(starts[p], m, f"mxu{p}") for p in products]
    )
    built = ExactModel(shape, machine, horizon, model, makespan, starts, {})
    dma: list[cp_model.IntervalVar] = []
    slots: list[cp_model.IntervalVar] = []
    zeros: list[cp_model.IntervalVar] = []
    users: dict[Tile, list[Product]] = {}
    for p in products:
        for tile in built.tiles_of(p):
            users.setdefault(tile, []).append(p)
    for tile, readers in users.items():
        cap = len(readers) if copies is None else max(1, min(copies, len(readers)))
        if tile[0] == TENSOR_C:
            built.copies[tile] = _parts(built, tile, readers, cap, dma, slots, zeros)
        else:
            built.copies[tile] = _operand(built, tile, readers, cap, dma, slots)
    model.add_no_overlap(dma)
    model.add_no_overlap(zeros)
    model.add_cumulative(slots, [1] * len(slots), machine.slots)
    # Redundant: the DMA's transfers all fit before the end.
    transfers = [c.present for tile, cs in built.copies.items() for c in cs]
    transfers += [
        c.present for tile, cs in built.copies.items() if tile[0] == TENSOR_C for c in cs[1:]
    ]
    model.add(makespan >= D * sum(transfers))
    model.add(sum(transfers) >= least_transfers)
    _first_uses_in_order(built, Mt, Kt, Nt)
    model.minimize(makespan)
    return built


def _first_uses_in_order(built: ExactModel, Mt: int, Kt: int, Nt: int) -> None:
    """Symmetry: renaming the rows i (of A and C), the columns j (of B and C) or the steps k
    maps schedules to schedules of the same cycles, so each may be numbered by the start of its
    first product."""
    for axis, count in enumerate((Mt, Nt, Kt)):  # the product's (i, j, k)
        firsts = []
        for index in range(count):
            first = built.model.new_int_var(0, built.horizon, f"first{axis}_{index}")
            built.model.add_min_equality(
                first, [s for p, s in built.starts.items() if p[axis] == index]
            )
            firsts.append(first)
        for before, after in zip(firsts, firsts[1:]):
            built.model.add(before < after)


def _choose(
    model: cp_model.CpModel, product: Product, copies: list[_Copy], name: str
) -> list[cp_model.IntVar | None]:
    """The product's choice of one of the copies (None, always chosen, for a single copy)."""
    if len(copies) == 1:
        copies[0].users.append((product, None))
        return [None]
    chosen = [model.new_bool_var(f"{name}{product}r{r}") for r in range(len(copies))]
    model.add_exactly_one(chosen)
    for copy, flag in zip(copies, chosen):
        copy.users.append((product, flag))
        model.add_implication(flag, copy.present)
    return chosen  # type: ignore[return-value]


def _when(constraint: cp_model.Constraint, flag: cp_model.IntVar | None) -> None:
    if flag is not None:
        constraint.only_enforce_if(flag)


def _presences(model: cp_model.CpModel, count: int, name: str) -> list[cp_model.IntVar]:
    """The first copy always, then each only if the one before is present."""
    present = [model.new_constant(1)] + [model.new_bool_var(f"{name}u{r}") for r in range(1, count)]
    for r in range(1, count):
        model.add_implication(present[r], present[r - 1])
    return present


def _operand(
    built: ExactModel,
    tile: Tile,
    readers: list[Product],
    cap: int,
    dma: list[cp_model.IntervalVar],
    slots: list[cp_model.IntervalVar],
) -> list[_Copy]:
    model, H = built.model, built.horizon
    D, m = built.machine.dma_cycles, built.machine.mxu_cycles
    name = f"t{tile}"
    present = _presences(model, cap, name)
    copies: list[_Copy] = []
    for r in range(cap):
        start = model.new_int_var(0, H, f"{name}ls{r}")
        end = model.new_int_var(0, H, f"{name}oe{r}")
        size = model.new_int_var(D + m, H, f"{name}os{r}")
        dma.append(
            model.new_optional_fixed_size_interval_var(start, D, present[r], f"{name}load{r}")
        )
        slots.append(model.new_optional_interval_var(start, size, end, present[r], f"{name}occ{r}"))
        if r:
            model.add(start >= copies[-1].end).only_enforce_if(present[r])
        copies.append(_Copy(present[r], start, end, size))
    for p in readers:
        for copy, flag in zip(copies, _choose(model, p, copies, name)):
            _when(model.add(built.starts[p] >= copy.start + D), flag)
            _when(model.add(copy.end >= built.starts[p] + m), flag)
    _used(model, copies)
    for copy in copies:  # its readers run one after another on the matrix unit
        model.add(copy.size >= D + m * _count(copy))
    return copies


def _parts(
    built: ExactModel,
    tile: Tile,
    readers: list[Product],
    cap: int,
    dma: list[cp_model.IntervalVar],
    slots: list[cp_model.IntervalVar],
    zeros: list[cp_model.IntervalVar],
) -> list[_Copy]:
    model, H = built.model, built.horizon
    D, m, f = built.machine.dma_cycles, built.machine.mxu_cycles, built.machine.mxu_fill
    name = f"t{tile}"
    present = _presences(model, cap, name)
    parts: list[_Copy] = []
    for q in range(cap):
        opened = model.new_int_var(0, H, f"{name}os{q}")
        store = model.new_int_var(0, H - D, f"{name}ss{q}")
        end = model.new_int_var(0, H, f"{name}se{q}")
        model.add(end == store + D)
        size = model.new_int_var(1 + m + f + D, H, f"{name}size{q}")
        if q == 0:
            zeros.append(model.new_fixed_size_interval_var(opened, 1, f"{name}zero"))
        else:
            dma.append(
                model.new_optional_fixed_size_interval_var(
                    opened, D, present[q], f"{name}reload{q}"
                )
            )
            model.add(opened >= store_of(parts[-1]) + D).only_enforce_if(present[q])
        dma.append(
            model.new_optional_fixed_size_interval_var(store, D, present[q], f"{name}store{q}")
        )
        slots.append(
            model.new_optional_interval_var(opened, size, end, present[q], f"{name}occ{q}")
        )
        model.add(built.makespan >= end).only_enforce_if(present[q])
        parts.append(_Copy(present[q], opened, end, size, store))
    for p in readers:
        for q, (part, flag) in enumerate(zip(parts, _choose(model, p, parts, name))):
            _when(model.add(built.starts[p] >= part.start + (1 if q == 0 else D)), flag)
            _when(model.add(store_of(part) >= built.starts[p] + m + f), flag)
    _used(model, parts)
    for q, part in enumerate(parts):  # opener, products one after another, fill, store
        model.add(part.size >= (1 if q == 0 else D) + m * _count(part) + f + D)
    return parts


def store_of(part: _Copy) -> cp_model.IntVar:
    assert part.store is not None, "an operand residency has no store"
    return part.store


def _count(copy: _Copy) -> cp_model.LinearExprT:
    return sum((1 if flag is None else flag for _p, flag in copy.users), start=0)  # type: ignore[arg-type]


def _used(model: cp_model.CpModel, copies: list[_Copy]) -> None:
    """A present copy is read by some product (an unread load or an empty part only costs)."""
    for copy in copies[1:]:
        model.add_bool_or([flag for _p, flag in copy.users if flag is not None]).only_enforce_if(
            copy.present
        )


def add_hint(built: ExactModel, plan: Plan) -> bool:
    """Hint every variable from a plan; False (no hint) when the plan does not fit the model's
    copies (more residencies of a tile than the cap, or a first part opened by a load)."""
    by_tile: dict[Tile, list[int]] = {}
    for index, res in enumerate(plan.residencies):
        by_tile.setdefault(res.tile, []).append(index)
    for tile, indices in by_tile.items():
        copies = built.copies.get(tile)
        if copies is None or len(indices) > len(copies):
            return False
        if tile[0] == TENSOR_C and plan.residencies[indices[0]].opened_by_load:
            return False
    rank = {index: r for indices in by_tile.values() for r, index in enumerate(indices)}
    model = built.model
    model.clear_hints()
    for tile, copies in built.copies.items():
        indices = by_tile.get(tile, [])
        for r, copy in enumerate(copies):
            held = plan.residencies[indices[r]] if r < len(indices) else None
            _hint_copy(model, copy, held, always=r == 0)
    picks: dict[tuple[Product, Tile], int] = {}
    for timed in plan.products:
        model.add_hint(built.starts[timed.product], timed.start)
        for tile, index in zip(built.tiles_of(timed.product), (timed.a, timed.b, timed.c)):
            picks[(timed.product, tile)] = rank[index]
    for tile, copies in built.copies.items():
        for r, copy in enumerate(copies):
            for product, flag in copy.users:
                if flag is not None:
                    model.add_hint(flag, int(picks[(product, tile)] == r))
    model.add_hint(built.makespan, plan.makespan)
    return True


def _hint_copy(model: cp_model.CpModel, copy: _Copy, res: Residency | None, always: bool) -> None:
    if not always:  # the first copy is a constant
        model.add_hint(copy.present, int(res is not None))
    model.add_hint(copy.start, res.start if res else 0)
    if copy.store is None:
        model.add_hint(copy.end, res.end if res else 0)
    else:  # an accumulator's end is its store's
        model.add_hint(copy.store, res.store if res and res.store is not None else 0)


def read_plan(built: ExactModel, solver: cp_model.CpSolver) -> Plan:
    """The solver's solution as a plan."""
    residencies: list[Residency] = []
    index: dict[tuple[Tile, int], int] = {}
    for tile, copies in built.copies.items():
        for r, copy in enumerate(copies):
            if not solver.boolean_value(copy.present):
                continue
            index[(tile, r)] = len(residencies)
            store = None if copy.store is None else solver.value(copy.store)
            opened_by_load = tile[0] != TENSOR_C or r > 0
            residencies.append(
                Residency(
                    tile, solver.value(copy.start), solver.value(copy.end), opened_by_load, store
                )
            )
    picks: dict[tuple[Product, Tile], int] = {}
    for tile, copies in built.copies.items():
        for r, copy in enumerate(copies):
            for product, flag in copy.users:
                if flag is None or solver.boolean_value(flag):
                    picks[(product, tile)] = index[(tile, r)]
    products = tuple(
        TimedProduct(p, solver.value(start), *(picks[(p, t)] for t in built.tiles_of(p)))
        for p, start in built.starts.items()
    )
    return Plan(tuple(residencies), products, solver.value(built.makespan))


def makespan_of_plan(shape: Shape, machine: Machine, plan: Plan) -> int | None:
    """The model's makespan with every variable fixed to the plan (None: the model rejects it).
    A schedule of the scope the model rejects would be a schedule it cannot find."""
    built = build_model(shape, machine, plan.makespan, 0)
    if not add_hint(built, relabel_by_first_use(plan)):
        return None
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.num_workers = 1
    code = solver.solve(built.model)
    return int(solver.objective_value) if code in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None
