"""ONNX's graph rules, checked before a model's products are read: single assignment, nodes in
order (no cycle), and products of numbers (onnx.checker checks the first two too, but also insists
on external weight files and declared output shapes, which an import of shapes does without)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workloads.model import WorkloadError
from workloads.validation import printable


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
            if tensor and (tensor in written or tensor in known - set(outer)):
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
