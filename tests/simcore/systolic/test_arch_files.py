"""Machine files: the bundled architectures with their sources, the strict reader, overrides."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from simcore.systolic.archs import (
    MAX_FILE_BYTES,
    apply_overrides,
    arch_dict,
    bundled_archs,
    load_arch,
)
from simcore.systolic.machine import ArchError

EXPECTED = {"edge-npu", "gemmini", "tpu-v1", "tpuv4i"}


def test_every_bundled_machine_loads_and_cites_its_sources() -> None:
    assert EXPECTED <= set(bundled_archs())
    for name in bundled_archs():
        machine = load_arch(name)
        assert machine.name == name
        assert machine.sources and machine.assumed, name
        assert any("http" in text for _key, text in machine.sources), name


def test_the_tpu_v1_figures() -> None:
    m = load_arch("tpu-v1")
    assert (m.array.rows, m.array.cols, m.dataflow, m.clock_hz) == (256, 256, "ws", 700 * 10**6)
    assert m.memory.store_of("a").capacity == 24 * 2**20
    assert m.memory.accumulator.capacity == 2**20  # 4 MiB of 32-bit sums
    assert m.memory.dram.words_per_cycle == Fraction(340, 7)  # 34 GB/s at 700 MHz, bytes
    assert m.dram_bytes_per_second == 34 * 10**9


def test_the_tpuv4i_has_hbm_and_sixteen_bit_words() -> None:
    m = load_arch("tpuv4i")
    assert m.memory.dram_kind == "hbm" and m.word_bits == 16
    assert m.dram_bytes_per_second == 614 * 10**9


def test_overrides_apply_to_the_file_layout() -> None:
    m = load_arch(
        "tpu-v1", ["dram.bandwidth=819 GB/s", "buffers.unified.capacity=8 MiB", "array.rows=128"]
    )
    assert m.memory.dram.words_per_cycle == Fraction(819 * 10**9, 700 * 10**6)
    assert m.memory.store_of("a").capacity == 8 * 2**20 and m.array.rows == 128
    shared = load_arch("gemmini", ["buffers.scratchpad.holds=a,b"])
    assert shared.memory.store_of("b").name == "scratchpad"


def _write(tmp_path: Path, data: str | bytes) -> Path:
    path = tmp_path / "arch.toml"
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def _gemmini_text() -> str:
    return (
        Path(__file__).resolve().parents[3] / "simcore" / "systolic" / "archs" / "gemmini.toml"
    ).read_text()


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["array.rows=0"], "array.rows: must be from 1 to 65536, got 0"),
        (["buffers.scratchpad.capacity=-4 KiB"], "buffers.scratchpad.capacity: expected a size"),
        (
            ["buffers.scratchpad.capacity=256 B"],
            "buffers.scratchpad.capacity: 256 words is too small for one 16x16 tile in ws (272 words)",
        ),
        (
            ["accumulator.capacity=32 B"],
            "accumulator.capacity: 8 words is too small for one 16x16 tile in ws (16 words)",
        ),
        (["dram.bandwidth=0 GB/s"], "dram.bandwidth: must be positive"),
        (["dram.speed=3"], "dram.speed: unknown key"),
        (
            ["buffers.scratchpad.holds=a"],
            "buffers: operand b must be held by one buffer, not no buffer",
        ),
        (["array.dataflow=rs"], "array.dataflow: must be one of ws, os, is, got 'rs'"),
        (["array.clock=300 GHz"], "array.clock: 3e+11 is outside the physical range"),
        (["dram.latency=2 weeks"], "dram.latency: give cycles, ns or us"),
        (["nonsense"], "override 'nonsense': expected KEY=VALUE"),
    ],
)
def test_a_bad_setting_names_its_key_in_one_line(overrides: list[str], message: str) -> None:
    with pytest.raises(ArchError) as refused:
        load_arch("gemmini", overrides)
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


def test_a_missing_key_is_named() -> None:
    data = apply_overrides(arch_dict("gemmini"), [])
    del data["dram"]["bandwidth"]
    from simcore.systolic.machine_parse import parse_machine

    with pytest.raises(ArchError, match="^dram.bandwidth: missing key$"):
        parse_machine(data)


def test_file_reading_is_strict(tmp_path: Path) -> None:
    assert load_arch(_write(tmp_path, _gemmini_text())).name == "gemmini"
    with pytest.raises(ArchError, match="not UTF-8"):
        load_arch(_write(tmp_path, b"name = '\xff'"))
    with pytest.raises(ArchError, match="not valid TOML"):
        load_arch(_write(tmp_path, "name = "))
    with pytest.raises(ArchError, match=f"more than the {MAX_FILE_BYTES} allowed"):
        load_arch(_write(tmp_path, "# " + "x" * MAX_FILE_BYTES))
    with pytest.raises(ArchError, match="no such file and no bundled machine"):
        load_arch(tmp_path / "missing.toml")
    with pytest.raises(ArchError, match="^colour: unknown key"):
        load_arch(_write(tmp_path, 'colour = "red"\n' + _gemmini_text()))
