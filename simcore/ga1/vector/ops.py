"""Vector operations: what a non-GEMM operation computes, on what shape (one declaration).

An operation works on `batch` matrices of `rows` x `cols` (the last axis is `cols`: softmax and
the norms reduce along it, a bias or gamma runs along it). Row-wise operations and elementwise
ones treat a batch as one matrix of batch x rows rows (the rows are independent, and a
row-major [batch, rows, cols] tensor is exactly that matrix); a causal softmax and a transpose
run matrix by matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# kind -> (family, one-line description)
KINDS: dict[str, tuple[str, str]] = {
    "relu": ("map", "max(x, 0)"),
    "gelu": ("map", "x * Phi(x) (tanh form composed from exp and div, or erf form on the sfu)"),
    "silu": ("map", "x * sigmoid(x) = x / (1 + exp(-x))"),
    "tanh": ("map", "tanh(x) = 1 - 2 / (1 + exp(2x))"),
    "clip": ("map", "min(max(x, 0), 6), ReLU6 = relu(x) - relu(x - 6)"),
    "scale": ("map", "x * scale"),
    "add": ("map", "x + y (a residual add)"),
    "mul": ("map", "x * y"),
    "bias": ("map", "x + b, b a vector along cols"),
    "copy": ("map", "a copy of x (loads and stores only)"),
    "transpose": ("map", "x transposed, matrix by matrix"),
    "softmax": ("rows", "exp(s x - max) / sum, along cols; optional causal mask"),
    "layernorm": ("rows", "(x - mean) / sqrt(var + eps) * gamma + beta, along cols"),
    "rmsnorm": ("rows", "x / sqrt(mean(x^2) + eps) * gamma, along cols"),
    "rowsum": ("rows", "the sum of each row (rows x 1)"),
    "rowmax": ("rows", "the largest entry of each row (rows x 1)"),
}
GELU_FORMS: tuple[str, ...] = ("tanh", "erf")
BINARY = frozenset({"add", "mul"})
WITH_GAMMA = frozenset({"layernorm", "rmsnorm"})


class VectorOpError(ValueError):
    """An operation that cannot be built: an unknown kind, a bad size or option."""


@dataclass(frozen=True)
class VectorOp:
    """One operation. `scale` multiplies softmax's input (attention's 1/sqrt(d)) or is the
    factor of `scale`; `causal` masks column c of row r when c > r + causal_offset (a query at
    position r + offset of a sequence, attending to keys 0..r + offset); `eps` is the norms'."""

    kind: str
    rows: int
    cols: int
    batch: int = 1
    scale: float = 1.0
    causal: bool = False
    causal_offset: int = 0
    eps: float = 1e-5
    gelu: str = "tanh"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise VectorOpError(
                f"unknown vector operation {self.kind!r} (known: {', '.join(KINDS)})"
            )
        for name in ("rows", "cols", "batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise VectorOpError(
                    f"{self.kind}: {name} must be a positive integer, got {value!r}"
                )
        if self.causal and self.kind != "softmax":
            raise VectorOpError(f"{self.kind}: only softmax takes a causal mask")
        offset = self.causal_offset
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise VectorOpError(
                f"{self.kind}: causal_offset must be an integer >= 0, got {offset!r}"
            )
        if offset and not self.causal:
            raise VectorOpError(f"{self.kind}: causal_offset needs causal")
        if self.scale != 1.0 and self.kind not in ("softmax", "scale"):
            raise VectorOpError(f"{self.kind}: only softmax and scale take a scale")
        if not math.isfinite(self.scale):
            raise VectorOpError(f"{self.kind}: scale must be finite, got {self.scale}")
        if not (math.isfinite(self.eps) and self.eps > 0):
            raise VectorOpError(f"{self.kind}: eps must be positive, got {self.eps}")
        if self.gelu not in GELU_FORMS:
            raise VectorOpError(
                f"gelu form must be one of {', '.join(GELU_FORMS)}, got {self.gelu!r}"
            )

    @property
    def family(self) -> str:
        return KINDS[self.kind][0]

    @property
    def per_matrix(self) -> bool:
        """Whether the program runs matrix by matrix (else the batch is one tall matrix)."""
        return self.causal or self.kind == "transpose"

    @property
    def elements(self) -> int:
        return self.batch * self.rows * self.cols

    def out_shape(self) -> tuple[int, int]:
        """One output matrix's shape."""
        if self.kind in ("rowsum", "rowmax"):
            return (self.rows, 1)
        if self.kind == "transpose":
            return (self.cols, self.rows)
        return (self.rows, self.cols)

    def describe(self) -> str:
        shape = (
            f"{self.batch}x{self.rows}x{self.cols}"
            if self.batch > 1
            else f"{self.rows}x{self.cols}"
        )
        extra = []
        if self.kind == "gelu":
            extra.append(f"{self.gelu} form")
        if self.kind in ("softmax", "scale") and self.scale != 1.0:
            extra.append(f"scale {self.scale:g}")
        if self.causal:
            extra.append(f"causal, offset {self.causal_offset}")
        return f"{self.kind} {shape}" + (f" ({', '.join(extra)})" if extra else "")
