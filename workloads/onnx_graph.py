"""ONNX models as workloads: every matrix product of the graph as a weighted GEMM.

The model is read with `onnx.load(path, load_external_data=False)`: only shapes matter, so a
model whose weights live in a missing external file still imports. `onnx.shape_inference`
(with data propagation, so shape arithmetic such as Shape -> Reshape resolves) gives every
tensor's shape. A model input with a dynamic dimension needs its shape given (`input_shapes`).
An initializer is its input's value: when a graph input of the same name (IR < 4 exports) has
a symbolic shape, the initializer's dims replace it. Weights stored as sparse initializers take
their sparse tensor's dims. A product with a zero-size operand (no multiply-accumulates) is an
error, as is an attribute the operator definition does not allow.

Lowered (onnx_ops.py): MatMul, MatMulInteger, QLinearMatMul, Gemm, Conv, ConvInteger,
QLinearConv, and Einsum's matrix-product forms. Other ops of the ONNX domain are summarised in
one line (how many of which kinds). Heavy ops that are not lowered (recurrent layers, transposed
convolutions, fused attention, control flow whose bodies hold products) and ops of other domains
are named, with their counts, in the workload's warnings: their work is not in the GEMMs.
Same-shape products merge into one GEMM with the summed weight, keeping every layer's name.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Mapping

from simcore.files import FileError, read_bytes
from workloads import onnx_ops
from workloads.formats import WorkloadFormat
from workloads.layers import LayerGemm, count_line, merge
from workloads.model import DynamicShapeError, Workload, WorkloadError
from workloads.onnx_rules import check_nodes, check_operand_types, check_rules
from workloads.validation import MAX_DIM, brief, printable, validate_workload

# A model is read whole (protobuf has no streaming reader): weights past this belong in an
# external data file, which is never read (only shapes matter).
ONNX_BYTES = 512 << 20

# op -> positions of the two operands among the node's inputs
MATMULS: dict[str, tuple[int, int]] = {
    "MatMul": (0, 1),
    "MatMulInteger": (0, 1),
    "QLinearMatMul": (0, 3),
}
CONVS: dict[str, tuple[int, int]] = {"Conv": (0, 1), "ConvInteger": (0, 1), "QLinearConv": (0, 3)}
PRODUCTS = frozenset({*MATMULS, *CONVS, "Gemm", "Einsum"})
HEAVY = frozenset({"LSTM", "GRU", "RNN", "ConvTranspose", "DeformConv", "Attention"})
DEFAULT_DOMAINS = ("", "ai.onnx")
Shapes = dict[str, "tuple[int | str | None, ...] | None"]


def _onnx() -> Any:
    try:
        import onnx
        import onnx.shape_inference  # noqa: F401
    except ModuleNotFoundError:
        raise WorkloadError(
            "reading ONNX models needs the onnx package: pip install 'autotune[onnx]'"
        ) from None
    return onnx


def _first_line(exc: BaseException) -> str:
    """An exception's message as one line of at most about 200 characters."""
    text = " ".join(str(exc).split())
    return printable(text, 200) if text else type(exc).__name__


def _load(onnx: Any, path: Path) -> Any:
    """The model, read as at most ONNX_BYTES of a regular file, then checked by ONNX's own node
    checker and the graph rules (single assignment, nodes in order, so no cycle: a node reading
    its own output, two nodes writing one output)."""
    try:
        data = read_bytes(path, "ONNX model", ONNX_BYTES)
    except FileError as exc:
        raise WorkloadError(str(exc)) from None
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf's DecodeError and whatever onnx raises on a bad file
        raise WorkloadError(
            f"ONNX model {path}: not a readable ONNX file (corrupt or truncated?): "
            f"{_first_line(exc)}"
        ) from None
    if model.ir_version == 0 or not model.HasField("graph"):
        raise WorkloadError(f"ONNX model {path}: not an ONNX model (no IR version or no graph)")
    del data
    _check_versions(onnx, model, path)
    check_nodes(onnx, model, path)
    check_rules(model, path)
    return model


