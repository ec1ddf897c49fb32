"""The network model: a directed graph of operations over named tensors.

An `Operation` has a kind (a key of `KINDS`, the one declaration of what each kind means: its
dimensions, its multiply-accumulates and the elements it processes), the tensors it reads and
writes, and a `count`: a block of identical layers is stored once and runs `count` times, its
output feeding its own input. `layers` names the source nodes an operation stands for (every
node of an ONNX model in exactly one operation); `block` is the network layer it belongs to,
for per-layer reports.

Dimensions by kind:

* gemm (m, k, n): A (m x k) times B (k x n). matmul (batch, m, k, n): `batch` independent
  products (attention's QK^T and SV per head). conv (groups, m, k, n): the convolution lowered
  by im2col, one product per group, m = batch x output pixels, k = C_in / groups x kernel size,
  n = C_out / groups.
* vector kinds (batch, rows, cols): `batch` matrices of rows x cols, the last axis `cols` (the
  axis softmax and the norms reduce, a bias runs along).
* views (elements,): reshape, split and a transpose that keeps the last axis name other
  coordinates of the same words; nothing moves. concat, copy and kv_append write a new tensor.
  kv_read is the KV cache as attention reads it: the attention products load it from DRAM, so
  its traffic is theirs; the operation states its size.
* shape (): constants and shape arithmetic, one operation for the whole graph.
* other (elements,): an op no oracle times, kept by its source name with its tensor sizes.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Mapping

from workloads.model import WorkloadError, whole

Dims = tuple[int, ...]
Option = tuple[str, "str | float | int | bool"]


def _prod(dims: Dims) -> int:
    return math.prod(dims) if dims else 1


def _no_macs(dims: Dims) -> int:
    return 0


def _gemm_macs(dims: Dims) -> int:
    return dims[0] * dims[1] * dims[2]


def _gemm_out(dims: Dims) -> int:
    return dims[0] * dims[2]


def _batched_out(dims: Dims) -> int:
    return dims[0] * dims[1] * dims[3]


@dataclass(frozen=True)
class Kind:
    """What one kind of operation is: its dimensions, its MACs and elements per run."""

    name: str
    family: str  # "product", "vector", "view", "copy", "shape", "other"
    dims: tuple[str, ...]
    description: str
    macs: Callable[[Dims], int] = _no_macs
    elements: Callable[[Dims], int] = _prod


VECTOR_DIMS = ("batch", "rows", "cols")


def _vector(name: str, description: str) -> Kind:
    return Kind(name, "vector", VECTOR_DIMS, description)


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("gemm", "product", ("m", "k", "n"), "matrix product", _gemm_macs, _gemm_out),
        Kind(
            "matmul",
            "product",
            ("batch", "m", "k", "n"),
            "batched matrix product",
            _prod,
            _batched_out,
        ),
        Kind(
            "conv",
            "product",
            ("groups", "m", "k", "n"),
            "convolution (im2col)",
            _prod,
            _batched_out,
        ),
        _vector("softmax", "softmax along the last axis (scale, causal mask)"),
        _vector("layernorm", "layer norm along the last axis"),
        _vector("rmsnorm", "RMS norm along the last axis"),
        _vector("relu", "max(x, 0)"),
        _vector("gelu", "GELU (tanh or erf form)"),
        _vector("silu", "x sigmoid(x)"),
        _vector("scale", "x times a constant"),
        _vector("add", "x + y (a residual add; a subtraction costs the same)"),
        _vector("mul", "x y elementwise"),
        _vector("bias", "x + b, b a vector along the last axis"),
        _vector("reduce", "a sum, mean or maximum along the last axis"),
        _vector("pool", "a pooling window over spatial axes (cols: the pixels)"),
        _vector("elementwise", "another elementwise function (named in `fn`)"),
        _vector("transpose", "the last two axes swapped, matrix by matrix"),
        _vector("gather", "rows of a table looked up by index (an embedding)"),
        Kind("reshape", "view", ("elements",), "a new shape over the same words (free)"),
        Kind("split", "view", ("elements",), "parts of a tensor named apart (free)"),
        Kind("permute", "view", ("elements",), "leading axes permuted, the last kept (free)"),
        Kind("kv_read", "view", ("elements",), "the KV cache read by attention (its loads)"),
        Kind("concat", "copy", ("elements",), "tensors written side by side (a copy)"),
        Kind("copy", "copy", ("elements",), "a tensor written again (a copy)"),
        Kind("kv_append", "copy", ("elements",), "the new keys or values appended to the cache"),
        Kind("shape", "shape", (), "constants and shape arithmetic", elements=_no_macs),
        Kind("other", "other", ("elements",), "an op no oracle times (named in `source`)"),
    )
}
PRODUCTS = frozenset(k for k, v in KINDS.items() if v.family == "product")


@dataclass(frozen=True)
class Operation:
    """One operation (module doc). `options` are kind-specific settings: softmax's `scale` and
    `causal`, gelu's `form`, a reduction's or elementwise op's `fn`."""

    name: str
    kind: str
    dims: Dims
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    count: float = 1  # runs per network step (a whole number unless a workload said so)
    layers: tuple[str, ...] = ()
    block: str = ""
    source: str = ""
    options: tuple[Option, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise WorkloadError(
                f"operation {self.name!r}: unknown kind {self.kind!r} (known: {', '.join(KINDS)})"
            )
        want = KINDS[self.kind].dims
        if len(self.dims) != len(want) or any(
            isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in self.dims
        ):
            raise WorkloadError(
                f"operation {self.name!r} ({self.kind}): dimensions {self.dims} must be "
                f"{len(want)} positive integers ({', '.join(want) or 'none'})"
            )
        count = self.count
        if isinstance(count, bool) or not isinstance(count, (int, float)) or not count > 0:
            raise WorkloadError(f"operation {self.name!r}: count must be > 0, got {count!r}")

    @property
    def family(self) -> str:
        return KINDS[self.kind].family

    @property
    def macs(self) -> int:
        """Multiply-accumulates of one run."""
        return KINDS[self.kind].macs(self.dims)

    @property
    def elements(self) -> int:
        """Elements one run processes (a product's outputs, a vector operation's inputs)."""
        return KINDS[self.kind].elements(self.dims)

    def option(self, name: str, default: object = None) -> object:
        return dict(self.options).get(name, default)

    def shape_text(self) -> str:
        return "x".join(map(str, self.dims)) if self.dims else "-"


@dataclass(frozen=True)
class Tensor:
    """A named tensor: its shape, its element width in bytes, the operation that writes it
    ("" for a graph input or a weight) and those that read it."""

    name: str
    shape: Dims
    width: int = 2
    producer: str = ""
    consumers: tuple[str, ...] = ()

    @property
    def elements(self) -> int:
        return _prod(self.shape)

    @property
    def bytes(self) -> int:
        return self.elements * self.width


@dataclass(frozen=True)
class Graph:
    """A network: its operations in order and its tensors by name (built by `connect`)."""

    name: str
    operations: tuple[Operation, ...]
    tensors: dict[str, Tensor] = field(default_factory=dict, compare=False)
    provenance: str = ""
    warnings: tuple[str, ...] = ()

    def operation(self, name: str) -> Operation:
        for op in self.operations:
            if op.name == name:
                return op
        raise KeyError(name)

    @property
    def macs(self) -> float:
        """Multiply-accumulates of one run of the network (every count applied)."""
        return whole(sum(op.count * op.macs for op in self.operations))

    @property
    def elements(self) -> float:
        return whole(sum(op.count * op.elements for op in self.operations))

    def counts(self) -> dict[str, float]:
        """Operations by kind, every count applied, most frequent first."""
        found: dict[str, float] = {}
        for op in self.operations:
            found[op.kind] = found.get(op.kind, 0) + op.count
        return {k: whole(v) for k, v in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))}

    def layers(self) -> tuple[str, ...]:
        """Every source node, in order."""
        return tuple(layer for op in self.operations for layer in op.layers)


