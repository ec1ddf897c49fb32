"""The ONNX importer: each op's GEMM, shapes from shape inference (weights never read), dynamic
inputs, ops it summarises or warns about, merging, and bad files as one-line errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.onnx_models import model, save, small_cnn
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper

from simcore.shape import Shape
from tests.helpers.examples import examples
from workloads import DynamicShapeError, WorkloadError, load_workload, onnx_ops


def _load(tmp_path: Path, proto: onnx.ModelProto, **shapes: tuple[int, ...]):
    return load_workload(save(proto, tmp_path / "m.onnx"), shapes or None)


def _one(
    tmp_path: Path, node: onnx.NodeProto, inputs: dict, weights: dict | None = None, opset: int = 17
):
    workload = _load(tmp_path, model([node], inputs, [node.output[0]], weights, opset))
    assert len(workload.gemms) == 1
    g = workload.gemms[0]
    return (g.shape.m, g.shape.k, g.shape.n, g.weight)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((64, 32), (32, 16), (64, 32, 16, 1)),
        ((2, 128, 768), (768, 3072), (256, 768, 3072, 1)),  # a weight matrix: leading dims are rows
        (
            (1, 12, 128, 64),
            (1, 12, 64, 128),
            (128, 64, 128, 12),
        ),  # batched: the batch is the weight
        ((4, 1, 8, 16), (1, 3, 16, 5), (8, 16, 5, 12)),  # broadcast batch dimensions
        ((32,), (32, 10), (1, 32, 10, 1)),  # a vector is a row
        ((7, 32), (32,), (7, 32, 1, 1)),  # ... or a column
    ],
)
def test_matmul(tmp_path: Path, a: tuple, b: tuple, expected: tuple) -> None:
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    assert _one(tmp_path, node, {"a": a}, {"b": b}) == expected


@pytest.mark.parametrize(
    "trans_a, trans_b, a, b",
    [
        (0, 0, (6, 4), (4, 9)),
        (1, 0, (4, 6), (4, 9)),
        (0, 1, (6, 4), (9, 4)),
        (1, 1, (4, 6), (9, 4)),
    ],
)
def test_gemm_transposes(tmp_path: Path, trans_a: int, trans_b: int, a: tuple, b: tuple) -> None:
    node = helper.make_node("Gemm", ["a", "b"], ["y"], name="g", transA=trans_a, transB=trans_b)
    assert _one(tmp_path, node, {"a": a}, {"b": b}) == (6, 4, 9, 1)


@pytest.mark.parametrize(
    "x, w, attrs, expected",
    [
        (
            (1, 3, 224, 224),
            (64, 3, 7, 7),
            dict(strides=[2, 2], pads=[3, 3, 3, 3]),
            (112 * 112, 147, 64, 1),
        ),
        ((2, 16, 10, 10), (32, 16, 3, 3), {}, (2 * 8 * 8, 144, 32, 1)),
        ((1, 16, 10, 10), (32, 16, 3, 3), dict(dilations=[2, 2]), (6 * 6, 144, 32, 1)),
        (
            (1, 16, 11, 11),
            (32, 16, 3, 3),
            dict(auto_pad="SAME_UPPER", strides=[2, 2]),
            (6 * 6, 144, 32, 1),
        ),
        (
            (1, 16, 11, 11),
            (32, 16, 3, 3),
            dict(auto_pad="SAME_LOWER", strides=[2, 2]),
            (6 * 6, 144, 32, 1),
        ),
        (
            (1, 16, 11, 11),
            (32, 16, 3, 3),
            dict(auto_pad="VALID", strides=[2, 2]),
            (5 * 5, 144, 32, 1),
        ),
        (
            (1, 32, 56, 56),
            (32, 1, 3, 3),
            dict(group=32, pads=[1, 1, 1, 1]),
            (56 * 56, 9, 1, 32),
        ),  # depthwise
        (
            (1, 32, 8, 8),
            (64, 1, 3, 3),
            dict(group=32, pads=[1, 1, 1, 1]),
            (64, 9, 2, 32),
        ),  # channel multiplier 2
        ((1, 64, 8, 8), (128, 16, 1, 1), dict(group=4), (64, 16, 32, 4)),  # grouped
        ((1, 8, 100), (16, 8, 5), dict(strides=[3], pads=[2, 1]), (33, 40, 16, 1)),  # Conv1d
        ((1, 4, 6, 6, 6), (8, 4, 3, 3, 3), {}, (64, 108, 8, 1)),  # Conv3d
        (
            (1, 16, 10, 10),
            (32, 16, 3, 3),
            dict(pads=[0, 1, 2, 3]),
            (10 * 12, 144, 32, 1),
        ),  # asymmetric pads
    ],
)
def test_conv_im2col(tmp_path: Path, x: tuple, w: tuple, attrs: dict, expected: tuple) -> None:
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)
    assert _one(tmp_path, node, {"x": x}, {"w": w}) == expected


@settings(max_examples=examples(60), deadline=None)
@given(
    size=st.integers(1, 40),
    kernel=st.integers(1, 7),
    stride=st.integers(1, 4),
    dilation=st.integers(1, 3),
    pads=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    auto_pad=st.sampled_from(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]),
)
def test_conv_output_size_agrees_with_onnx_shape_inference(
    size: int, kernel: int, stride: int, dilation: int, pads: tuple[int, int], auto_pad: str
) -> None:
    reach = dilation * (kernel - 1) + 1
    if size + (sum(pads) if auto_pad == "NOTSET" else 0) < reach and auto_pad not in (
        "SAME_UPPER",
        "SAME_LOWER",
    ):
        return
    attrs = dict(strides=[stride], dilations=[dilation], auto_pad=auto_pad)
    if auto_pad == "NOTSET":
        attrs["pads"] = list(pads)
    node = helper.make_node("Conv", ["x", "w"], ["y"], **attrs)
    inferred = onnx.shape_inference.infer_shapes(
        model([node], {"x": (1, 2, size)}, ["y"], {"w": (3, 2, kernel)})
    )
    dims = [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]
    ours = onnx_ops.conv_output(
        size, kernel, stride, dilation, pads if auto_pad == "NOTSET" else (0, 0), auto_pad
    )
    assert dims[2] == ours


@pytest.mark.parametrize(
    "equation, a, b, expected",
    [
        (
            "bhid,bhjd->bhij",
            (2, 12, 128, 64),
            (2, 12, 128, 64),
            (128, 64, 128, 24),
        ),  # attention scores
        (
            "bhij,bhjd->bhid",
            (1, 12, 128, 128),
            (1, 12, 128, 64),
            (128, 128, 64, 12),
        ),  # attention x V
        ("bsd,df->bsf", (2, 16, 64), (64, 256), (32, 64, 256, 1)),  # a projection
        ("...d,df->...f", (2, 16, 64), (64, 256), (32, 64, 256, 1)),  # with an ellipsis
        ("...ij,...jk->...ik", (3, 5, 8, 4), (3, 5, 4, 6), (8, 4, 6, 15)),
        ("ik,kj", (8, 4), (4, 6), (8, 4, 6, 1)),  # implicit output
        ("i,j->ij", (5,), (7,), (5, 1, 7, 1)),  # outer product, K = 1
    ],
)
def test_einsum_matrix_products(
    tmp_path: Path, equation: str, a: tuple, b: tuple, expected: tuple
) -> None:
    node = helper.make_node("Einsum", ["a", "b"], ["y"], name="e", equation=equation)
    assert _one(tmp_path, node, {"a": a, "b": b}) == expected


def test_einsum_that_is_no_product_is_warned_about(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Einsum", ["a"], ["t"], name="trace", equation="ii->i"),
        helper.make_node("MatMul", ["a", "a"], ["y"], name="mm"),
    ]
    workload = _load(tmp_path, model(nodes, {"a": (8, 8)}, ["t", "y"]))
    assert [g.name for g in workload.gemms] == ["mm"]
    assert len(workload.warnings) == 1 and "Einsum" in workload.warnings[0]


def test_weights_in_missing_external_data_still_import(tmp_path: Path) -> None:
    path = save(small_cnn(), tmp_path / "cnn.onnx")
    assert not (tmp_path / "missing_weights.bin").exists()
    workload = load_workload(path, {"x": (2, 3, 32, 32)})
    assert [(g.name, g.shape, g.weight, g.source) for g in workload.gemms] == [
        ("conv1", Shape(2 * 16 * 16, 147, 8), 1.0, "Conv"),
        ("dw", Shape(2 * 16 * 16, 9, 1), 8.0, "Conv"),
        ("fc", Shape(2, 8, 10), 1.0, "Gemm"),
    ]
    assert workload.summary == (
        "3 matrix products; other ops (not matrix products): "
        "3 ops: 1 Flatten, 1 GlobalAveragePool, 1 Relu",
    )
    assert workload.warnings == ()


def test_a_dynamic_input_names_the_input_and_dimension(tmp_path: Path) -> None:
    path = save(small_cnn(), tmp_path / "cnn.onnx")
    with pytest.raises(
        DynamicShapeError, match=r"input 'x' has a dynamic dimension 0 \('batch'\)"
    ) as err:
        load_workload(path)
    assert err.value.input_name == "x" and err.value.dims == (None, 3, 32, 32)
    with pytest.raises(WorkloadError, match="no input named 'y'"):
        load_workload(path, {"y": (1, 3, 32, 32)})
    with pytest.raises(WorkloadError, match="has 4 dimensions, 3 given"):
        load_workload(path, {"x": (1, 3, 32)})
    with pytest.raises(WorkloadError, match="ONNX models only"):
        load_workload(
            Path(__file__).parents[2] / "workloads" / "networks" / "chapter.toml", {"x": (1,)}
        )


def test_shapes_flow_through_reshape_arithmetic(tmp_path: Path) -> None:
    """data propagation: Shape -> Gather -> Concat -> Reshape resolves to fixed dims."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
        helper.make_node("Concat", ["b", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w"], ["y"], name="mm"),
    ]
    proto = model(nodes, {"x": ("n", 4, 8)}, ["y"], {"w": (32, 5)})
    proto.graph.initializer.extend(
        [
            helper.make_tensor("i0", onnx.TensorProto.INT64, [1], [0]),
            helper.make_tensor("minus1", onnx.TensorProto.INT64, [1], [-1]),
        ]
    )
    workload = _load(tmp_path, proto, x=(6, 4, 8))
    assert workload.gemms[0].shape == Shape(6, 32, 5)


def test_heavy_ops_are_named_with_counts_never_dropped(tmp_path: Path) -> None:
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h", "w_in"], ["h2"])],
        "body",
        [helper.make_tensor_value_info("h", onnx.TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor_value_info("h2", onnx.TensorProto.FLOAT, [4, 4])],
    )
    nodes = [
        helper.make_node("LSTM", ["seq", "lw", "lr"], ["l1"], name="lstm1", hidden_size=8),
        helper.make_node("LSTM", ["seq", "lw", "lr"], ["l2"], name="lstm2", hidden_size=8),
        helper.make_node("ConvTranspose", ["img", "tw"], ["up"], name="up"),
        helper.make_node("If", ["cond"], ["branch"], then_branch=body, else_branch=body),
        helper.make_node("MatMul", ["a", "b"], ["y"], name="mm"),
        helper.make_node("FusedMatMul", ["a", "b"], ["z"], domain="com.microsoft"),
    ]
    inputs = {"seq": (5, 1, 4), "img": (1, 2, 4, 4), "a": (3, 4), "b": (4, 2)}
    proto = model(
        nodes,
        inputs,
        ["l1", "l2", "up", "y", "z"],
        {"lw": (1, 32, 4), "lr": (1, 32, 8), "tw": (2, 2, 3, 3), "w_in": (4, 4)},
    )
    proto.graph.input.append(helper.make_tensor_value_info("cond", onnx.TensorProto.BOOL, []))
    proto.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    workload = _load(tmp_path, proto)
    assert [g.name for g in workload.gemms] == ["mm"]
    assert workload.warnings == (
        "not lowered to GEMMs (their work is not in the workload): "
        "4 ops: 2 LSTM, 1 ConvTranspose, 1 If (with 2 matrix products in its body)",
        "ops of other domains, not read: 1 op: 1 com.microsoft.FusedMatMul",
    )


def test_same_shape_products_merge_keeping_the_layer_names(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"], name="/layer.0/attn/q_proj/MatMul"),
        helper.make_node("MatMul", ["x", "wk"], ["k"], name="/layer.0/attn/k_proj/MatMul"),
        helper.make_node("MatMul", ["x", "wu"], ["u"], name="/layer.0/mlp/up/MatMul"),
        helper.make_node("Gemm", ["x2", "wv"], ["v"], name="", transB=1),
    ]
    proto = model(
        nodes,
        {"x": (16, 64), "x2": (16, 64)},
        ["q", "k", "u", "v"],
        {"wq": (64, 64), "wk": (64, 64), "wu": (64, 256), "wv": (64, 64)},
    )
    workload = _load(tmp_path, proto)
    first, second = workload.gemms
    assert (
        first.name == "layer.0_attn_q_proj_MatMul"
        and first.weight == 3
        and first.source == "MatMul+Gemm"
    )
    assert first.layers == ("/layer.0/attn/q_proj/MatMul", "/layer.0/attn/k_proj/MatMul", "Gemm_3")
    assert second.shape == Shape(16, 64, 256) and second.layers == ("/layer.0/mlp/up/MatMul",)


def _valid_bytes() -> bytes:
    return small_cnn().SerializeToString()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "not an ONNX model"),
        (b"this is a text file, not a model\n", "not a readable ONNX file|not an ONNX model"),
        (np.random.default_rng(0).bytes(4000), "not a readable ONNX file|not an ONNX model"),
        (_valid_bytes()[: len(_valid_bytes()) // 2], "not a readable ONNX file"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    with pytest.raises(WorkloadError, match=message) as err:
        load_workload(path)
    assert "\n" not in str(err.value)


def test_unsupported_opset_and_ir_version(tmp_path: Path) -> None:
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    with pytest.raises(WorkloadError, match="opset 999 is not supported"):
        _load(tmp_path, model([node], {"a": (2, 2), "b": (2, 2)}, ["y"], opset=999))
    proto = model([node], {"a": (2, 2), "b": (2, 2)}, ["y"])
    proto.ir_version = onnx.IR_VERSION + 5
    with pytest.raises(WorkloadError, match="IR version .* is newer"):
        _load(tmp_path, proto)
    del proto.opset_import[:]
    proto.ir_version = onnx.IR_VERSION
    with pytest.raises(WorkloadError, match="declares no ONNX opset"):
        _load(tmp_path, proto)


def test_a_model_without_products_is_an_error(tmp_path: Path) -> None:
    node = helper.make_node("Relu", ["a"], ["y"])
    with pytest.raises(WorkloadError, match=r"no matrix products to tune \(1 op: 1 Relu\)"):
        _load(tmp_path, model([node], {"a": (2, 2)}, ["y"]))


def test_operands_that_do_not_agree_are_an_error(tmp_path: Path) -> None:
    node = helper.make_node("Gemm", ["a", "b"], ["y"], name="g")
    with pytest.raises(WorkloadError, match="Gemm node 'g': .* do not agree on K"):
        _load(tmp_path, model([node], {"a": (2, 3)}, ["y"], {"b": (4, 5)}))


def test_quantized_products(tmp_path: Path) -> None:
    """QLinearMatMul and QLinearConv take their second operand fourth (after scale, zero point)."""
    scales = {f"s{i}": () for i in range(6)}
    nodes = [
        helper.make_node(
            "QLinearMatMul", ["a", "s0", "s1", "b", "s2", "s3", "s4", "s5"], ["y"], name="qmm"
        ),
        helper.make_node(
            "QLinearConv",
            ["x", "s0", "s1", "w", "s2", "s3", "s4", "s5"],
            ["z"],
            name="qconv",
            pads=[1, 1, 1, 1],
        ),
        helper.make_node("MatMulInteger", ["a", "b2"], ["u"], name="mmi"),
    ]
    proto = model(
        nodes,
        {"a": (4, 16), "x": (1, 8, 6, 6)},
        ["y", "z", "u"],
        {"b": (16, 32), "w": (12, 8, 3, 3), "b2": (16, 5), **scales},
    )
    shapes = {g.name: (g.shape.m, g.shape.k, g.shape.n) for g in _load(tmp_path, proto).gemms}
    assert shapes == {"qmm": (4, 16, 32), "qconv": (36, 72, 12), "mmi": (4, 16, 5)}