def _check_versions(onnx: Any, model: Any, path: Path) -> None:
    if model.ir_version > onnx.IR_VERSION:
        raise WorkloadError(
            f"ONNX model {path}: IR version {model.ir_version} is newer than this onnx package "
            f"reads ({onnx.IR_VERSION}); upgrade onnx"
        )
    opsets = {imp.domain or "ai.onnx": imp.version for imp in model.opset_import}
    if "ai.onnx" not in opsets:
        if any(node.domain in DEFAULT_DOMAINS for node in model.graph.node):
            raise WorkloadError(f"ONNX model {path}: it declares no ONNX opset (a truncated file?)")
        return
    newest = onnx.defs.onnx_opset_version()
    if not 1 <= opsets["ai.onnx"] <= newest:
        raise WorkloadError(
            f"ONNX model {path}: opset {opsets['ai.onnx']} is not supported by this onnx "
            f"package (opsets 1 to {newest}); upgrade onnx"
        )


def _densify_sparse(onnx: Any, graph: Any) -> None:
    """Sparse initializers as dense ones of the same dims and no data: shape inference does
    not give a sparse tensor's consumers a shape, and only the shape is read."""
    for sparse in graph.sparse_initializer:
        graph.initializer.append(
            onnx.TensorProto(
                name=sparse.values.name,
                data_type=sparse.values.data_type,
                dims=list(sparse.dims),
                data_location=onnx.TensorProto.EXTERNAL,
            )
        )
    del graph.sparse_initializer[:]


def _declare_initializers(graph: Any) -> None:
    """A graph input that is also an initializer takes the initializer's dims when its own
    shape is missing or not fixed: the initializer is its value."""
    dims_of = {init.name: list(init.dims) for init in graph.initializer}
    for value in graph.input:
        if value.name not in dims_of or not value.type.HasField("tensor_type"):
            continue
        shape = value.type.tensor_type.shape
        fixed = value.type.tensor_type.HasField("shape") and all(
            d.HasField("dim_value") and d.dim_value >= 0 for d in shape.dim
        )
        if not fixed:
            del shape.dim[:]
            for size in dims_of[value.name]:
                shape.dim.add().dim_value = size


def _check_given(given: dict[str, tuple[int, ...]], path: Path) -> None:
    for name, shape in given.items():
        for size in shape:
            if not 1 <= size <= MAX_DIM:
                raise WorkloadError(
                    f"ONNX model {path}: input '{printable(name)}': a given dimension must be from 1 to "
                    f"{MAX_DIM} (int64), got {brief(size)}"
                )


def _fix_inputs(graph: Any, given: dict[str, tuple[int, ...]], path: Path) -> None:
    """Set the given input shapes; a dynamic dimension left is an error naming it."""
    _check_given(given, path)
    weights = {init.name for init in graph.initializer}
    inputs = [i for i in graph.input if i.name not in weights]
    names = {i.name for i in inputs}
    unknown = sorted(set(given) - names)
    if unknown:
        raise WorkloadError(
            f"ONNX model {path}: no input named {', '.join(map(repr, unknown))} "
            f"(its inputs: {', '.join(printable(i.name) for i in inputs) or 'none'})"
        )
    for value in inputs:
        if not value.type.HasField("tensor_type"):
            continue
        if value.name not in given and not value.type.tensor_type.HasField("shape"):
            raise DynamicShapeError(
                f"ONNX model {path}: input '{printable(value.name)}' has no shape; its shape must be given",
                value.name,
                (),
            )
        dims = value.type.tensor_type.shape.dim
        if value.name in given:
            shape = given[value.name]
            if value.type.tensor_type.HasField("shape") and len(dims) != len(shape):
                raise WorkloadError(
                    f"ONNX model {path}: input '{printable(value.name)}' has {len(dims)} dimensions, "
                    f"{len(shape)} given ({'x'.join(map(str, shape))})"
                )
            del dims[:]
            for size in shape:
                dims.add().dim_value = size
            continue
        _check_fixed(value, path)


def _check_fixed(value: Any, path: Path) -> None:
    """DynamicShapeError naming an input's first dimension that is not fixed (a zero-size one is
    fixed: the products that read it refuse it)."""
    dims = value.type.tensor_type.shape.dim
    for index, dim in enumerate(dims):
        if not dim.HasField("dim_value") or dim.dim_value < 0:
            label = f" ({dim.dim_param!r})" if dim.dim_param else ""
            known = tuple(
                d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in dims
            )
            raise DynamicShapeError(
                f"ONNX model {path}: input '{printable(value.name)}' has a dynamic dimension "
                f"{index}{label}; its shape must be given",
                value.name,
                known,
            )


def _infer(onnx: Any, model: Any, path: Path) -> Any:
    try:
        return onnx.shape_inference.infer_shapes(
            model, check_type=False, strict_mode=False, data_prop=True
        )
    except Exception as exc:
        raise WorkloadError(
            f"ONNX model {path}: shape inference failed: {_first_line(exc)}"
        ) from None


