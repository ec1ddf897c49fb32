"""Edge cases of the importers: attributes the ONNX operators do not allow, Einsum forms that are
not matrix products, sizes past int64, the validation every format shares (names, weights),
sparse and input-declared initializers, zero-size tensors, and SCALE-Sim and TOML cells that are
not plain values. Bad input is one WorkloadError line (exit status 2 at the CLI)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.cli import run_error
from helpers.onnx_models import model, save
from onnx import helper, numpy_helper

from simcore.shape import Shape
from workloads import Workload, WorkloadError, load_workload
from workloads.layers import short_name
from workloads.validation import MAX_NAME

CONV_HEADER = (
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
    "Num Filter, Strides,\n"
)


def _onnx(tmp_path: Path, proto: onnx.ModelProto, **shapes: tuple[int, ...]) -> Workload:
    return load_workload(save(proto, tmp_path / "m.onnx"), shapes or None)


def _conv(**attrs: object) -> onnx.ModelProto:
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)
    return model([node], {"x": (1, 3, 8, 8)}, ["y"], {"w": (4, 3, 3, 3)})


def _einsum(equation: str | None, a: tuple[int, ...], b: tuple[int, ...]) -> onnx.ModelProto:
    attrs = {} if equation is None else {"equation": equation}
    node = helper.make_node("Einsum", ["a", "b"], ["y"], name="e", **attrs)
    return model([node], {"a": a, "b": b}, ["y"])


def _write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "attrs, message",
    [
        (dict(strides=[2]), "attribute strides has 1 value, expected 2"),
        (dict(dilations=[2, 2, 2]), "attribute dilations has 3 values, expected 2"),
        (dict(pads=[1, 1]), "attribute pads has 2 values, expected 4"),
        (dict(strides=[0, 1]), r"attribute strides \[0, 1\] must be positive"),
        (
            dict(auto_pad="same_upper"),
            "attribute auto_pad 'same_upper' is not one of NOTSET, SAME_UPPER",
        ),
        (dict(auto_pad="FOO"), "attribute auto_pad 'FOO' is not one of"),
        (
            dict(kernel_shape=[5, 5]),
            r"attribute kernel_shape \[5, 5\] disagrees with the weight's .*\[3, 3\]",
        ),
    ],
)
def test_conv_attributes_the_operator_does_not_allow(
    tmp_path: Path, attrs: dict[str, object], message: str
) -> None:
    with pytest.raises(WorkloadError, match=f"Conv node 'conv': {message}") as err:
        _onnx(tmp_path, _conv(**attrs))
    assert "\n" not in str(err.value)


def test_conv_attributes_that_agree_still_import(tmp_path: Path) -> None:
    workload = _onnx(tmp_path, _conv(kernel_shape=[3, 3], strides=[1, 1], auto_pad="VALID"))
    assert workload.gemms[0].shape == Shape(36, 27, 4)


@pytest.mark.parametrize(
    "equation, message",
    [
        (None, "node 'e' breaks ONNX's rules: Required attribute 'equation' is missing"),
        ("ij,jk->ik->x", r"Einsum equation 'ij,jk->ik->x' is malformed"),
        ("i1,jk->ik", "is malformed"),
        ("......i,i->", "is malformed"),
    ],
)
def test_einsum_without_a_valid_equation(
    tmp_path: Path, equation: str | None, message: str
) -> None:
    with pytest.raises(WorkloadError, match=message):
        _onnx(tmp_path, _einsum(equation, (8, 16), (16, 32)))


def test_einsum_equation_that_is_not_a_string(tmp_path: Path) -> None:
    proto = _einsum(None, (8, 16), (16, 32))
    proto.graph.node[0].attribute.append(helper.make_attribute("equation", 5))
    with pytest.raises(
        WorkloadError,
        match="node 'e' breaks ONNX's rules: Mismatched attribute type in 'e : equation'",
    ):
        _onnx(tmp_path, proto)


@pytest.mark.parametrize("equation, b", [("ij,ij->ij", (8, 16)), ("ij,j->ij", (16,))])
def test_an_elementwise_einsum_is_not_lowered(
    tmp_path: Path, equation: str, b: tuple[int, ...]
) -> None:
    nodes = [
        helper.make_node("Einsum", ["a", "b"], ["t"], name="e", equation=equation),
        helper.make_node("MatMul", ["a", "w"], ["y"], name="mm"),
    ]
    proto = model(nodes, {"a": (8, 16), "b": b}, ["t", "y"], {"w": (16, 4)})
    workload = _onnx(tmp_path, proto)
    assert [g.name for g in workload.gemms] == ["mm"]
    assert len(workload.warnings) == 1 and "contracts no index" in workload.warnings[0]


def test_given_input_dimension_past_int64(tmp_path: Path) -> None:
    node = helper.make_node("MatMul", ["a", "w"], ["y"], name="mm")
    proto = model([node], {"a": ("n", 16)}, ["y"], {"w": (16, 4)})
    with pytest.raises(WorkloadError, match=r"input 'a': a given dimension must be from 1 to"):
        _onnx(tmp_path, proto, a=(10**20, 16))
    assert _onnx(tmp_path, proto, a=(3, 16)).gemms[0].shape == Shape(3, 16, 4)


def test_onnx_weight_past_the_cap_is_refused(tmp_path: Path) -> None:
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="bmm")
    proto = model([node], {"a": (100_000, 100_000, 2, 3), "b": (100_000, 1, 3, 4)}, ["y"])
    with pytest.raises(WorkloadError, match=r"layer bmm: weight 10000000000 is too large"):
        _onnx(tmp_path, proto)


def test_long_imported_names_are_shortened_deterministically(tmp_path: Path) -> None:
    long = "/encoder/layer.0/" + "attention/self/" * 20
    nodes = [
        helper.make_node("MatMul", ["a", "w1"], ["h"], name=long + "q"),
        helper.make_node("MatMul", ["h", "w2"], ["y"], name=long + "k"),
    ]
    proto = model(nodes, {"a": (8, 16)}, ["y"], {"w1": (16, 32), "w2": (32, 16)})
    first, second = _onnx(tmp_path, proto).gemms
    assert len(first.name) == len(second.name) == MAX_NAME and first.name != second.name
    assert first.name[:-9] == second.name[:-9] and first.layers == (long + "q",)
    assert [g.name for g in _onnx(tmp_path, proto).gemms] == [first.name, second.name]
    assert short_name("a" * MAX_NAME) == "a" * MAX_NAME


def test_the_same_long_name_twice_stays_unique(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("MatMul", ["a", "w1"], ["h"], name="L" * 300),
        helper.make_node("MatMul", ["h", "w2"], ["y"], name="L" * 300),
    ]
    proto = model(nodes, {"a": (8, 16)}, ["y"], {"w1": (16, 32), "w2": (32, 16)})
    names = [g.name for g in _onnx(tmp_path, proto).gemms]
    assert len(set(names)) == 2 and all(len(n) <= MAX_NAME for n in names)


def test_long_toml_names_keep_the_strict_rule(tmp_path: Path) -> None:
    text = f'[[gemm]]\nname = "{"n" * 200}"\nshape = "8x8x8"\nweight = 1\n'
    with pytest.raises(WorkloadError, match=f"longer than {MAX_NAME} characters"):
        load_workload(_write(tmp_path, text, "w.toml"))


def test_sparse_initializer_takes_its_dims(tmp_path: Path) -> None:
    values = numpy_helper.from_array(np.ones(3, np.float32), "b")
    indices = numpy_helper.from_array(np.array([0, 5, 9], np.int64), "idx")
    sparse = helper.make_sparse_tensor(values, indices, [32, 64])
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["h"], name="mm"),
        helper.make_node("MatMul", ["h", "w"], ["y"], name="next"),
    ]
    proto = model(nodes, {"a": (16, 32)}, ["y"], {"w": (64, 8)})
    proto.graph.sparse_initializer.append(sparse)
    shapes = [g.shape for g in _onnx(tmp_path, proto).gemms]
    assert shapes == [Shape(16, 32, 64), Shape(16, 64, 8)]


def test_initializer_dims_win_over_a_symbolic_input_declaration(tmp_path: Path) -> None:
    node = helper.make_node("MatMul", ["w", "a"], ["y"], name="mm")
    proto = model([node], {"a": (32, 8), "w": ("M", "K")}, ["y"], {"w": (16, 32)})
    assert _onnx(tmp_path, proto).gemms[0].shape == Shape(16, 32, 8)


@pytest.mark.parametrize(
    "inputs, weights, tensor",
    [
        ({"a": (0, 32)}, {"b": (32, 64)}, r"input 'a' has a zero-size dimension \(shape \(0, 32\)"),
        ({"a": (16, 32)}, {"b": (32, 0)}, r"input 'b' has a zero-size dimension \(shape \(32, 0\)"),
    ],
)
def test_zero_size_tensors_are_refused(
    tmp_path: Path,
    inputs: dict[str, tuple[int, ...]],
    weights: dict[str, tuple[int, ...]],
    tensor: str,
) -> None:
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    with pytest.raises(
        WorkloadError, match=f"{tensor}\\): the product has no multiply-accumulates"
    ):
        _onnx(tmp_path, model([node], inputs, ["y"], weights))


@pytest.mark.parametrize(
    "cell, message",
    [
        ("1_000", "IFMAP Height must be a whole number, got '1_000'"),
        ("\u0661\u0662", "IFMAP Height must be a whole number"),
        ("+12", "IFMAP Height must be a whole number, got '\\+12'"),
        ("-12", "IFMAP Height must be positive, got -12"),
        ("1" + "0" * 400, r"IFMAP Height 100000\.\.\. \(401 digits\) is too large"),
        ("99999999999999999999", "IFMAP Height 99999999999999999999 is too large"),
    ],
)
def test_scalesim_cells_are_plain_ascii_integers(tmp_path: Path, cell: str, message: str) -> None:
    path = _write(tmp_path, CONV_HEADER + f"Conv1, {cell}, 12, 3, 3, 3, 64, 1,\n", "t.csv")
    with pytest.raises(WorkloadError, match=f"line 2: {message}") as err:
        load_workload(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "channels, message",
    [
        ("10000000000", "layer L_DP: weight 10000000000 is too large"),
        ("1" + "0" * 400, r"line 2: Channels 100000\.\.\. \(401 digits\) is too large"),
    ],
)
def test_scalesim_depthwise_channels_past_the_cap(
    tmp_path: Path, channels: str, message: str
) -> None:
    path = _write(tmp_path, CONV_HEADER + f"L_DP, 8, 8, 3, 3, {channels}, 1, 1,\n", "t.csv")
    with pytest.raises(WorkloadError, match=message):
        load_workload(path)


def test_scalesim_output_past_int64_and_long_names(tmp_path: Path) -> None:
    rows = "Conv1, 10000000000, 10000000000, 1, 1, 1, 1, 1,\n"
    with pytest.raises(WorkloadError, match="GEMM 1 \\(Conv1\\): dimension M .* is too large"):
        load_workload(_write(tmp_path, CONV_HEADER + rows, "huge.csv"))
    rows = "n" * 300 + ", 8, 8, 3, 3, 3, 4, 1,\n"
    (gemm,) = load_workload(_write(tmp_path, CONV_HEADER + rows, "long.csv")).gemms
    assert len(gemm.name) == MAX_NAME and gemm.layers == ("n" * 300,)


@pytest.mark.parametrize("value", ["true", "12", '["a"]'])
def test_toml_names_must_be_strings(tmp_path: Path, value: str) -> None:
    text = f'[[gemm]]\nname = {value}\nshape = "8x8x8"\nweight = 1\n'
    with pytest.raises(WorkloadError, match="GEMM 1: name must be a string"):
        load_workload(_write(tmp_path, text, "w.toml"))


@pytest.mark.parametrize("shape", ["1" + "0" * 400 + "x2x3", "99999999999999999999x2x3"])
def test_csv_dimensions_past_int64(tmp_path: Path, shape: str) -> None:
    path = _write(tmp_path, f"name,shape,weight\nq,{shape},1\n", "w.csv")
    with pytest.raises(
        WorkloadError, match=r"GEMM 1 \(q\): (shape )?dimension M .* (is too large|digits, at most)"
    ):
        load_workload(path)


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conv = save(_conv(strides=[2]), tmp_path / "conv.onnx")
    assert "attribute strides has 1 value" in run_error(capsys, ["gemms", str(conv)])
    node = helper.make_node("MatMul", ["a", "w"], ["y"], name="mm")
    dynamic = save(model([node], {"a": ("n", 16)}, ["y"], {"w": (16, 4)}), tmp_path / "d.onnx")
    argv = ["gemms", str(dynamic), "--input-shape", "a=99999999999999999999x16"]
    assert "a given dimension must be from 1" in run_error(capsys, argv)
    topology = _write(tmp_path, CONV_HEADER + f"L, {'1' * 400}, 8, 3, 3, 1, 1, 1,\n", "t.csv")
    assert "IFMAP Height" in run_error(capsys, ["gemms", str(topology)])
    einsum = save(_einsum(None, (8, 16), (16, 32)), tmp_path / "e.onnx")
    assert "Required attribute 'equation' is missing" in run_error(capsys, ["gemms", str(einsum)])
