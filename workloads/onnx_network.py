"""ONNX models as network graphs: every node and edge kept, each node in exactly one operation.

The model is prepared as for its GEMM list (workloads.onnx_graph: shapes inferred, inputs
fixed). Then each node becomes an operation of workloads.graph's kinds:

* products (MatMul, Gemm, Conv, Einsum, their integer and quantised forms) are lowered as the
  GEMM list lowers them: a product with a 2-D weight is a `gemm`, a batched one a `matmul`, a
  convolution a `conv` (im2col);
* Softmax, LayerNormalization, RMSNormalization, Relu, Gelu map to their kinds; Add and Sub
  are a `bias` when the other operand runs along the last axis, else an `add`; Mul and Div by a
  scalar are a `scale`; ReduceSum/Mean/Max/Min a `reduce`; pools a `pool`; Gather a `gather`;
* patterns of several nodes become one operation: Sigmoid then Mul (SiLU); Div, Erf, Add, Mul,
  Mul (GELU, erf form); Pow(x, 3), Mul, Add, Mul, Tanh, Add, Mul with 0.5 x (GELU, tanh form);
  x*x or x^2, ReduceMean, Add, Sqrt, Reciprocal, Mul, Mul (RMS norm);
* Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout are `reshape` views; Split and Slice
  `split` views; a Transpose that keeps the last axis a `permute` view, one that swaps the last
  two a `transpose`, any other a `copy`; Concat a `concat` (a `kv_append` when it extends a
  graph input named past_*); Expand, Tile and Pad copies. A Transpose that moves the last axis
  to second last (attention's K^T) is a `transpose` of the last two, its other axes a view;
* constants and shape arithmetic (Shape, Size, Constant, ConstantOfShape, Range, and nodes
  computing on their results only) are one `shape` operation;
* any other node (other elementwise functions as `elementwise`, anything else as `other`,
  nodes of other domains too) is kept by its op type with its tensor sizes.

An operation's block is the first indexed part of its node's name (`transformer.h.3`), or its
first input's producer's block.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Mapping

from workloads import onnx_ops
from workloads.graph import Dims, Graph, Operation, connect
from workloads.model import WorkloadError
from workloads.onnx_graph import CONVS, DEFAULT_DOMAINS, PRODUCTS, _shapes, _Walk, prepared
from workloads.onnx_patterns import find_patterns

SHAPE_OPS = frozenset({"Shape", "Size", "Constant", "ConstantOfShape", "Range"})
SIMPLE = {
    "Relu": "relu",
    "Softmax": "softmax",
    "LayerNormalization": "layernorm",
    "RMSNormalization": "rmsnorm",
    "Gelu": "gelu",
}
VIEWS = {
    "Reshape": "reshape",
    "Flatten": "reshape",
    "Squeeze": "reshape",
    "Unsqueeze": "reshape",
    "Identity": "reshape",
    "Dropout": "reshape",
    "Split": "split",
    "Slice": "split",
}
COPIES = frozenset({"Expand", "Tile", "Pad"})
REDUCES = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min"}
POOLS = frozenset({"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool"})
UNARY = frozenset(
    {
        "Sigmoid",
        "Tanh",
        "Erf",
        "Exp",
        "Log",
        "Sqrt",
        "Reciprocal",
        "Neg",
        "Abs",
        "Clip",
        "Pow",
        "Cast",
        "Where",
        "LeakyRelu",
        "HardSigmoid",
        "HardSwish",
        "Softplus",
        "Elu",
        "Mish",
        "Sin",
        "Cos",
        "BatchNormalization",
        "Div",
        "Mul",
        "Add",
        "Sub",
        "Max",
        "Min",
        "Floor",
        "Ceil",
        "Round",
        "Equal",
        "Less",
        "Greater",
        "Not",
        "And",
        "Or",
        "InstanceNormalization",
        "Sign",
    }
)
_INDEXED = re.compile(r"^(.*?\.\d+)(?=\.|$)")


def block_of(name: str) -> str:
    """The first indexed part of a node's name: 'transformer.h.3' of 'transformer.h.3.attn'."""
    found = _INDEXED.match(name.replace("/", ".").strip("."))
    return found.group(1) if found else ""


def _static(dims: Any) -> Dims | None:
    if dims is None or not all(isinstance(d, int) and d >= 0 for d in dims):
        return None
    return tuple(dims)


def _rows(dims: Dims) -> Dims:
    """(batch, rows, cols) of a tensor: the last axis is cols, the one before rows."""
    if len(dims) < 2:
        return (1, 1, dims[0] if dims else 1)
    return (math.prod(dims[:-2]), dims[-2], dims[-1])


