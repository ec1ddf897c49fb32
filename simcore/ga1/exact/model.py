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
this model with the same makespan, and every solution becomes a program (plan.program_of) that
runs in at most its makespan: the model's optimum is the scope's optimum.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from simcore.ga1.exact.plan import Plan, Product, Residency, Tile, TimedProduct, relabel_by_first_use
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
    users: list[tuple[Product, cp_model.IntVar | None]] = field(default_factory=list)  # None: the only copy


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


def build_model(shape: Shape, machine: Machine, horizon: int, lower: int, copies: int | None = None,
                least_transfers: int = 0) -> ExactModel:
    """The model with makespan in [lower, horizon]; `copies` caps the residencies of a tile and
    the parts of an accumulator (None: no cap beyond the number of its uses, the exact model);
    `least_transfers` is a proven lower bound on loads plus stores (redundant, for the proof)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    model = cp_model.CpModel()
    D, m, f = machine.dma_cycles, machine.mxu_cycles, machine.mxu_fill
    makespan = model.NewIntVar(lower, horizon, "makespan")
    products = [(i, j, k) for i in range(Mt) for j in range(Nt) for k in range(Kt)]
    # A product's operands are loaded one after the other, and its store follows it.
    latest = horizon - m - f - D
    starts = {p: model.NewIntVar(2 * D, latest, f"ps{p}") for p in products}
    model.AddNoOverlap([model.NewFixedSizeIntervalVar(starts[p], m, f"mxu{p}") for p in products])
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
    model.AddNoOverlap(dma)
    model.AddNoOverlap(zeros)
    model.AddCumulative(slots, [1] * len(slots), machine.slots)
    # Redundant: the DMA's transfers all fit before the end.
    transfers = [c.present for tile, cs in built.copies.items() for c in cs]
    transfers += [c.present for tile, cs in built.copies.items() if tile[0] == TENSOR_C for c in cs[1:]]
    model.Add(makespan >= D * sum(transfers))
    model.Add(sum(transfers) >= least_transfers)
    _first_uses_in_order(built, Mt, Kt, Nt)
    model.Minimize(makespan)
    return built


def _first_uses_in_order(built: ExactModel, Mt: int, Kt: int, Nt: int) -> None:
    """Symmetry: renaming the rows i (of A and C), the columns j (of B and C) or the steps k
    maps schedules to schedules of the same cycles, so each may be numbered by the start of its
    first product."""
    for axis, count in enumerate((Mt, Nt, Kt)):  # the product's (i, j, k)
        firsts = []
        for index in range(count):
            first = built.model.NewIntVar(0, built.horizon, f"first{axis}_{index}")
            built.model.AddMinEquality(first, [s for p, s in built.starts.items() if p[axis] == index])
            firsts.append(first)
        for before, after in zip(firsts, firsts[1:]):
            built.model.Add(before < after)


def _choose(model: cp_model.CpModel, product: Product, copies: list[_Copy], name: str) -> list[cp_model.IntVar | None]:
    """The product's choice of one of the copies (None, always chosen, for a single copy)."""
    if len(copies) == 1:
        copies[0].users.append((product, None))
        return [None]
    chosen = [model.NewBoolVar(f"{name}{product}r{r}") for r in range(len(copies))]
    model.AddExactlyOne(chosen)
    for copy, flag in zip(copies, chosen):
        copy.users.append((product, flag))
        model.AddImplication(flag, copy.present)
    return chosen  # type: ignore[return-value]


def _when(constraint: cp_model.Constraint, flag: cp_model.IntVar | None) -> None:
    if flag is not None:
        constraint.OnlyEnforceIf(flag)


def _presences(model: cp_model.CpModel, count: int, name: str) -> list[cp_model.IntVar]:
    """The first copy always, then each only if the one before is present."""
    present = [model.NewConstant(1)] + [model.NewBoolVar(f"{name}u{r}") for r in range(1, count)]
    for r in range(1, count):
        model.AddImplication(present[r], present[r - 1])
    return present


def _operand(built: ExactModel, tile: Tile, readers: list[Product], cap: int,
             dma: list[cp_model.IntervalVar], slots: list[cp_model.IntervalVar]) -> list[_Copy]:
    model, H = built.model, built.horizon
    D, m = built.machine.dma_cycles, built.machine.mxu_cycles
    name = f"t{tile}"
    present = _presences(model, cap, name)
    copies = []
    for r in range(cap):
        start = model.NewIntVar(0, H, f"{name}ls{r}")
        end = model.NewIntVar(0, H, f"{name}oe{r}")
        size = model.NewIntVar(D + m, H, f"{name}os{r}")
        dma.append(model.NewOptionalFixedSizeIntervalVar(start, D, present[r], f"{name}load{r}"))
        slots.append(model.NewOptionalIntervalVar(start, size, end, present[r], f"{name}occ{r}"))
        if r:
            model.Add(start >= copies[-1].end).OnlyEnforceIf(present[r])
        copies.append(_Copy(present[r], start, end, size))
    for p in readers:
        for copy, flag in zip(copies, _choose(model, p, copies, name)):
            _when(model.Add(built.starts[p] >= copy.start + D), flag)
            _when(model.Add(copy.end >= built.starts[p] + m), flag)
    _used(model, copies)
    for copy in copies:  # its readers run one after another on the matrix unit
        model.Add(copy.size >= D + m * _count(copy))
    return copies


