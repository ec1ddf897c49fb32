"""Inputs read strictly: special files (a device, a FIFO) refused as not regular files before
they are opened; binary, UTF-16 and NUL-holding text refused naming the file; nesting, digits
and counts bounded; ONNX graphs that break ONNX's rules refused; names from files escaped. One
line, exit 2, nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.autotune.hostile.conftest import Hostile

TUNE = ["--shape", "16x16x16", "--space", "chapter", "--trials", "2", "--study", "fresh"]
DIGITS = "9" * 5000


@pytest.fixture()
def odd_files(world: Path, tmp_path: Path) -> Path:
    # FIFOs outside the world: its snapshot reads every file in it, and a FIFO never ends.
    (tmp_path / "fifos").mkdir()
    for name in ("fifo.toml", "fifo.csv"):
        os.mkfifo(tmp_path / "fifos" / name)
        (world / name).symlink_to(tmp_path / "fifos" / name)
    (world / "utf16.toml").write_bytes("word_bits = 16\n".encode("utf-16"))
    (world / "binary.toml").write_bytes(bytes(range(256)))
    (world / "deep.json").write_text("[" * 100_000)
    (world / "nul.csv").write_bytes(b"name,shape,weight\nab\x00,8x8x8,1\n")
    (world / "wide.csv").write_text("name,shape,weight\n" + "a" * 20_000 + ",8x8x8,1\n")
    (world / "digits.csv").write_text(f"name,shape,weight\nq,{DIGITS}x8x8,1\n")
    (world / "many.csv").write_text(
        "name,shape,weight\n" + "".join(f"g{i},8x8x{8 + i},1\n" for i in range(10_001))
    )
    return world


SPECIAL = [
    ([*TUNE, "--tech", "/dev/zero"], ("/dev/zero", "a device, not a regular file")),
    ([*TUNE, "--tech", "fifo.toml"], ("fifo.toml", "a FIFO, not a regular file")),
    ([*TUNE, "--enqueue", "/dev/zero"], ("--enqueue", "not a regular file")),
    (["--workload", "fifo.csv", "--space", "chapter"], ("fifo.csv", "not a regular file")),
    (["check", "--reference", "/dev/zero", "--trials", "2"], ("/dev/zero", "a device")),
]
TEXT = [
    ([*TUNE, "--tech", "utf16.toml"], ("utf16.toml", "UTF-16 text, not UTF-8")),
    ([*TUNE, "--tech", "binary.toml"], ("binary.toml", "not a text file")),
    (["--workload", "nul.csv", "--space", "chapter"], ("nul.csv", "NUL byte")),
]
BOUNDS = [
    ([*TUNE, "--enqueue", "deep.json"], ("--enqueue", "nested 100000 deep, at most 64")),
    (["--shape", f"{DIGITS}x8x8", "--trials", "2"], ("--shape", "5000 digits")),
    (["--workload", "digits.csv", "--space", "chapter"], ("digits.csv", "5000 digits")),
    (["--workload", "many.csv", "--space", "chapter"], ("many.csv", "10001 GEMMs")),
    (["--shape", "16x16x16", "--trials", str(10**20)], ("--trials", "at most 100000000")),
    (["--shape", "16x16x16", "--trials", DIGITS], ("--trials", "5000 digits")),
    (["--shape", "16x16x16", "--seed", DIGITS], ("--seed", "5000 digits")),
    (["--shape", "16x16x16", "--machine", "=5"], ("--machine", "names no parameter")),
    (
        ["--oracle", "systolic", "--shape", "16x16x16", "--machine", f"pe_budget={DIGITS}"],
        ("pe_budget", "5000 digits"),
    ),
]


@pytest.mark.parametrize(("argv", "named"), SPECIAL, ids=lambda v: str(v)[:40])
def test_special_files_are_refused_unopened(
    hostile: Hostile, odd_files: Path, argv: list[str], named: tuple[str, ...]
) -> None:
    hostile.refuses(argv, *named)


@pytest.mark.parametrize(("argv", "named"), TEXT, ids=lambda v: str(v)[:40])
def test_text_that_is_not_utf8_is_named(
    hostile: Hostile, odd_files: Path, argv: list[str], named: tuple[str, ...]
) -> None:
    hostile.refuses(argv, *named)


@pytest.mark.parametrize(("argv", "named"), BOUNDS, ids=lambda v: str(v)[:40])
def test_numbers_nesting_and_counts_are_bounded(
    hostile: Hostile, odd_files: Path, argv: list[str], named: tuple[str, ...]
) -> None:
    hostile.refuses(argv, *named)


def test_a_long_line_is_never_echoed_whole(hostile: Hostile, odd_files: Path) -> None:
    line = hostile.refuses(["--workload", "wide.csv", "--space", "chapter"], "wide.csv")
    assert len(line) < 400


# --- ONNX graphs that break ONNX's rules --------------------------------------------------


def _onnx_cases(folder: Path) -> dict[str, tuple[str, ...]]:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    def save(name: str, nodes: list, inputs: list, outputs: list) -> None:
        graph = helper.make_graph(nodes, "g", inputs, outputs)
        onnx.save(
            helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), folder / name
        )

    def tensor(name: str, kind: int = TensorProto.FLOAT, dims: list | None = None):  # type: ignore[no-untyped-def]
        return helper.make_tensor_value_info(name, kind, [4, 4] if dims is None else dims)

    x, y = tensor("x"), tensor("y")
    save("self.onnx", [helper.make_node("MatMul", ["x", "y"], ["y"], name="n")], [x], [y])
    twice = [helper.make_node("MatMul", ["x", "x"], ["y"], name=n) for n in ("a", "b")]
    save("twice.onnx", twice, [x], [y])
    strings = [helper.make_node("MatMul", ["s", "s"], ["y"], name="m")]
    save("strings.onnx", strings, [tensor("s", TensorProto.STRING)], [y])
    conv = helper.make_node("Conv", ["i", "w"], ["y"], name="c\n\u202ename", pads=[-1] * 4)
    image, kernel = tensor("i", dims=[1, 1, 8, 8]), tensor("w", dims=[1, 1, 3, 3])
    save("pads.onnx", [conv], [image, kernel], [tensor("y", dims=[1, 1, 8, 8])])
    (folder / "garbage.onnx").write_bytes(b"\x08\x07" + os.urandom(64))
    odd = helper.make_node("MatMul", ["x", "y"], ["z"], name="odd", transA=1)
    save("attribute.onnx", [odd], [x, y], [tensor("z")])
    save("arity.onnx", [helper.make_node("MatMul", ["x"], ["z"], name="one")], [x], [tensor("z")])
    save("unknown.onnx", [helper.make_node("MatMull", ["x", "y"], ["z"])], [x, y], [tensor("z")])
    return {
        "attribute.onnx": ("node 'odd'", "ONNX's rules", "Unrecognized attribute: transA"),
        "arity.onnx": ("node 'one'", "ONNX's rules", "input size 1"),
        "unknown.onnx": ("MatMull_0", "ONNX's rules", "No Op registered for MatMull"),
        "self.onnx": ("its own output",),
        "twice.onnx": ("assign each tensor once",),
        "strings.onnx": ("a tensor of strings",),
        "pads.onnx": ("c\\n\\u202ename", "must not be negative"),
        "garbage.onnx": ("garbage.onnx",),
    }


def test_onnx_graphs_that_break_the_rules(hostile: Hostile, world: Path) -> None:
    for name, named in _onnx_cases(world).items():
        hostile.refuses(["--workload", name, "--space", "chapter"], *named)
