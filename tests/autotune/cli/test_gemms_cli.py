"""`autotune gemms` and `autotune systolic --workload`: listings, totals, --input-shape, warnings,
and bad model files as one-line errors with exit status 2 and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.onnx_models import model, save, small_cnn
from onnx import helper

from autotune.cli import main

TOPOLOGY = (
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
    "Strides,\n"
    "Conv1,224,224,11,11,3,96,4,\nConv2,27,27,5,5,96,256,1,\nConv2b,27,27,5,5,96,256,1,\n"
)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_gemms_of_a_bundled_network(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "gemms", "resnet50")
    assert code == 0
    assert "total: 21 distinct shapes, 54 GEMMs (the sum of the weights), 4,089,184,256 MACs" in out
    code, out, _ = _run(capsys, "gemms", "resnet50", "--json")
    data = json.loads(out)
    assert data["totals"] == {"entries": 21, "gemms": 54, "macs": 4_089_184_256}
    assert data["gemms"][0] == {
        "name": "conv1",
        "layers": ["conv1"],
        "m": 12544,
        "k": 147,
        "n": 64,
        "weight": 1,
        "source": "Conv",
        "macs": 12544 * 147 * 64,
    }


def test_gemms_of_a_topology_with_merged_layers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "alex.csv").write_text(TOPOLOGY)
    code, out, _ = _run(capsys, "gemms", str(tmp_path / "alex.csv"), "--json")
    assert code == 0
    rows = json.loads(out)["gemms"]
    assert [(r["name"], r["layers"], r["weight"]) for r in rows] == [
        ("Conv1", ["Conv1"], 1),
        ("Conv2", ["Conv2", "Conv2b"], 2),
    ]


def test_dynamic_inputs_need_input_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(save(small_cnn(), tmp_path / "cnn.onnx"))
    code, out, err = _run(capsys, "gemms", path)
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert (
        "input 'x' has a dynamic dimension 0 ('batch')" in err
        and "--input-shape x=1x3x32x32" in err
    )
    code, out, _ = _run(capsys, "gemms", path, "--input-shape", "x=4x3x32x32")
    assert code == 0 and out.splitlines()[2].split()[:2] == ["conv1", "1024"]
    for bad in ("x", "x=4xax3", "x=0x3x32x32"):
        assert _run(capsys, "gemms", path, "--input-shape", bad)[0] == 2


def test_heavy_ops_warn_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = [
        helper.make_node("GRU", ["seq", "gw", "gr"], ["g"], name="gru", hidden_size=4),
        helper.make_node("MatMul", ["a", "b"], ["y"], name="mm"),
    ]
    proto = model(
        nodes,
        {"seq": (3, 1, 2), "a": (2, 8), "b": (8, 4)},
        ["g", "y"],
        {"gw": (1, 12, 2), "gr": (1, 12, 4)},
    )
    code, out, err = _run(capsys, "gemms", str(save(proto, tmp_path / "gru.onnx")))
    assert code == 0 and "mm" in out
    assert (
        err == "autotune: warning: not lowered to GEMMs (their work is not in the workload): "
        "1 op: 1 GRU\n"
    )


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    good = small_cnn().SerializeToString()
    files = {
        "corrupt": b"\x08\x07\x12\xff\xff\xff\xff\x0f garbage",
        "truncated": good[: len(good) // 2],
        "not-onnx": b"name,shape,weight\n",
    }
    out = {}
    for name, content in files.items():
        out[name] = tmp_path / f"{name}.onnx"
        out[name].write_bytes(content)
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    out["opset"] = save(
        model([node], {"a": (2, 2), "b": (2, 2)}, ["y"], opset=999), tmp_path / "opset.onnx"
    )
    out["dynamic"] = save(small_cnn(), tmp_path / "dynamic.onnx")
    return out


@pytest.mark.parametrize("case", ["corrupt", "truncated", "not-onnx", "opset", "dynamic"])
def test_bad_model_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    path = str(_bad_files(tmp_path)[case])
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for argv in (
        ["gemms", path],
        ["--workload", path, "--trials", "2"],
        ["systolic", "--workload", path, "--array", "8x8"],
    ):
        code, out, err = _run(capsys, *argv)
        assert code == 2 and out == "", argv
        assert (
            err.startswith("autotune: error: ") and err.count("\n") == 1 and "Traceback" not in err
        )
    assert list(work.iterdir()) == []  # nothing written


def test_systolic_workload_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "alex.csv").write_text(TOPOLOGY)
    path = str(tmp_path / "alex.csv")
    code, out, _ = _run(
        capsys,
        "systolic",
        "--workload",
        path,
        "--array",
        "32x32",
        "--dataflow",
        "os",
        "--assume",
        "scalesim",
        "--json",
    )
    assert code == 0
    conv1, conv2, total = (json.loads(line) for line in out.splitlines())
    assert (conv1["m"], conv1["k"], conv1["n"], conv1["weight"]) == (3025, 363, 96, 1)
    assert conv1["cycles"] == -(-3025 // 32) * -(-96 // 32) * (
        363 + 32 + 32 - 2
    )  # SCALE-Sim's os folds
    assert conv1["scalesim"]["total_cycles"] == conv1["cycles"] - 1
    assert conv2["layers"] == ["Conv2", "Conv2b"] and conv2["weight"] == 2
    assert total["total"] and total["cycles"] == conv1["cycles"] + 2 * conv2["cycles"]
    assert total["a_reads"] == conv1["a_reads"] + 2 * conv2["a_reads"]
    code, out, _ = _run(
        capsys, "systolic", "--workload", path, "--array", "32x32", "--dataflow", "os", "--json"
    )
    default = [json.loads(line) for line in out.splitlines()]
    assert "scalesim" not in default[0] and default[-1]["cycles"] <= total["cycles"]


def test_systolic_wants_a_shape_or_a_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "systolic", "--array", "8x8")[0] == 2
    assert (
        _run(capsys, "systolic", "--array", "8x8", "--shape", "8x8x8", "--workload", "resnet50")[0]
        == 2
    )
    code, out, _ = _run(
        capsys, "systolic", "--array", "16x16", "--workload", "chapter", "--dataflow", "ws"
    )
    assert code == 0 and "total (weighted)" in out