def _parts(built: ExactModel, tile: Tile, readers: list[Product], cap: int, dma: list[cp_model.IntervalVar],
           slots: list[cp_model.IntervalVar], zeros: list[cp_model.IntervalVar]) -> list[_Copy]:
    model, H = built.model, built.horizon
    D, m, f = built.machine.dma_cycles, built.machine.mxu_cycles, built.machine.mxu_fill
    name = f"t{tile}"
    present = _presences(model, cap, name)
    parts: list[_Copy] = []
    for q in range(cap):
        opened = model.NewIntVar(0, H, f"{name}os{q}")
        store = model.NewIntVar(0, H - D, f"{name}ss{q}")
        end = model.NewIntVar(0, H, f"{name}se{q}")
        model.Add(end == store + D)
        size = model.NewIntVar(1 + m + f + D, H, f"{name}size{q}")
        if q == 0:
            zeros.append(model.NewFixedSizeIntervalVar(opened, 1, f"{name}zero"))
        else:
            dma.append(model.NewOptionalFixedSizeIntervalVar(opened, D, present[q], f"{name}reload{q}"))
            model.Add(opened >= parts[-1].store + D).OnlyEnforceIf(present[q])
        dma.append(model.NewOptionalFixedSizeIntervalVar(store, D, present[q], f"{name}store{q}"))
        slots.append(model.NewOptionalIntervalVar(opened, size, end, present[q], f"{name}occ{q}"))
        model.Add(built.makespan >= end).OnlyEnforceIf(present[q])
        parts.append(_Copy(present[q], opened, end, size, store))
    for p in readers:
        for q, (part, flag) in enumerate(zip(parts, _choose(model, p, parts, name))):
            _when(model.Add(built.starts[p] >= part.start + (1 if q == 0 else D)), flag)
            _when(model.Add(part.store >= built.starts[p] + m + f), flag)  # type: ignore[operator]
    _used(model, parts)
    for q, part in enumerate(parts):  # opener, products one after another, fill, store
        model.Add(part.size >= (1 if q == 0 else D) + m * _count(part) + f + D)
    return parts


def _count(copy: _Copy) -> cp_model.LinearExpr:
    return sum(1 if flag is None else flag for _p, flag in copy.users)  # type: ignore[return-value]


def _used(model: cp_model.CpModel, copies: list[_Copy]) -> None:
    """A present copy is read by some product (an unread load or an empty part only costs)."""
    for copy in copies[1:]:
        model.AddBoolOr([flag for _p, flag in copy.users if flag is not None]).OnlyEnforceIf(copy.present)


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
    model.ClearHints()
    for tile, copies in built.copies.items():
        indices = by_tile.get(tile, [])
        for r, copy in enumerate(copies):
            res = plan.residencies[indices[r]] if r < len(indices) else None
            _hint_copy(model, copy, res, always=r == 0)
    picks: dict[tuple[Product, Tile], int] = {}
    for timed in plan.products:
        model.AddHint(built.starts[timed.product], timed.start)
        for tile, index in zip(built.tiles_of(timed.product), (timed.a, timed.b, timed.c)):
            picks[(timed.product, tile)] = rank[index]
    for tile, copies in built.copies.items():
        for r, copy in enumerate(copies):
            for product, flag in copy.users:
                if flag is not None:
                    model.AddHint(flag, int(picks[(product, tile)] == r))
    model.AddHint(built.makespan, plan.makespan)
    return True


def _hint_copy(model: cp_model.CpModel, copy: _Copy, res: Residency | None, always: bool) -> None:
    if not always:  # the first copy is a constant
        model.AddHint(copy.present, int(res is not None))
    model.AddHint(copy.start, res.start if res else 0)
    if copy.store is None:
        model.AddHint(copy.end, res.end if res else 0)
    else:  # an accumulator's end is its store's
        model.AddHint(copy.store, res.store if res and res.store is not None else 0)


def read_plan(built: ExactModel, solver: cp_model.CpSolver) -> Plan:
    """The solver's solution as a plan."""
    residencies: list[Residency] = []
    index: dict[tuple[Tile, int], int] = {}
    for tile, copies in built.copies.items():
        for r, copy in enumerate(copies):
            if not solver.BooleanValue(copy.present):
                continue
            index[(tile, r)] = len(residencies)
            store = None if copy.store is None else solver.Value(copy.store)
            opened_by_load = tile[0] != TENSOR_C or r > 0
            residencies.append(Residency(tile, solver.Value(copy.start), solver.Value(copy.end), opened_by_load, store))
    picks: dict[tuple[Product, Tile], int] = {}
    for tile, copies in built.copies.items():
        for r, copy in enumerate(copies):
            for product, flag in copy.users:
                if flag is None or solver.BooleanValue(flag):
                    picks[(product, tile)] = index[(tile, r)]
    products = tuple(TimedProduct(p, solver.Value(start), *(picks[(p, t)] for t in built.tiles_of(p)))
                     for p, start in built.starts.items())
    return Plan(tuple(residencies), products, solver.Value(built.makespan))


def makespan_of_plan(shape: Shape, machine: Machine, plan: Plan) -> int | None:
    """The model's makespan with every variable fixed to the plan (None: the model rejects it).
    A schedule of the scope the model rejects would be a schedule it cannot find."""
    built = build_model(shape, machine, plan.makespan, 0)
    if not add_hint(built, relabel_by_first_use(plan)):
        return None
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.num_workers = 1
    code = solver.Solve(built.model)
    return int(solver.ObjectiveValue()) if code in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None
