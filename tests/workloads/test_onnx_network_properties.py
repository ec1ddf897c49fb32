"""Property: whatever the wiring of a random ONNX graph of elementwise, row-wise, view and
product nodes, every node is in exactly one operation's `layers`, every operation's tensors are
connected to it, and the graph's products equal the GEMM list's."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")
from helpers.examples import examples  # noqa: E402
from helpers.onnx_models import model, save  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from onnx import helper  # noqa: E402

from workloads.onnx_graph import read_onnx  # noqa: E402
from workloads.onnx_network import read_onnx_graph  # noqa: E402

UNARY = ("Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Sqrt", "Softmax", "Identity", "Erf")
BINARY = ("Add", "Mul", "Sub", "Div")
ROWS, COLS = 6, 8


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[object], dict[str, tuple[int, ...]]]:
    """Nodes over [ROWS, COLS] tensors, each reading earlier ones (or the input)."""
    tensors, nodes = ["x"], []
    weights: dict[str, tuple[int, ...]] = {}
    for index in range(draw(st.integers(1, 12))):
        out, name = f"t{index}", f"n{index}"
        pick = st.sampled_from(tensors)
        choice = draw(st.sampled_from(("unary", "binary", "product", "transpose2")))
        if choice == "unary":
            op = draw(st.sampled_from(UNARY))
            nodes.append(helper.make_node(op, [draw(pick)], [out], name=name))
        elif choice == "binary":
            op = draw(st.sampled_from(BINARY))
            nodes.append(helper.make_node(op, [draw(pick), draw(pick)], [out], name=name))
        elif choice == "product":  # [ROWS, COLS] x [COLS, COLS]
            weight = f"w{index}"
            weights[weight] = (COLS, COLS)
            nodes.append(helper.make_node("MatMul", [draw(pick), weight], [out], name=name))
        else:  # transposed twice: back to [ROWS, COLS]
            middle = f"{out}_t"
            nodes.append(helper.make_node("Transpose", [draw(pick)], [middle], name=f"{name}a"))
            nodes.append(helper.make_node("Transpose", [middle], [out], name=f"{name}b"))
        tensors.append(out)
    return nodes, weights


@settings(max_examples=examples(60), deadline=None)
@given(graphs())
def test_every_node_in_one_operation(
    tmp_path_factory: pytest.TempPathFactory, drawn: tuple[list[object], dict]
) -> None:
    nodes, weights = drawn
    last = nodes[-1].output[0]  # type: ignore[attr-defined]
    proto = model(nodes, {"x": [ROWS, COLS]}, [last], weights)  # type: ignore[arg-type]
    path = save(proto, tmp_path_factory.mktemp("g") / "g.onnx")
    graph = read_onnx_graph(path)
    layers = sorted(graph.layers())
    assert layers == sorted(n.name for n in nodes)  # type: ignore[attr-defined]
    for op in graph.operations:
        for tensor in op.inputs:
            assert op.name in graph.tensors[tensor].consumers
        for tensor in op.outputs:
            assert graph.tensors[tensor].producer == op.name
    products = [op for op in graph.operations if op.family == "product"]
    assert graph.macs == len(products) * ROWS * COLS * COLS
    if products:
        gemms = read_onnx(path).gemms
        assert sum(g.weight for g in gemms) == len(products)
