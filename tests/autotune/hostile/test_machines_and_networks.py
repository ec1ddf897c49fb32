"""Machines and networks: architecture files and SCALE-Sim configurations with numbers past any
physical quantity (exponents that would build huge integers, thousands of digits, rates near
zero), SCALE-Sim's memory model on layers or arrays it could not hold in memory or finish, and
`ops` asked for a chart where no folder is, an oracle machine or a batch past what could be
timed, or an ONNX model with products past 64 bits. One line, exit 2, nothing written."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from tests.autotune.hostile.conftest import Hostile
from tests.helpers.scalesim_cfg import scalesim_cfg

SYSTOLIC = ["systolic", "--shape", "64x64x64"]
SCALESIM = ["systolic", "--assume", "scalesim"]
DIGITS = "1" + "0" * 5000


def _arch(folder: Path, name: str, old: str, new: str) -> str:
    text = resources.files("simcore.systolic.archs").joinpath("gemmini.toml").read_text()
    assert old in text
    (folder / name).write_text(text.replace(old, new, 1))
    return name


@pytest.fixture()
def machines(world: Path) -> Path:
    for name, new in (
        ("overflow.toml", 'clock = "1e400 GHz"'),  # past a float, in the range error's figures
        ("exponent.toml", 'clock = "1e99999999 GHz"'),  # a hundred-million-digit integer
        ("digits.toml", f'clock = "{DIGITS} GHz"'),  # past Python's integer-string limit
    ):
        _arch(world, name, 'clock = "1 GHz"', new)
    _arch(world, "latency.toml", 'latency = "100 cycles"', 'latency = "1e-99999999 ns"')
    _arch(world, "trickle.toml", 'bandwidth = "16 B/cycle"', 'bandwidth = "1e-30 B/cycle"')
    for name, rows, cols in (
        ("digits.cfg", DIGITS, "32"),
        ("huge.cfg", "999999999999999999", "32"),
        ("wide.cfg", "65536", "65536"),
        ("small.cfg", "32", "32"),
    ):
        (world / name).write_text(scalesim_cfg(rows, cols))
    (world / "one.cfg").write_text(
        scalesim_cfg(1, 1)
        .replace("BankBandwidth: 10", "BankBandwidth: 1")
        .replace("BankNum: 10", "BankNum: 1")
    )
    return world


ARCH = [
    ([*SYSTOLIC, "--arch", "overflow.toml"], ("array.clock", "exponent within ±40")),
    ([*SYSTOLIC, "--arch", "exponent.toml"], ("array.clock", "1e99999999 GHz")),
    ([*SYSTOLIC, "--arch", "digits.toml"], ("array.clock", "...", "at most 40 characters")),
    ([*SYSTOLIC, "--arch", "latency.toml"], ("dram.latency", "exponent within ±40")),
    ([*SYSTOLIC, "--arch", "trickle.toml"], ("dram.bandwidth", "outside the physical range")),
    (
        [*SYSTOLIC, "--arch", "gemmini", "--machine", "dram.bandwidth=1e-30 B/cycle"],
        ("dram.bandwidth", "outside the physical range"),
    ),
    ([*SCALESIM, "--shape", "64x64x64", "--arch", "digits.cfg"], ("ArrayHeight", "18 digits")),
    ([*SCALESIM, "--shape", "64x64x64", "--arch", "huge.cfg"], ("--max-memory",)),
    ([*SCALESIM, "--shape", "64x64x64", "--arch", "wide.cfg"], ("65536x65536", "--max-memory")),
    (
        [*SCALESIM, "--shape", "100000x100000x8", "--arch", "small.cfg"],
        ("layer '100000x100000x8'", "--max-memory"),
    ),
    (
        [*SCALESIM, "--shape", "2048x2048x2048", "--arch", "one.cfg"],
        ("on 1x1 would take about", "the limit is"),
    ),
]


@pytest.mark.parametrize(("argv", "named"), ARCH, ids=lambda v: str(v)[:60])
def test_machine_files_past_any_physical_quantity(
    hostile: Hostile, machines: Path, argv: list[str], named: tuple[str, ...]
) -> None:
    hostile.refuses(argv, *named)


def test_scalesim_model_within_its_price_still_runs(hostile: Hostile, machines: Path) -> None:
    hostile.accepts([*SCALESIM, "--shape", "64x64x64", "--arch", "small.cfg"], "64x64x64")


LLAMA = ["ops", "llama2_7b", "--oracle", "ga1"]


def test_a_chart_never_makes_a_folder(hostile: Hostile, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    hostile.refuses([*LLAMA, "--chart", str(gone / "x.png")], "--chart", "does not exist")
    assert not gone.exists()


@pytest.mark.parametrize(
    ("chart", "named"),
    [
        ("-", ("--chart -", "a PNG file")),
        ("afile", ("--chart afile exists", "--force")),
        ("adir", ("--chart adir is a directory",)),
    ],
)
def test_a_chart_is_checked_before_any_work(
    hostile: Hostile, chart: str, named: tuple[str, ...]
) -> None:
    hostile.refuses([*LLAMA, "--chart", chart], *named)


def test_a_chart_through_a_link_replaces_the_link(
    hostile: Hostile, world: Path, tmp_path: Path
) -> None:
    target = tmp_path / "target.txt"
    target.write_text("not ours\n")
    (world / "link.png").symlink_to(target)
    hostile.accepts([*LLAMA, "--chart", "link.png", "--force"], changed=["link.png"])
    assert target.read_text() == "not ours\n" and not (world / "link.png").is_symlink()


OPS = [
    ([*LLAMA, "--machine", "slots=1000000000"], ("operation 'head.lm_head'", "--max-memory")),
    ([*LLAMA, "--seq", "4096", "--batch", "100000"], ("embed.embed_tokens", "the limit is")),
]


@pytest.mark.parametrize(("argv", "named"), OPS, ids=lambda v: str(v)[:60])
def test_ops_prices_what_it_would_time(
    hostile: Hostile, argv: list[str], named: tuple[str, ...]
) -> None:
    hostile.refuses(argv, *named)


def test_an_onnx_product_past_64_bits_is_named_not_blamed_on_a_flag(
    hostile: Hostile, world: Path
) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    side = 2**62
    values = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [side, side]) for n in "xwy"]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g", values[:2], values[2:]
    )
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), world / "huge.onnx"
    )
    line = hostile.refuses(
        ["ops", "huge.onnx", "--oracle", "ga1"], "operation 'MatMul_0'", "64-bit"
    )
    assert "--shape" not in line


def test_a_machine_of_thousands_of_buffers_is_one_short_line(hostile: Hostile, world: Path) -> None:
    """Each buffer's table holds a one-string array (never taken for nesting), and the error
    names a few of the buffers, not all 9,000."""
    table = (
        '[buffers.b{}]\nholds = ["a"]\ncapacity = "256 KiB"\nread_width = 16\nwrite_width = 16\n'
    )
    _arch(
        world,
        "many.toml",
        "[buffers.scratchpad]",
        "".join(map(table.format, range(9000))) + "[buffers.scratchpad]",
    )
    line = hostile.refuses([*SYSTOLIC, "--arch", "many.toml"], "b0, b1, b2, b3 and 8,997 more")
    assert len(line) < 200


def test_a_sweep_grid_past_what_could_finish_is_refused_up_front(hostile: Hostile) -> None:
    """Four keys of 200 values: 1.6e9 machines, never enumerated; one value list of 20,000 is
    echoed cut in the middle."""
    values = ",".join(str(v) for v in range(1, 201))
    keys = ("dma_setup", "dma_words_per_cycle", "mxu_cycles", "mxu_fill")
    grid = [arg for key in keys for arg in ("--machine-grid", f"{key}={values}")]
    hostile.refuses(["sweep", "--shape", "64x64x64", *grid], "1,600,000,000 machines", "at most")
    many = "dma_setup=" + ",".join(str(v) for v in range(20_000)) + ",x"
    line = hostile.refuses(["sweep", "--machine-grid", many], "values must be integers", "...")
    assert len(line) < 200
