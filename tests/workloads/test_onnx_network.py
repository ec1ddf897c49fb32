"""ONNX models as graphs: every node in exactly one operation's `layers`, the products equal to
the GEMM list's, patterns fused, shape arithmetic folded, unknown ops kept by name."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")
from helpers.onnx_models import model, save  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from workloads.network import gemm_workload, load_graph  # noqa: E402
from workloads.onnx_graph import read_onnx  # noqa: E402
from workloads.onnx_network import block_of, read_onnx_graph  # noqa: E402

TOOLS = Path(__file__).resolve().parents[2] / "tools"


@pytest.fixture(scope="module")
def nets() -> object:
    sys.path.insert(0, str(TOOLS))
    try:
        import onnx_nets
    finally:
        sys.path.remove(str(TOOLS))
    return onnx_nets


def _every_node_once(proto: object, graph: object) -> None:
    names = [node.name for node in proto.graph.node]  # type: ignore[attr-defined]
    layers = Counter(graph.layers())  # type: ignore[attr-defined]
    assert sorted(layers) == sorted(names) and set(layers.values()) == {1}


@pytest.mark.parametrize(
    ("builder", "args", "macs", "kinds"),
    [
        # GPT-2 small, seq 256: 12 layers x (12 s d^2 + 2 s^2 d) + the LM head
        (
            "gpt2_small",
            (256,),
            12 * (12 * 256 * 768**2 + 2 * 256**2 * 768) + 256 * 768 * 50257,
            {"softmax": 12, "layernorm": 25, "gelu": 12, "matmul": 24, "gemm": 49},
        ),
        # BERT-base, seq 128: 12 x (4 s d^2 + 2 s d ff + 2 s^2 d) + the pooler
        (
            "bert_base",
            (128,),
            12 * (4 * 128 * 768**2 + 2 * 128 * 768 * 3072 + 2 * 128**2 * 768) + 768**2,
            {"softmax": 12, "layernorm": 25, "gelu": 12, "matmul": 24, "gemm": 73},
        ),
        ("resnet50", (), 4_089_184_256, {"conv": 53, "relu": 49, "add": 16, "gemm": 1}),
        ("mobilenet_v2", (), 300_774_272, {"conv": 52, "add": 10, "gemm": 1}),
    ],
)
def test_networks_every_node_accounted_for(
    nets: object,
    tmp_path: Path,
    builder: str,
    args: tuple[int, ...],
    macs: int,
    kinds: dict[str, int],
) -> None:
    proto = getattr(nets, builder)(*args)
    path = save(proto, tmp_path / f"{builder}.onnx")
    graph = read_onnx_graph(path)
    _every_node_once(proto, graph)
    assert graph.macs == macs
    counts = graph.counts()
    assert {k: counts.get(k, 0) for k in kinds} == kinds
    gemms = read_onnx(path).gemms
    assert [(g.shape, g.weight) for g in gemm_workload(graph).gemms] == [
        (g.shape, g.weight) for g in gemms
    ]


def test_llama_decode_layer_appends_to_the_cache(nets: object, tmp_path: Path) -> None:
    proto = nets.llama2_7b_layer(1, 1, 2047)  # type: ignore[attr-defined]
    graph = read_onnx_graph(save(proto, tmp_path / "llama.onnx"))
    _every_node_once(proto, graph)
    appends = [op for op in graph.operations if op.kind == "kv_append"]
    assert [op.elements for op in appends] == [32 * 128, 32 * 128]  # one token's K and V
    assert graph.counts()["rmsnorm"] == 2 and graph.counts()["silu"] == 1


def _node(op: str, inputs: list[str], outputs: list[str], name: str, **attrs: object) -> object:
    return helper.make_node(op, inputs, outputs, name=name, **attrs)


def _const(name: str, value: float) -> object:
    return helper.make_node(
        "Constant",
        [],
        [name],
        name=f"const_{name}",
        value=helper.make_tensor(name, TensorProto.FLOAT, [], [value]),
    )


def test_patterns_shapes_and_unknown_ops(tmp_path: Path) -> None:
    nodes = [
        # shape arithmetic: Shape -> Gather -> Unsqueeze -> Concat -> Reshape's shape
        _node("Shape", ["x"], ["s"], "shape"),
        helper.make_node(
            "Constant",
            [],
            ["i0"],
            name="i0",
            value=helper.make_tensor("i0", TensorProto.INT64, [], [0]),
        ),
        _node("Gather", ["s", "i0"], ["s0"], "gather_dim"),
        helper.make_node(
            "Constant",
            [],
            ["ax"],
            name="ax",
            value=helper.make_tensor("ax", TensorProto.INT64, [1], [0]),
        ),
        _node("Unsqueeze", ["s0", "ax"], ["s1"], "unsqueeze"),
        helper.make_node(
            "Constant",
            [],
            ["rest"],
            name="rest",
            value=helper.make_tensor("rest", TensorProto.INT64, [1], [16]),
        ),
        _node("Concat", ["s1", "rest"], ["newshape"], "cat_shape", axis=0),
        _node("Reshape", ["x", "newshape"], ["x2"], "layers.0.reshape"),
        _node("LayerNormalization", ["x2", "g", "b"], ["h"], "layers.0.ln", axis=-1),
        # GELU, erf form, as exporters write it
        _const("sqrt2", 1.4142135),
        _const("one", 1.0),
        _const("half", 0.5),
        _node("Div", ["h", "sqrt2"], ["d"], "gelu/div"),
        _node("Erf", ["d"], ["e"], "gelu/erf"),
        _node("Add", ["e", "one"], ["a"], "gelu/add"),
        _node("Mul", ["h", "a"], ["m"], "gelu/mul"),
        _node("Mul", ["m", "half"], ["gl"], "gelu/mul_half"),
        # SiLU
        _node("Sigmoid", ["gl"], ["sg"], "silu/sigmoid"),
        _node("Mul", ["gl", "sg"], ["sl"], "silu/mul"),
        # RMS norm, decomposed
        _const("eps", 1e-5),
        _node("Mul", ["sl", "sl"], ["sq"], "rms/sq"),
        helper.make_node("ReduceMean", ["sq"], ["ms"], name="rms/mean", axes=[-1], keepdims=1),
        _node("Add", ["ms", "eps"], ["mse"], "rms/eps"),
        _node("Sqrt", ["mse"], ["rt"], "rms/sqrt"),
        _node("Reciprocal", ["rt"], ["inv"], "rms/inv"),
        _node("Mul", ["sl", "inv"], ["nx"], "rms/mul"),
        _node("Mul", ["nx", "g"], ["y0"], "rms/gamma"),
        _node("Softmax", ["y0"], ["y1"], "softmax", axis=-1),
        helper.make_node("Mystery", ["y1"], ["y"], name="mystery", domain="com.example"),
    ]
    proto = model(nodes, {"x": [4, 2, 8]}, ["y"], {"g": (16,), "b": (16,)})
    proto.opset_import.append(helper.make_opsetid("com.example", 1))
    graph = read_onnx_graph(save(proto, tmp_path / "m.onnx"))
    _every_node_once(proto, graph)
    by_kind = {op.kind: op for op in graph.operations}
    assert set(by_kind["shape"].layers) == {
        "shape",
        "i0",
        "gather_dim",
        "ax",
        "unsqueeze",
        "rest",
        "cat_shape",
        "const_sqrt2",
        "const_one",
        "const_half",
        "const_eps",
    }
    assert by_kind["gelu"].layers[0] == "gelu/div" and by_kind["gelu"].option("form") == "erf"
    assert by_kind["silu"].layers == ("silu/sigmoid", "silu/mul")
    assert len(by_kind["rmsnorm"].layers) == 7 and by_kind["rmsnorm"].dims == (1, 4, 16)
    assert by_kind["other"].source == "com.example.Mystery"
    assert by_kind["layernorm"].block == "layers.0"
    assert by_kind["softmax"].block == "layers.0"  # its input's block


def test_a_decomposed_layer_norm_is_one_operation(tmp_path: Path) -> None:
    nodes = [
        _const("eps", 1e-5),
        _const("two", 2.0),
        helper.make_node("ReduceMean", ["x"], ["mu"], name="ln/mean", axes=[-1], keepdims=1),
        _node("Sub", ["x", "mu"], ["d"], "ln/sub"),
        _node("Pow", ["d", "two"], ["d2"], "ln/pow"),
        helper.make_node("ReduceMean", ["d2"], ["var"], name="ln/var", axes=[-1], keepdims=1),
        _node("Add", ["var", "eps"], ["ve"], "ln/eps"),
        _node("Sqrt", ["ve"], ["sd"], "ln/sqrt"),
        _node("Div", ["d", "sd"], ["n"], "ln/div"),
        _node("Mul", ["n", "g"], ["ng"], "ln/gamma"),
        _node("Add", ["ng", "b"], ["y0"], "ln/beta"),
        _node("Add", ["y0", "x"], ["y"], "residual"),
    ]
    proto = model(nodes, {"x": [4, 16]}, ["y"], {"g": (16,), "b": (16,)})
    graph = read_onnx_graph(save(proto, tmp_path / "ln.onnx"))
    _every_node_once(proto, graph)
    (norm,) = [op for op in graph.operations if op.kind == "layernorm"]
    assert len(norm.layers) == 9 and norm.layers[-1] == "ln/beta" and norm.dims == (1, 4, 16)
    assert graph.counts()["add"] == 1  # the residual add stays outside


def test_block_names() -> None:
    assert block_of("transformer.h.3.attn.c_attn") == "transformer.h.3"
    assert block_of("/model/layers.12/self_attn/MatMul") == "model.layers.12"
    assert block_of("/Softmax_7") == ""


def test_load_graph_reads_onnx(tmp_path: Path) -> None:
    from helpers.onnx_models import small_cnn

    path = save(small_cnn(), tmp_path / "cnn.onnx")
    graph = load_graph(str(path), {"x": (2, 3, 32, 32)})
    assert [op.kind for op in graph.operations] == [
        "conv",
        "relu",
        "conv",
        "pool",
        "reshape",
        "gemm",
    ]


@pytest.mark.parametrize("half_first", [True, False])
def test_gelu_tanh_form_as_exporters_write_it(tmp_path: Path, half_first: bool) -> None:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): the 0.5 x on a side branch (PyTorch's
    export of Hugging Face's GELU) or a last Mul by 0.5."""
    consts = [_const(n, v) for n, v in (("three", 3.0), ("c", 0.044715), ("k", 0.7978845))]
    consts += [_const("one", 1.0), _const("half", 0.5)]
    chain = [
        _node("Pow", ["x", "three"], ["p"], "g/pow"),
        _node("Mul", ["p", "c"], ["pc"], "g/mul_c"),
        _node("Add", ["x", "pc"], ["u"], "g/add_x"),
        _node("Mul", ["u", "k"], ["uk"], "g/mul_k"),
        _node("Tanh", ["uk"], ["t"], "g/tanh"),
        _node("Add", ["t", "one"], ["t1"], "g/add_one"),
    ]
    if half_first:
        ending = [
            _node("Mul", ["x", "half"], ["hx"], "g/half"),
            *chain,
            _node("Mul", ["hx", "t1"], ["y"], "g/out"),
        ]
    else:
        ending = [*chain, _node("Mul", ["x", "t1"], ["xt"], "g/mul_x")]
        ending.append(_node("Mul", ["xt", "half"], ["y"], "g/out"))
    proto = model([*consts, *ending], {"x": [2, 8, 16]}, ["y"])
    graph = read_onnx_graph(save(proto, tmp_path / "gelu.onnx"))
    _every_node_once(proto, graph)
    gelu = next(op for op in graph.operations if op.kind == "gelu")
    assert gelu.option("form") == "tanh" and gelu.outputs == ("y",)
    assert len(gelu.layers) == 8 and gelu.dims == (2, 8, 16)
    assert [op.kind for op in graph.operations] == ["shape", "gelu"] or [
        op.kind for op in graph.operations
    ] == ["gelu", "shape"]
