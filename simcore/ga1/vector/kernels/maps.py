"""Elementwise kernels: one output pass, each tile computed in its own slot and stored.

GELU in tanh form is composed from the chapter's instructions: 0.5 x (1 + tanh(u)) equals
x / (1 + exp(-2u)), u = sqrt(2 / pi) (x + 0.044715 x^3). The erf form uses the sfu's erf.
SiLU is x / (1 + exp(-x)), tanh 1 - 2 / (1 + exp(2x)) (exact at both tails: exp overflows to
inf and gives 1, underflows to 0 and gives -1), ReLU6 relu(x) - relu(x - 6). A transpose
writes tile (i, j) transposed to tile (j, i).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from simcore.ga1.vector.kernels.base import Const, Kernel, PassSpec
from simcore.ga1.vector.ops import BINARY, VectorOp
from simcore.ga1.vector.params import VectorParams

if TYPE_CHECKING:
    from simcore.ga1.vector.emit import Emitter
    from simcore.ga1.vector.plan import Plan, Visit

GELU_CUBIC = 0.044715
GELU_TANH_SCALE = math.sqrt(2.0 / math.pi)


class MapKernel(Kernel):
    def passes(self, op: VectorOp, params: VectorParams) -> tuple[PassSpec, ...]:
        bias = ("BIAS",) if op.kind == "bias" else ()
        return (PassSpec("map", loads=True, output=True, params=bias, second=op.kind in BINARY),)

    def temps(self, op: VectorOp, params: VectorParams) -> int:
        return 1 if op.kind in ("gelu", "silu", "tanh", "clip") else 0

    def consts(self, op: VectorOp, cols_in_last_tile: int, tile: int) -> tuple[Const, ...]:
        extra = {"tanh": (Const("twos", "scaled", 2.0),), "clip": (Const("six", "scaled", 6.0),)}
        if op.kind in ("gelu", "silu", "tanh", "clip"):
            return (Const("ones", "ones"), *extra.get(op.kind, ()))
        return ()

    def compute(self, e: Emitter, plan: Plan, v: Visit) -> None:
        kind, x = plan.op.kind, v.x
        if kind == "relu":
            e.vop("relu", x, x)
        elif kind == "scale":
            e.vscale(x, x, plan.op.scale)
        elif kind in BINARY:
            e.vop(kind, x, x, v.second)
        elif kind == "bias":
            e.vop("add", x, x, v.params[0])
        elif kind == "transpose":
            e.transpose(x, x)
        elif kind == "silu":
            t, ones = plan.temp(0), plan.const("ones")
            e.vop("neg", t, x)
            e.exp(t, t)
            e.vop("add", t, t, ones)
            e.vop("div", x, x, t)
        elif kind == "gelu":
            _gelu(e, plan, x)
        elif kind == "tanh":
            t, ones = plan.temp(0), plan.const("ones")
            e.vscale(t, x, 2.0)
            e.exp(t, t)
            e.vop("add", t, t, ones)
            e.vop("div", t, plan.const("twos"), t)
            e.vop("sub", x, ones, t)
        elif kind == "clip":
            t = plan.temp(0)
            e.vop("relu", x, x)
            e.vop("sub", t, x, plan.const("six"))
            e.vop("relu", t, t)
            e.vop("sub", x, x, t)
        # copy: the load and the store are the whole program


def _gelu(e: Emitter, plan: Plan, x: int) -> None:
    t, ones = plan.temp(0), plan.const("ones")
    if plan.op.gelu == "erf":  # 0.5 x (1 + erf(x / sqrt 2))
        e.vscale(t, x, 1.0 / math.sqrt(2.0))
        e.sfu("erf", t, t)
        e.vop("add", t, t, ones)
        e.vop("mul", x, x, t)
        e.vscale(x, x, 0.5)
        return
    e.vop("mul", t, x, x)  # x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3)))
    e.vop("mul", t, t, x)
    e.vscale(t, t, GELU_CUBIC)
    e.vop("add", t, t, x)
    e.vscale(t, t, -2.0 * GELU_TANH_SCALE)
    e.exp(t, t)
    e.vop("add", t, t, ones)
    e.vop("div", x, x, t)
