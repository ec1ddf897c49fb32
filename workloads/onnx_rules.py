"""ONNX's graph rules, checked before a model's products are read: each node against its
operator's schema (ONNX's own `onnx.checker.check_node`), single assignment, nodes in order (no
cycle), and products of numbers.

ONNX's whole-model checker (`onnx.checker.check_model`, even without `full_check`) cannot be
called: it refuses a graph output without a declared shape and a weight whose external data file
is missing, and an import of shapes reads models with both (tools/onnx_nets.py writes such
models). Its node check is the part that applies; the graph rules it would add are ours here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workloads.model import WorkloadError
from workloads.validation import printable


def check_nodes(onnx: Any, model: Any, path: Path) -> None:
    """Each node of the main graph against its operator's schema, by ONNX's checker: a known
    operator of the declared opset, its attributes, its number of inputs and outputs. A node
    with a body (If, Loop, Scan) is left to the graph rules below: the node check would check
    its body without the outer names it may read."""
    context = onnx.checker.C.CheckerContext()
    context.ir_version = model.ir_version
    context.opset_imports = {imp.domain: imp.version for imp in model.opset_import}
    for index, node in enumerate(model.graph.node):
        if any(
            a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
            for a in node.attribute
        ):
            continue  # its body may read the outer graph's names, which the node check cannot see
        try:
            onnx.checker.check_node(node, context)
        except (onnx.checker.ValidationError, UnicodeDecodeError) as exc:
            # The checker's message quotes the node's strings: not UTF-8, it cannot be decoded.
            name = printable(node.name or f"{node.op_type}_{index}")
            text = "a string that is not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
            reason = printable(" ".join(text.split("==>")[0].split()), 200)
            raise WorkloadError(
                f"ONNX model {path}: node '{name}' breaks ONNX's rules: {reason}"
            ) from None


def check_rules(model: Any, path: Path) -> None:
    """ONNX's graph rules the importer relies on (onnx.checker checks them too, but also insists
    on external weight files and declared output shapes, which only shapes' import does without):
    single assignment (no two nodes, or a node and an input, write one tensor) and nodes in
    order (a node reads only inputs, weights and earlier nodes' outputs: no cycle, no node
    reading its own output). Subgraphs (If, Loop and Scan bodies, never lowered) are held to single
    assignment only."""
    _check_graph(model.graph, set(), path, reads=True)


def _check_graph(graph: Any, outer: set[str], path: Path, reads: bool) -> None:
    known = set(outer) | {value.name for value in graph.input}
    known |= {init.name for init in graph.initializer}
    known |= {sparse.values.name for sparse in graph.sparse_initializer}
    written: set[str] = set()
    for index, node in enumerate(graph.node):
        name = printable(node.name or f"{node.op_type}_{index}")
        for tensor in node.input:
            if reads and tensor and tensor not in known:
                why = (
                    "its own output" if tensor in node.output else "a tensor no earlier node writes"
                )
                raise WorkloadError(
                    f"ONNX model {path}: node '{name}' reads '{printable(tensor)}', {why} "
                    "(ONNX graphs are acyclic, their nodes in order)"
                )
        for attr in node.attribute:
            for inner in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                _check_graph(inner, known, path, reads=False)
        for tensor in node.output:
            # `known - outer` built per output would make the check quadratic in the nodes
            if tensor and (tensor in written or (tensor in known and tensor not in outer)):
                raise WorkloadError(
                    f"ONNX model {path}: node '{name}' writes '{printable(tensor)}', which another "
                    "node or an input already holds (ONNX graphs assign each tensor once)"
                )
            written.add(tensor)
            known.add(tensor)


def check_operand_types(
    onnx: Any, graph: Any, path: Path, products: frozenset[str], domains: tuple[str, ...]
) -> None:
    """A matrix product of strings or booleans breaks its operator's type rules (inference with
    check_type would also refuse a quantized product's mixed types, which the import reads)."""
    kinds = {init.name: init.data_type for init in graph.initializer}
    for value in (*graph.input, *graph.value_info, *graph.output):
        if value.type.HasField("tensor_type"):
            kinds[value.name] = value.type.tensor_type.elem_type
    for index, node in enumerate(graph.node):
        if node.op_type not in products or node.domain not in domains:
            continue
        for tensor in filter(None, node.input):
            kind = kinds.get(tensor, onnx.TensorProto.UNDEFINED)
            if kind in (onnx.TensorProto.STRING, onnx.TensorProto.BOOL):
                name = printable(node.name or f"{node.op_type}_{index}")
                element = onnx.TensorProto.DataType.Name(kind).lower()
                raise WorkloadError(
                    f"ONNX model {path}: {node.op_type} node '{name}' multiplies "
                    f"'{printable(tensor)}', a tensor of {element}s (its operator takes numbers)"
                )
