"""Row sums and row maxima: one pass accumulates a band's tiles elementwise, one row reduction
at the band's last tile, and the band's column of results is stored (rows x 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.ga1.vector.kernels.base import Const, Kernel, PassSpec, accumulate
from simcore.ga1.vector.ops import VectorOp
from simcore.ga1.vector.params import VectorParams

if TYPE_CHECKING:
    from simcore.ga1.vector.emit import Emitter
    from simcore.ga1.vector.plan import Plan, Visit


class RowReduceKernel(Kernel):
    band_output = True

    def stats(self, op: VectorOp, params: VectorParams) -> int:
        return 1

    def passes(self, op: VectorOp, params: VectorParams) -> tuple[PassSpec, ...]:
        return (PassSpec("reduce", loads=True),)

    def consts(self, op: VectorOp, cols_in_last_tile: int, tile: int) -> tuple[Const, ...]:
        # A maximum must not see the zero padding of a partial tile: -inf there.
        if op.kind == "rowmax" and cols_in_last_tile < tile:
            return (Const("PAD", "dram"),)
        return ()

    def compute(self, e: Emitter, plan: Plan, v: Visit) -> None:
        acc, x = v.stats[0], v.x
        func = "max" if plan.op.kind == "rowmax" else "add"
        if v.pad and plan.op.kind == "rowmax":
            e.vop("add", x, x, plan.const("PAD"))
        accumulate(e, func, acc, x, v.first, v.last, "max" if func == "max" else "sum")
        if v.last:
            e.store(acc, plan.out_name(v.h), v.band, 0)