class _Reader:
    def __init__(self, onnx: Any, graph: Any, path: Path) -> None:
        self.onnx, self.graph, self.path = onnx, graph, path
        self.shapes = _shapes(graph)
        self.walk = _Walk(onnx, self.shapes, path)
        self.constant = {init.name for init in graph.initializer}
        self.inputs = {value.name for value in graph.input} - self.constant
        self.derived: set[str] = set()  # results of shape arithmetic
        self.block: dict[str, str] = {}  # tensor -> block of its producer
        self.consumers: dict[str, list[Any]] = {}
        self.producer: dict[str, Any] = {}
        for node in graph.node:
            for tensor in node.input:
                self.consumers.setdefault(tensor, []).append(node)
            for tensor in node.output:
                self.producer[tensor] = node
        self.ops: list[Operation] = []
        self.shape_nodes: list[Any] = []

    def dims(self, tensor: str) -> Dims | None:
        return _static(self.shapes.get(tensor)) if tensor else None

    def name(self, node: Any, index: int) -> str:
        return node.name or f"{node.op_type}_{index}"

    def run(self) -> list[Operation]:
        fused, taken = find_patterns(self.graph.node, self.consumers, self.producer)
        for index, node in enumerate(self.graph.node):
            if id(node) in fused:
                self._fused(*fused[id(node)])
                continue
            if id(node) in taken:
                continue
            if self._is_shape(node):
                self.shape_nodes.append(node)
                self.derived.update(node.output)
                continue
            self._add(node, index, *self._classify(node, self.name(node, index)))
        if self.shape_nodes:
            self._shape_op()
        return self.ops

    def _is_shape(self, node: Any) -> bool:
        if node.domain not in DEFAULT_DOMAINS:
            return False
        if node.op_type in SHAPE_OPS:
            return True
        used = [t for t in node.input if t]
        return (
            bool(used)
            and all(t in self.derived or t in self.constant for t in used)
            and any(t in self.derived for t in used)
        )

    def _fused(self, kind: str, options: tuple, nodes: list[Any]) -> None:
        x = nodes[0].input[0]
        dims = self.dims(x)
        inside = {t for n in nodes for t in n.output}
        inputs = tuple(dict.fromkeys(t for n in nodes for t in n.input if t and t not in inside))
        ending = next(
            n for n in nodes if not any(c in nodes for c in self.consumers.get(n.output[0], []))
        )
        layers = tuple(self.name(n, i) for i, n in self._indexed(nodes))
        op_kind, op_dims = (kind, _rows(dims)) if dims else ("other", (1,))
        self._emit(
            layers[0],
            op_kind,
            op_dims,
            inputs,
            tuple(ending.output),
            layers,
            "+".join(n.op_type for n in nodes),
            options,
        )

    def _add(self, node: Any, index: int, kind: str, dims: Dims, options: tuple = ()) -> None:
        name = self.name(node, index)
        source = node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"
        self._emit(
            name,
            kind,
            dims,
            tuple(t for t in node.input if t),
            tuple(node.output),
            (name,),
            source,
            options,
        )

    def _emit(
        self,
        name: str,
        kind: str,
        dims: Dims,
        inputs: tuple[str, ...],
        outputs: tuple[str, ...],
        layers: tuple[str, ...],
        source: str,
        options: tuple,
    ) -> None:
        block = block_of(name) or next((self.block[t] for t in inputs if t in self.block), "")
        for tensor in outputs:
            self.block[tensor] = block
        self.ops.append(
            Operation(name, kind, dims, inputs, outputs, 1, layers, block, source, options)
        )

    def _shape_op(self) -> None:
        nodes = self.shape_nodes
        outputs = tuple(t for n in nodes for t in n.output if t)
        inside = set(outputs)
        inputs = tuple(dict.fromkeys(t for n in nodes for t in n.input if t and t not in inside))
        layers = tuple(n.name or f"{n.op_type}_{i}" for i, n in self._indexed(nodes))
        sources = "+".join(sorted({n.op_type for n in nodes}))
        self.ops.append(
            Operation("constants and shapes", "shape", (), inputs, outputs, 1, layers, "", sources)
        )

    def _indexed(self, nodes: list[Any]) -> list[tuple[int, Any]]:
        position = {id(n): i for i, n in enumerate(self.graph.node)}
        return [(position[id(n)], n) for n in nodes]

    def _classify(self, node: Any, name: str) -> tuple[str, Dims, tuple]:
        op = node.op_type
        out = self.dims(node.output[0]) if node.output else None
        if node.domain not in DEFAULT_DOMAINS or out is None:
            return "other", (max(1, math.prod(out)) if out else 1,), ()
        if op in PRODUCTS:
            return self._product(node, name)
        if op in SIMPLE:
            return self._simple(node, SIMPLE[op], out)
        if op in ("Add", "Sub", "Mul", "Div"):
            return self._binary(node, out)
        size = (max(1, math.prod(out)),)
        if op in VIEWS:
            return VIEWS[op], size, ()
        if op in COPIES:
            return "copy", size, ()
        if op == "Transpose":
            return self._transpose(node, out)
        if op == "Concat":
            past = [t for t in node.input if t in self.inputs and "past" in t.lower()]
            if past:
                appended = math.prod(out) - sum(math.prod(self.dims(t) or (0,)) for t in past)
                return "kv_append", (max(1, appended),), ()
            return "concat", size, ()
        if op in REDUCES:
            source = self.dims(node.input[0]) or out
            return "reduce", _rows(source), (("fn", REDUCES[op]),)
        if op in POOLS:
            return self._pool(node, out)
        if op == "Gather":
            return "gather", (1, max(1, math.prod(out[:-1])), out[-1] if out else 1), ()
        if op in UNARY:
            return "elementwise", _rows(out), (("fn", op),)
        return "other", size, ()

    def _product(self, node: Any, name: str) -> tuple[str, Dims, tuple]:
        attrs = {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}
        try:
            p = self.walk.lower(node, name, node.op_type, attrs)
        except onnx_ops.NotAProduct:
            out = self.dims(node.output[0]) or (1,)
            return "other", (max(1, math.prod(out)),), ()
        except ValueError as exc:
            if isinstance(exc, WorkloadError):
                raise
            raise WorkloadError(
                f"ONNX model {self.path}: {node.op_type} node '{name}': {exc}"
            ) from None
        if node.op_type in CONVS:
            return "conv", (p.weight, p.m, p.k, p.n), ()
        if p.weight == 1:
            return "gemm", (p.m, p.k, p.n), ()
        return "matmul", (p.weight, p.m, p.k, p.n), ()

    def _simple(self, node: Any, kind: str, out: Dims) -> tuple[str, Dims, tuple]:
        attrs = {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}
        if kind in ("softmax", "layernorm", "rmsnorm"):
            axis = int(attrs.get("axis", -1))
            if axis not in (-1, len(out) - 1):
                return "elementwise", _rows(out), (("fn", node.op_type),)
        if kind == "gelu":
            form = attrs.get("approximate", b"none")
            form = form.decode() if isinstance(form, bytes) else str(form)
            return kind, _rows(out), (("form", "tanh" if form == "tanh" else "erf"),)
        return kind, _rows(out), ()

    def _binary(self, node: Any, out: Dims) -> tuple[str, Dims, tuple]:
        known = [self.dims(t) for t in node.input[:2]]
        sizes = [math.prod(dims if dims is not None else out) for dims in known]
        small = min(sizes)
        op = node.op_type
        if small == 1 and op in ("Mul", "Div") and math.prod(out) > 1:
            return "scale", _rows(out), ()
        if op in ("Add", "Sub"):
            if out and small == out[-1] and small < math.prod(out):
                return "bias", _rows(out), ()
            if small == math.prod(out) or small > 1:
                return "add", _rows(out), (("fn", op),) if op == "Sub" else ()
        if op == "Mul" and small > 1:
            return "mul", _rows(out), ()
        return "elementwise", _rows(out), (("fn", op),)

    def _transpose(self, node: Any, out: Dims) -> tuple[str, Dims, tuple]:
        attrs = {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}
        rank = len(out)
        perm = list(attrs.get("perm", range(rank - 1, -1, -1)))
        size = (max(1, math.prod(out)),)
        if rank < 2 or perm[-1] == rank - 1:
            return "permute", size, ()
        if perm[-2] == rank - 1:  # the leading axes permuted (a view), the last two swapped
            return "transpose", (math.prod(out[:-2]), out[-1], out[-2]), ()
        return "copy", size, (("perm", ",".join(map(str, perm))),)

    def _pool(self, node: Any, out: Dims) -> tuple[str, Dims, tuple]:
        attrs = {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}
        source = self.dims(node.input[0]) or out
        window = (
            math.prod(source[2:])
            if node.op_type.startswith("Global")
            else math.prod(attrs.get("kernel_shape", [1]))
        )
        return "pool", (1, max(1, math.prod(out)), max(1, window)), (("fn", node.op_type),)


def _width(onnx: Any, graph: Any) -> dict[str, int]:
    widths: dict[str, int] = {}
    for value in (*graph.input, *graph.value_info, *graph.output):
        elem = value.type.tensor_type.elem_type if value.type.HasField("tensor_type") else 0
        if elem:
            widths[value.name] = onnx.helper.tensor_dtype_to_np_dtype(elem).itemsize
    for init in graph.initializer:
        widths[init.name] = onnx.helper.tensor_dtype_to_np_dtype(init.data_type).itemsize
    return widths


def read_onnx_graph(path: Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Graph:
    """An ONNX model as a network graph (module doc); WorkloadError with a one-line reason."""
    onnx, model = prepared(path, input_shapes)
    reader = _Reader(onnx, model.graph, path)
    ops = reader.run()
    widths = _width(onnx, model.graph)
    shapes = {
        tensor: (_static(reader.shapes.get(tensor)) or (), widths.get(tensor, 4))
        for op in ops
        for tensor in (*op.inputs, *op.outputs)
    }
    producer = model.producer_name or "unknown producer"
    return connect(path.stem, ops, shapes, f"ONNX model {path.name} ({producer})")
