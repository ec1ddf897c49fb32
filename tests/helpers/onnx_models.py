"""Small ONNX models for the importer's tests, built with onnx.helper (no downloads). Weights are
initializers whose data lives in an external file that does not exist: the importer needs
their shapes only."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import onnx
from onnx import TensorProto, helper

FLOAT = TensorProto.FLOAT


def weight(name: str, dims: Sequence[int]) -> onnx.TensorProto:
    """An initializer with its data in a missing external file."""
    tensor = TensorProto(
        name=name, data_type=FLOAT, dims=list(dims), data_location=TensorProto.EXTERNAL
    )
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "missing_weights.bin"
    return tensor


def value(name: str, dims: Sequence[int | str] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, FLOAT, None if dims is None else list(dims))


def model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, Sequence[int | str]],
    outputs: Sequence[str],
    weights: dict[str, Sequence[int]] | None = None,
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "test",
        [value(n, d) for n, d in inputs.items()],
        [value(o, None) for o in outputs],
        initializer=[weight(n, d) for n, d in (weights or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def save(proto: onnx.ModelProto, path: Path) -> Path:
    onnx.save(proto, str(path))
    return path


def small_cnn() -> onnx.ModelProto:
    """conv (7x7/2, pad 3) -> relu -> depthwise 3x3 (SAME_UPPER) -> pool -> fc; the batch is
    dynamic."""
    nodes = [
        helper.make_node(
            "Conv", ["x", "w1"], ["c1"], name="conv1", strides=[2, 2], pads=[3, 3, 3, 3]
        ),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="dw", group=8, auto_pad="SAME_UPPER"),
        helper.make_node("GlobalAveragePool", ["c2"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w"], ["y"], name="fc", transB=1),
    ]
    return model(
        nodes,
        {"x": ["batch", 3, 32, 32]},
        ["y"],
        {"w1": (8, 3, 7, 7), "w2": (8, 1, 3, 3), "fc_w": (10, 8)},
    )
