"""Fused groups: several operations computed as one program or one event schedule, their
intermediates kept on chip (one declaration per kind, read by every oracle; docs/fusion.md).

* `EpilogueGemm`: C = A B with elementwise work on each output tile before it is stored (bias,
  an activation, a residual add, a scale, a gate multiply), `batch` independent products;
* `FusedMlp`: Y = act(X W1 + b1) W2 + b2, over row blocks of X, the hidden block kept on chip
  between the two products;
* `FusedAttention`: softmax(Q K^T / sqrt(d)) V per head, over blocks of keys with a running
  maximum and sum (the flash-attention scheme); `prefill` and `decode` build the two LLM phases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

EPILOGUE_STEPS: tuple[str, ...] = ("bias", "relu", "gelu", "silu", "residual", "scale", "gate")
ACTIVATIONS: tuple[str, ...] = ("relu", "gelu", "silu")
GELU_FORMS: tuple[str, ...] = ("tanh", "erf")
K_LAYOUTS: tuple[str, ...] = ("transposed", "rows")


class FusedGroupError(ValueError):
    """A fused group that cannot be built: a bad size or option (the message names it)."""


def _positive(owner: str, **sizes: object) -> None:
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise FusedGroupError(f"{owner}: {name} must be a positive integer, got {value!r}")


def _gelu_form(owner: str, form: str) -> None:
    if form not in GELU_FORMS:
        raise FusedGroupError(
            f"{owner}: gelu form must be one of {', '.join(GELU_FORMS)}, got {form!r}"
        )


@dataclass(frozen=True)
class EpilogueGemm:
    """`batch` products C_h = A_h B_h (m x k times k x n), each output tile put through
    `epilogue` in order before it is stored: "bias" (a vector along n), "relu", "gelu",
    "silu", "residual" (an m x n tensor added), "scale" (by `scale`), "gate" (multiplied by an
    m x n tensor: SwiGLU's silu(x W_gate) times x W_up)."""

    m: int
    k: int
    n: int
    epilogue: tuple[str, ...] = ()
    batch: int = 1
    scale: float = 1.0
    gelu: str = "tanh"

    def __post_init__(self) -> None:
        _positive("gemm", m=self.m, k=self.k, n=self.n, batch=self.batch)
        for step in self.epilogue:
            if step not in EPILOGUE_STEPS:
                known = ", ".join(EPILOGUE_STEPS)
                raise FusedGroupError(f"gemm: unknown epilogue step {step!r} (known: {known})")
        if self.scale != 1.0 and "scale" not in self.epilogue:
            raise FusedGroupError("gemm: a scale needs the epilogue step 'scale'")
        if not math.isfinite(self.scale):
            raise FusedGroupError(f"gemm: scale must be finite, got {self.scale}")
        _gelu_form("gemm", self.gelu)

    @property
    def kind(self) -> str:
        return "gemm"

    @property
    def macs(self) -> int:
        return self.batch * self.m * self.k * self.n

    def describe(self) -> str:
        batch = f"{self.batch}x" if self.batch > 1 else ""
        steps = f" + {' + '.join(self.epilogue)}" if self.epilogue else ""
        return f"gemm {batch}{self.m}x{self.k}x{self.n}{steps}"


@dataclass(frozen=True)
class FusedMlp:
    """Y = act(X W1 [+ b1]) W2 [+ b2]: X is m x d, W1 d x hidden, W2 hidden x d_out."""

    m: int
    d: int
    hidden: int
    d_out: int
    activation: str = "gelu"
    bias: bool = True
    gelu: str = "tanh"

    def __post_init__(self) -> None:
        _positive("mlp", m=self.m, d=self.d, hidden=self.hidden, d_out=self.d_out)
        if self.activation not in ACTIVATIONS:
            known = ", ".join(ACTIVATIONS)
            raise FusedGroupError(
                f"mlp: activation must be one of {known}, got {self.activation!r}"
            )
        _gelu_form("mlp", self.gelu)

    @property
    def kind(self) -> str:
        return "mlp"

    @property
    def macs(self) -> int:
        return self.m * self.hidden * (self.d + self.d_out)

    def describe(self) -> str:
        bias = " with biases" if self.bias else ""
        return f"mlp {self.m}x{self.d} -> {self.hidden} ({self.activation}) -> {self.d_out}{bias}"


@dataclass(frozen=True)
class FusedAttention:
    """softmax(Q K^T scale + mask) V for `heads` heads: Q is queries x head_dim, K and V keys x
    head_dim. With `causal`, query r sees keys c <= r + causal_offset. `scale` defaults to
    1 / sqrt(head_dim). `k_layout`: K is held in DRAM transposed (head_dim x keys, as a KV
    cache may keep it) or by rows (each tile is transposed on the vector unit)."""

    heads: int
    queries: int
    keys: int
    head_dim: int
    causal: bool = False
    causal_offset: int = 0
    scale: float = 0.0  # 0: 1 / sqrt(head_dim)
    k_layout: str = "transposed"

    def __post_init__(self) -> None:
        _positive(
            "attention",
            heads=self.heads,
            queries=self.queries,
            keys=self.keys,
            head_dim=self.head_dim,
        )
        offset = self.causal_offset
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise FusedGroupError(
                f"attention: causal_offset must be an integer >= 0, got {offset!r}"
            )
        if offset and not self.causal:
            raise FusedGroupError("attention: causal_offset needs causal")
        if self.causal and self.queries + offset > self.keys:
            raise FusedGroupError(
                f"attention: the last query sees key {self.queries - 1 + offset}, "
                f"past the {self.keys} keys"
            )
        if not math.isfinite(self.scale) or self.scale < 0:
            raise FusedGroupError(f"attention: scale must be finite and >= 0, got {self.scale}")
        if self.k_layout not in K_LAYOUTS:
            raise FusedGroupError(
                f"attention: k_layout must be one of {', '.join(K_LAYOUTS)}, got {self.k_layout!r}"
            )
        if self.scale == 0.0:
            object.__setattr__(self, "scale", 1.0 / math.sqrt(self.head_dim))

    @property
    def kind(self) -> str:
        return "attention"

    @property
    def macs(self) -> int:
        """Multiply-adds of Q K^T and P V over the keys each query sees."""
        if not self.causal:
            seen = self.queries * self.keys
        else:
            first = 1 + self.causal_offset
            seen = self.queries * first + self.queries * (self.queries - 1) // 2
        return 2 * self.heads * seen * self.head_dim

    def describe(self) -> str:
        mask = f", causal offset {self.causal_offset}" if self.causal else ""
        return (
            f"attention {self.heads} heads, {self.queries} queries x {self.keys} keys, "
            f"head_dim {self.head_dim}{mask}, K {self.k_layout}"
        )


def prefill(heads: int, seq: int, head_dim: int, k_layout: str = "transposed") -> FusedAttention:
    """Causal self-attention over a prompt of `seq` tokens."""
    return FusedAttention(heads, seq, seq, head_dim, causal=True, k_layout=k_layout)


def decode(heads: int, context: int, head_dim: int, k_layout: str = "transposed") -> FusedAttention:
    """One new token's query against a KV cache of `context` tokens (its own key and value
    among them): one query row per head, every key and value read from DRAM."""
    return FusedAttention(heads, 1, context, head_dim, k_layout=k_layout)


FusedGroup = EpilogueGemm | FusedMlp | FusedAttention
