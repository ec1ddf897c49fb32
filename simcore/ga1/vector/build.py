"""Writing a plan's program: the constants, then every visit in order, then the last stores.

A visit emits its loads (the column's parameters at its first visit, the tile, a second
operand), the kernel's arithmetic, then the store of the tile visited `buffers - 1` visits
before (stores wait so that the DMA's loads of the next tiles go first). In a timing tree,
runs of visits whose instructions repeat (the middle of a pass, whole band groups, whole
matrices: Plan.runs, group_period, matrix_period) are emitted once with a count.
"""

from __future__ import annotations

from simcore.ga1.vector.emit import Emitter
from simcore.ga1.vector.plan import SECOND, Plan


def emit_program(e: Emitter, plan: Plan) -> None:
    _constants(e, plan)
    # A repeated unit must not reach back past the first visit for its delayed stores.
    first = max(1, -(-plan.delay // plan.matrix_visits()))
    for h in range(min(first, plan.matrices)):
        _matrix(e, plan, h)
    e.loop(first, plan.matrices, plan.matrix_period(), lambda h: _matrix(e, plan, h))
    last = (plan.matrices - 1, plan.G - 1, len(plan.passes) - 1)
    end = plan.pass_visits(last[1], last[2])
    for back in range(plan.delay, 0, -1):
        earlier = plan.earlier(*last, end, back)
        if earlier is not None:
            _store_output(e, plan, earlier)


def _constants(e: Emitter, plan: Plan) -> None:
    for const in plan.const_list:
        slot = plan.const(const.name)
        if const.source in ("ones", "zero"):
            e.zero(slot)
            if const.source == "ones":
                e.exp(slot, slot)
        elif const.source == "scaled":
            e.vscale(slot, plan.const("ones"), const.value)
        else:
            e.load(slot, const.name, 0, 0)


def _matrix(e: Emitter, plan: Plan, h: int) -> None:
    if plan.op.causal:  # every band group is different
        for k in range(plan.G):
            _group(e, plan, h, k)
        return
    first = max(1, -(-plan.delay // plan.group_visits(0)))
    for k in range(min(first, plan.G)):
        _group(e, plan, h, k)
    e.loop(first, plan.G_full, plan.group_period(), lambda k: _group(e, plan, h, k))
    for k in range(max(first, plan.G_full), plan.G):
        _group(e, plan, h, k)


def _group(e: Emitter, plan: Plan, h: int, k: int) -> None:
    e.reuse(plan.group_key(h, k) if e.compress else None, lambda: _passes(e, plan, h, k))


def _passes(e: Emitter, plan: Plan, h: int, k: int) -> None:
    for p in range(len(plan.passes)):
        n, at = plan.pass_visits(k, p), 0
        for lo, hi, period in plan.runs(k, p):
            lo, hi = min(max(lo, at), n), min(max(hi, lo), n)
            for i in range(at, lo):
                visit(e, plan, h, k, p, i)
            e.loop(lo, hi, period, lambda i: visit(e, plan, h, k, p, i))
            at = hi
        for i in range(at, n):
            visit(e, plan, h, k, p, i)


def visit(e: Emitter, plan: Plan, h: int, k: int, p: int, i: int) -> None:
    v = plan.visit(h, k, p, i)
    if v.param_load:
        for slot, name in zip(v.params, plan.param_names):
            e.load(slot, name, 0, v.j)
    if v.x_load:
        e.load(v.x, plan.x_name(h), v.band, v.j)
    if v.second_load:
        e.load(v.second, SECOND, v.band, v.j)
    plan.kernel.compute(e, plan, v)
    earlier = plan.earlier(h, k, p, i, plan.delay) if plan.delay else (h, k, p, i)
    if earlier is not None:
        _store_output(e, plan, earlier)


def _store_output(e: Emitter, plan: Plan, at: tuple[int, int, int, int]) -> None:
    stored = plan.stored(*at)
    if stored is not None:
        e.store(stored[0], plan.out_name(at[0]), stored[1], stored[2])
