"""A fuzzer for the readers of files a user names: workload CSV and TOML, ONNX models, systolic
architecture files and SCALE-Sim configs. Generated files (valid ones mutated, and text and bytes
of every kind) are either read or refused with the reader's own error in one line; no other
exception, and no hang. A sample goes through the command line too: exit 0 or 2, one line, and
nothing written on a refusal. 1,000 files per format (a minute of CPU: the module is marked
slow)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simcore.systolic.archs import arch_dict
from simcore.systolic.machine import ArchError
from simcore.systolic.scalesim_config import ScalesimConfigError, read_scalesim_config
from tests.autotune.hostile.conftest import run_cli, snapshot
from workloads import load_workload
from workloads.model import WorkloadError

pytestmark = pytest.mark.slow
FILES = 1000
FUZZ = settings(
    max_examples=FILES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

CSV = "name,shape,weight\nqkv,64x256x768,1\nproj,64x768x256,2\n"
TOML = '[[gemm]]\nname = "qkv"\nshape = "64x256x768"\nweight = 1\nlayers = ["a"]\n'
ARCH = '[array]\nrows = 16\ncols = 16\n[dram]\nbandwidth = "819 GB/s"\n'
CFG = "[general]\nrun_name = x\n[architecture_presets]\nArrayHeight = 8\nArrayWidth = 8\n"
PIECES = [",", "\n", "x", "=", "[", "]", "[[", '"', "#", "\x00", "\r", "\ufeff", "9" * 50, "-1"]


def _onnx_bytes() -> bytes:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 8])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [8, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")], "g", [a, b], [y]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    buffer = io.BytesIO()
    onnx.save(model, buffer)
    return buffer.getvalue()


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """`seed` with bytes flipped, cut, repeated or spliced with text that parsers find hard."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(0, 6))):
        action = draw(st.sampled_from(["flip", "cut", "insert", "repeat"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if action == "flip" and data:
            data[at] = draw(st.integers(0, 255))
        elif action == "cut":
            del data[at : at + draw(st.integers(1, 64))]
        elif action == "insert":
            piece = draw(st.sampled_from(PIECES)) * draw(st.integers(1, 200))
            data[at:at] = piece.encode("utf-8", "surrogatepass")
        else:
            data[at:at] = data[at : at + draw(st.integers(1, 32))] * draw(st.integers(1, 50))
    return bytes(data)


def files(seed: bytes) -> st.SearchStrategy[bytes]:
    return st.one_of(mutated(seed), st.binary(max_size=2048), st.text(max_size=512).map(str.encode))


def _one_line(exc: Exception) -> None:
    text = str(exc)
    assert text and "\n" not in text and len(text) < 1000, text


def _reads_or_refuses(read: Callable[[Path], object], path: Path, refused: type[Exception]) -> None:
    try:
        read(path)
    except refused as exc:
        _one_line(exc)


@FUZZ
@given(data=files(CSV.encode()))
def test_csv_workloads(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "w.csv"
    path.write_bytes(data)
    _reads_or_refuses(load_workload, path, WorkloadError)


@FUZZ
@given(data=files(TOML.encode()))
def test_toml_workloads(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "w.toml"
    path.write_bytes(data)
    _reads_or_refuses(load_workload, path, WorkloadError)


def test_an_onnx_operator_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(_onnx_bytes().replace(b"MatMul", b"\x80atMul"))
    with pytest.raises(WorkloadError, match="not UTF-8"):
        load_workload(path)


@FUZZ
@given(data=st.data())
def test_onnx_models(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(data.draw(files(_onnx_bytes())))
    _reads_or_refuses(load_workload, path, WorkloadError)


@FUZZ
@given(data=files(ARCH.encode()))
def test_arch_files(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "arch.toml"
    path.write_bytes(data)
    _reads_or_refuses(arch_dict, path, ArchError)


@FUZZ
@given(data=files(CFG.encode()))
@example(data=b"[general]\nrun_name = x\n[" + b",[" * 400 + b"presets]\n= 8\n= 8\n")  # a long name
def test_scalesim_configs(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "scale.cfg"
    path.write_bytes(data)
    _reads_or_refuses(read_scalesim_config, path, ScalesimConfigError)


@settings(max_examples=max(10, FILES // 20), deadline=None, suppress_health_check=list(HealthCheck))
@given(suffix=st.sampled_from(["csv", "toml"]), data=st.data())
def test_through_the_command_line(world: Path, suffix: str, data: st.DataObject) -> None:
    seed = (CSV if suffix == "csv" else TOML).encode()
    path = world / f"fuzzed.{suffix}"
    path.write_bytes(data.draw(mutated(seed)))
    before = snapshot(world)
    result = run_cli(["gemms", path.name])
    assert "Traceback" not in result.text
    assert result.code in (0, 2), result.text
    if result.code == 2:
        lines = result.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("autotune: error: ")
        assert snapshot(world) == before