def _shapes(graph: Any) -> Shapes:
    shapes: Shapes = {}
    for value in (*graph.input, *graph.value_info, *graph.output):
        tensor = value.type.tensor_type
        if not value.type.HasField("tensor_type") or not tensor.HasField("shape"):
            shapes.setdefault(value.name, None)
            continue
        shapes[value.name] = tuple(
            d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
            for d in tensor.shape.dim
        )
    for init in graph.initializer:  # an initializer is its tensor's value: its dims win
        shapes[init.name] = tuple(int(d) for d in init.dims)
    return shapes


class _Walk:
    """The graph's nodes sorted into products, other ops, unlowered heavy ops and foreign ops."""

    def __init__(self, onnx: Any, shapes: Shapes, path: Path) -> None:
        self.onnx, self.shapes, self.path = onnx, shapes, path
        self.found: list[LayerGemm] = []
        self.other: Counter[str] = Counter()
        self.unlowered: Counter[str] = Counter()
        self.foreign: Counter[str] = Counter()

    def run(self, graph: Any) -> None:
        for index, node in enumerate(graph.node):
            op = node.op_type
            if node.domain not in DEFAULT_DOMAINS:
                self.foreign[f"{node.domain}.{op}"] += 1
            elif op in PRODUCTS:
                self._product(node, node.name or f"{op}_{index}")
            elif op in HEAVY:
                self.unlowered[op] += 1
            elif _inner_products(node):
                self.unlowered[
                    f"{op} (with {_inner_products(node)} matrix products in its body)"
                ] += 1
            else:
                self.other[op] += 1

    def _dims(self, node: Any, position: int, name: str) -> tuple[int, ...]:
        tensor = node.input[position] if position < len(node.input) else ""
        dims = self.shapes.get(tensor) if tensor else None
        where = f"ONNX model {self.path}: {node.op_type} node '{printable(name)}'"
        if dims is None:
            raise WorkloadError(
                f"{where}: the shape of its input '{tensor}' is not known (shape inference "
                f"could not infer it)"
            )
        if 0 in dims:
            raise WorkloadError(
                f"{where}: its input '{tensor}' has a zero-size dimension (shape {tuple(dims)}): "
                f"the product has no multiply-accumulates"
            )
        dynamic = [d for d in dims if not isinstance(d, int) or d <= 0]
        if dynamic:
            raise WorkloadError(
                f"{where}: its input '{tensor}' has a dynamic dimension "
                f"{dynamic[0]!r} (shape {tuple(dims)})"
            )
        return tuple(int(d) for d in dims)  # type: ignore[arg-type]

    def _product(self, node: Any, name: str) -> None:
        op = node.op_type
        attrs = {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}
        try:
            product = self.lower(node, name, op, attrs)
        except onnx_ops.NotAProduct as exc:
            self.unlowered[f"{op} ({exc})"] += 1
            return
        except ValueError as exc:
            if isinstance(exc, WorkloadError):
                raise
            raise WorkloadError(
                f"ONNX model {self.path}: {op} node '{printable(name)}': {exc}"
            ) from None
        self.found.append(
            LayerGemm(printable(name, None), product.m, product.k, product.n, product.weight, op)
        )

    def lower(self, node: Any, name: str, op: str, attrs: dict[str, Any]) -> onnx_ops.Product:
        if op in MATMULS:
            i, j = MATMULS[op]
            return onnx_ops.matmul(self._dims(node, i, name), self._dims(node, j, name))
        if op == "Gemm":
            return onnx_ops.gemm(
                self._dims(node, 0, name),
                self._dims(node, 1, name),
                int(attrs.get("transA", 0)),
                int(attrs.get("transB", 0)),
            )
        if op == "Einsum":
            equation = _equation(attrs)
            if len(node.input) != 2:
                raise onnx_ops.NotAProduct(f"{equation!r}: {len(node.input)} operands")
            return onnx_ops.einsum(equation, self._dims(node, 0, name), self._dims(node, 1, name))
        i, j = CONVS[op]
        auto_pad = attrs.get("auto_pad", b"NOTSET")
        conv_attrs = onnx_ops.ConvAttributes(
            group=int(attrs.get("group", 1)),
            strides=tuple(attrs.get("strides", ())),
            dilations=tuple(attrs.get("dilations", ())),
            pads=tuple(attrs.get("pads", ())),
            auto_pad=auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad),
            kernel_shape=tuple(attrs.get("kernel_shape", ())),
        )
        out = self.shapes.get(node.output[0]) or ()
        known = len(out) > 2 and all(isinstance(d, int) and d > 0 for d in out)
        spatial = tuple(int(d) for d in out[2:]) if known else None  # type: ignore[arg-type]
        x, w = self._dims(node, i, name), self._dims(node, j, name)
        return onnx_ops.conv(x, w, conv_attrs, spatial)