def connect(
    name: str,
    operations: list[Operation] | tuple[Operation, ...],
    shapes: Mapping[str, tuple[Dims, int]],
    provenance: str = "",
    warnings: tuple[str, ...] = (),
) -> Graph:
    """The graph of `operations`, with each tensor's producer and consumers; `shapes` gives
    every tensor's (shape, width). WorkloadError for a repeated operation name, a tensor with
    no shape or two producers."""
    names = Counter(op.name for op in operations)
    twice = [n for n, c in names.items() if c > 1]
    if twice:
        raise WorkloadError(f"network {name}: operation name {twice[0]!r} is used twice")
    producer: dict[str, str] = {}
    consumers: dict[str, list[str]] = {}
    for op in operations:
        for tensor in op.inputs:
            consumers.setdefault(tensor, []).append(op.name)
        for tensor in op.outputs:
            if tensor in producer:
                raise WorkloadError(
                    f"network {name}: tensor {tensor!r} is written by {producer[tensor]!r} "
                    f"and {op.name!r}"
                )
            producer[tensor] = op.name
    tensors = {}
    for tensor in dict.fromkeys([*consumers, *producer]):
        if tensor not in shapes:
            raise WorkloadError(f"network {name}: tensor {tensor!r} has no shape")
        shape, width = shapes[tensor]
        tensors[tensor] = Tensor(
            tensor,
            tuple(shape),
            width,
            producer.get(tensor, ""),
            tuple(dict.fromkeys(consumers.get(tensor, ()))),
        )
    return Graph(name, tuple(operations), tensors, provenance, warnings)
