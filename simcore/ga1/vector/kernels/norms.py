"""Layer norm and RMS norm along a row. The reciprocal square root is the sfu extension's rsqrt
(it cannot be composed from exp and div: that would need a logarithm).

Layer norm, two_pass: a pass sums the row (mean), a pass sums the squares of x - mean over the
valid columns (variance), and the output pass computes (x - mean) rstd gamma + beta. online: one
pass merges each tile's mean and sum of squared deviations into the running ones (Chan et al.:
delta = m_t - m, m += delta n_t / (n + n_t), M2 += M2_t + delta^2 n n_t / (n + n_t)). resident:
the band stays in the scratchpad; the variance pass centres it in place.

RMS norm: a pass sums the squares, the output pass computes x rstd gamma. gamma and beta are
stored as T identical rows (a T x cols tensor), so one tile load brings them broadcast over a
tile's rows: the vector unit has no row broadcast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.ga1.vector.kernels.base import Const, Kernel, PassSpec, accumulate
from simcore.ga1.vector.ops import VectorOp
from simcore.ga1.vector.params import VectorParams

if TYPE_CHECKING:
    from simcore.ga1.vector.emit import Emitter
    from simcore.ga1.vector.plan import Plan, Visit

MEAN, RSTD = 0, 1  # statistic slots (online: RSTD holds M2 until the last tile)


class LayerNormKernel(Kernel):
    def stats(self, op: VectorOp, params: VectorParams) -> int:
        return 2

    def passes(self, op: VectorOp, params: VectorParams) -> tuple[PassSpec, ...]:
        out = PassSpec("normalise", params.reduction != "resident", True, ("GAMMA", "BETA"))
        if params.reduction == "online":
            return (PassSpec("moments", loads=True), out)
        streamed = params.reduction == "two_pass"
        return (PassSpec("mean", loads=True), PassSpec("variance", loads=streamed), out)

    def temps(self, op: VectorOp, params: VectorParams) -> int:
        return {"online": 2, "resident": 1}.get(params.reduction, 0)

    def consts(self, op: VectorOp, cols_in_last_tile: int, tile: int) -> tuple[Const, ...]:
        return (Const("ones", "ones"), Const("eps", "scaled", op.eps))

    def compute(self, e: Emitter, plan: Plan, v: Visit) -> None:
        name, x, (mean, rstd) = plan.passes[v.p].name, v.x, v.stats
        if name == "mean":
            accumulate(e, "add", mean, x, v.first, v.last, "sum")
            if v.last:
                e.vscale(mean, mean, 1.0 / plan.op.cols)
        elif name == "variance":
            e.vop("sub", x, x, mean)
            if v.pad:
                e.masklen(x, plan.T, v.cols)
            square = plan.temp(0) if plan.resident else x
            e.vop("mul", rstd if v.first else square, x, x)
            if not v.first:
                e.vop("add", rstd, rstd, square)
            if v.last:
                _rstd_of_squares(e, plan, rstd, reduce=True)
        elif name == "moments":
            _merge_moments(e, plan, v)
        else:
            if not plan.resident:
                e.vop("sub", x, x, mean)
            e.vop("mul", x, x, rstd)
            e.vop("mul", x, x, v.params[0])
            e.vop("add", x, x, v.params[1])


def _rstd_of_squares(e: Emitter, plan: Plan, acc: int, reduce: bool) -> None:
    """acc := 1 / sqrt(rowsum(acc) / cols + eps)."""
    if reduce:
        e.rowred("sum", acc, acc)
    e.vscale(acc, acc, 1.0 / plan.op.cols)
    e.vop("add", acc, acc, plan.const("eps"))
    e.sfu("rsqrt", acc, acc)


def _tile_moments(e: Emitter, plan: Plan, v: Visit, mean: int, m2: int) -> None:
    """mean := the tile's row means over its valid columns; m2 := its sums of squared
    deviations (x is overwritten)."""
    x = v.x
    e.rowred("sum", mean, x)
    e.vscale(mean, mean, 1.0 / v.cols)
    e.vop("sub", x, x, mean)
    if v.pad:
        e.masklen(x, plan.T, v.cols)
    e.vop("mul", x, x, x)
    e.rowred("sum", m2, x)


def _merge_moments(e: Emitter, plan: Plan, v: Visit) -> None:
    mean, m2 = v.stats
    if v.first:
        _tile_moments(e, plan, v, mean, m2)
    else:
        tile_mean, scaled = plan.temp(0), plan.temp(1)
        _tile_moments(e, plan, v, tile_mean, v.x)
        before, n = v.j * plan.T, v.cols  # every tile before the last is whole
        e.vop("add", m2, m2, v.x)
        e.vop("sub", tile_mean, tile_mean, mean)  # delta
        e.vscale(scaled, tile_mean, n / (before + n))
        e.vop("add", mean, mean, scaled)
        e.vop("mul", tile_mean, tile_mean, tile_mean)
        e.vscale(tile_mean, tile_mean, before * n / (before + n))
        e.vop("add", m2, m2, tile_mean)
    if v.last:
        _rstd_of_squares(e, plan, m2, reduce=False)


class RmsNormKernel(Kernel):
    def stats(self, op: VectorOp, params: VectorParams) -> int:
        return 1

    def passes(self, op: VectorOp, params: VectorParams) -> tuple[PassSpec, ...]:
        streamed = params.reduction != "resident"
        return (
            PassSpec("squares", loads=True),
            PassSpec("normalise", streamed, True, ("GAMMA",)),
        )

    def temps(self, op: VectorOp, params: VectorParams) -> int:
        return 1 if params.reduction == "resident" else 0

    def consts(self, op: VectorOp, cols_in_last_tile: int, tile: int) -> tuple[Const, ...]:
        return (Const("ones", "ones"), Const("eps", "scaled", op.eps))

    def compute(self, e: Emitter, plan: Plan, v: Visit) -> None:
        x, acc = v.x, v.stats[0]
        if plan.passes[v.p].name == "squares":
            square = plan.temp(0) if plan.resident else x
            e.vop("mul", acc if v.first else square, x, x)
            if not v.first:
                e.vop("add", acc, acc, square)
            if v.last:
                _rstd_of_squares(e, plan, acc, reduce=True)
        else:
            e.vop("mul", x, x, acc)
            e.vop("mul", x, x, v.params[0])
