"""Softmax along a row, numerically stable: exp(x - max) / sum, with an optional scale of the
input and a causal mask.

A tile's input is prepared the same way in every pass that loads it: scaled, then the causal
mask tile (0 or -inf, from DRAM) added where the diagonal crosses it, then -inf added over the
padding of a partial tile. Tiles wholly above the diagonal are never loaded; their output tiles
are stored as zeros.

two_pass: a pass for the row maximum (an elementwise max over the tiles, one row reduction), a
pass for the sum of exp(x - max), and the output pass. online: one pass keeps a running maximum
m and a running sum rescaled by exp(m_old - m_new) at each tile, then the output pass.
resident: the band's tiles are loaded once and stay for the three passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.ga1.vector.kernels.base import Const, Kernel, PassSpec, accumulate
from simcore.ga1.vector.ops import VectorOp
from simcore.ga1.vector.params import VectorParams

if TYPE_CHECKING:
    from simcore.ga1.vector.emit import Emitter
    from simcore.ga1.vector.plan import Plan, Visit

M, S, M2 = 0, 1, 2  # statistic slots: the max (online: two, alternating), the sum


class SoftmaxKernel(Kernel):
    def stats(self, op: VectorOp, params: VectorParams) -> int:
        return 3 if params.reduction == "online" else 2

    def passes(self, op: VectorOp, params: VectorParams) -> tuple[PassSpec, ...]:
        if params.reduction == "online":
            return (PassSpec("online", loads=True), PassSpec("normalise", True, output=True))
        streamed = params.reduction == "two_pass"
        return (
            PassSpec("max", loads=True),
            PassSpec("sum", loads=streamed),
            PassSpec("normalise", loads=streamed, output=True),
        )

    def temps(self, op: VectorOp, params: VectorParams) -> int:
        return 1 if params.reduction == "online" else 0

    def period(self, params: VectorParams, bands: int) -> int:
        return 2 * bands if params.reduction == "online" else 1  # the two running maxima

    def consts(self, op: VectorOp, cols_in_last_tile: int, tile: int) -> tuple[Const, ...]:
        found = []
        if op.causal:
            r = op.causal_offset % tile
            found += [Const("MASK0", "dram")] if r <= tile - 2 else []
            found += [Const("MASK1", "dram")] if r >= 1 else []
            found.append(Const("zero", "zero"))
        if cols_in_last_tile < tile:
            found.append(Const("PAD", "dram"))
        return tuple(found)

    def compute(self, e: Emitter, plan: Plan, v: Visit) -> None:
        if v.masked:
            e.store(plan.const("zero"), plan.out_name(v.h), v.band, v.j)
            return
        if v.x_load:
            _prepare(e, plan, v)
        name = plan.passes[v.p].name
        if name == "max":
            accumulate(e, "max", v.stats[M], v.x, v.first, v.last, "max")
        elif name == "sum":
            _exp_shifted(e, v.x, v.stats[M])
            accumulate(e, "add", v.stats[S], v.x, v.first, v.last, "sum")
        elif name == "online":
            _online(e, plan, v)
        else:
            m = _final_max(plan, v)
            if plan.params.reduction != "resident":
                _exp_shifted(e, v.x, m)
            e.vop("div", v.x, v.x, v.stats[S])


def _prepare(e: Emitter, plan: Plan, v: Visit) -> None:
    if plan.op.scale != 1.0:
        e.vscale(v.x, v.x, plan.op.scale)
    if v.diag >= 0:
        e.vop("add", v.x, v.x, plan.const(f"MASK{v.diag}"))
    if v.pad:
        e.vop("add", v.x, v.x, plan.const("PAD"))


def _exp_shifted(e: Emitter, x: int, m: int) -> None:
    e.vop("sub", x, x, m)
    e.exp(x, x)


def _final_max(plan: Plan, v: Visit) -> int:
    if plan.params.reduction != "online":
        return v.stats[M]
    return v.stats[M if (v.stats_cols - 1) % 2 == 0 else M2]


def _online(e: Emitter, plan: Plan, v: Visit) -> None:
    """The running max m and sum s after one more tile x: m' = max(m, rowmax x),
    s' = s exp(m - m') + exp(x - m') (elementwise; reduced across the row at the last tile)."""
    x, s, t = v.x, v.stats[S], plan.temp(0)
    new = v.stats[M if v.j % 2 == 0 else M2]
    if v.first:
        e.rowred("max", new, x)
        _exp_shifted(e, x, new)
        e.copy(s, x)
    else:
        old = v.stats[M2 if v.j % 2 == 0 else M]
        e.rowred("max", t, x)
        e.vop("max", new, old, t)
        e.vop("sub", t, old, new)
        e.exp(t, t)
        e.vop("mul", s, s, t)
        _exp_shifted(e, x, new)
        e.vop("add", s, s, x)
    if v.last:
        e.rowred("sum", s, s)