def _equation(attrs: dict[str, Any]) -> str:
    """An Einsum node's equation; ValueError when it is missing or not Einsum's syntax."""
    equation = attrs.get("equation")
    if not isinstance(equation, (bytes, str)):
        if "equation" not in attrs:
            raise ValueError("it has no equation attribute")
        raise ValueError(f"its equation attribute must be a string, got {equation!r}")
    text = equation.decode() if isinstance(equation, bytes) else equation
    onnx_ops.parse_equation(text)
    return text


def _check_equations(onnx: Any, graph: Any, path: Path) -> None:
    """Every Einsum equation, subgraphs' too, checked before shape inference: onnx's inference
    of some malformed ones ('......i,i->') never returns."""
    for index, node in enumerate(graph.node):
        if node.op_type == "Einsum" and node.domain in DEFAULT_DOMAINS:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            try:
                _equation(attrs)
            except ValueError as exc:
                name = node.name or f"Einsum_{index}"
                raise WorkloadError(
                    f"ONNX model {path}: Einsum node '{printable(name)}': {exc}"
                ) from None
        for attr in node.attribute:
            for inner in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                _check_equations(onnx, inner, path)


def _inner_products(node: Any) -> int:
    """Matrix products and heavy ops inside a node's subgraphs (If, Loop, Scan bodies)."""
    count = 0
    for attr in node.attribute:
        for graph in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
            for inner in graph.node:
                count += (inner.op_type in PRODUCTS or inner.op_type in HEAVY) + _inner_products(
                    inner
                )
    return count


def prepared(path: Path, input_shapes: Mapping[str, tuple[int, ...]] | None) -> tuple[Any, Any]:
    """The onnx module and the model, checked, its functions inlined, its input shapes fixed
    and every tensor's shape inferred; WorkloadError with a one-line reason."""
    onnx = _onnx()
    model = _load(onnx, path)
    if model.functions:  # model-local functions: their bodies hold ops too
        from onnx.inliner import inline_local_functions

        model = inline_local_functions(model)
    _densify_sparse(onnx, model.graph)
    _declare_initializers(model.graph)
    _fix_inputs(model.graph, dict(input_shapes or {}), path)
    _check_equations(onnx, model.graph, path)
    inferred = _infer(onnx, model, path)
    check_operand_types(onnx, inferred.graph, path, PRODUCTS, DEFAULT_DOMAINS)
    return onnx, inferred


def read_onnx(path: Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Workload:
    """An ONNX model's matrix products as a workload; WorkloadError with a one-line reason."""
    onnx, inferred = prepared(path, input_shapes)
    walk = _Walk(onnx, _shapes(inferred.graph), path)
    walk.run(inferred.graph)
    warnings = []
    if walk.unlowered:
        lost = count_line(walk.unlowered)
        warnings.append(f"not lowered to GEMMs (their work is not in the workload): {lost}")
    if walk.foreign:
        warnings.append(f"ops of other domains, not read: {count_line(walk.foreign)}")
    if not walk.found:
        kinds = (
            count_line(walk.other + walk.unlowered + walk.foreign)
            if len(inferred.graph.node)
            else "no ops"
        )
        raise WorkloadError(f"ONNX model {path}: no matrix products to tune ({kinds})")
    summary = (
        f"{len(walk.found)} matrix products; other ops (not matrix products): "
        f"{count_line(walk.other) if walk.other else 'none'}",
    )
    where = f"ONNX model {path}"
    workload = Workload(path.stem, merge(walk.found, where), summary, tuple(warnings))
    return validate_workload(workload, where)


def _read_graph(path: Path, input_shapes: Mapping[str, tuple[int, ...]] | None) -> Any:
    from workloads.onnx_network import read_onnx_graph

    return read_onnx_graph(path, input_shapes)


FORMAT = WorkloadFormat(
    "onnx",
    (".onnx",),
    read_onnx,
    "ONNX",
    "an ONNX model",
    takes_input_shapes=True,
    read_graph=_read_graph,
)
