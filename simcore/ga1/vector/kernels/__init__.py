"""The kernel of each operation kind (one file per family)."""

from __future__ import annotations

from simcore.ga1.vector.kernels.base import Const, Kernel, PassSpec
from simcore.ga1.vector.kernels.maps import MapKernel
from simcore.ga1.vector.kernels.norms import LayerNormKernel, RmsNormKernel
from simcore.ga1.vector.kernels.reductions import RowReduceKernel
from simcore.ga1.vector.kernels.softmax import SoftmaxKernel
from simcore.ga1.vector.ops import VectorOp

_ROWS: dict[str, type[Kernel]] = {
    "softmax": SoftmaxKernel,
    "layernorm": LayerNormKernel,
    "rmsnorm": RmsNormKernel,
    "rowsum": RowReduceKernel,
    "rowmax": RowReduceKernel,
}


def kernel_for(op: VectorOp) -> Kernel:
    return _ROWS.get(op.kind, MapKernel)()


__all__ = ["Const", "Kernel", "PassSpec", "kernel_for"]
