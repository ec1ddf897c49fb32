"""Technology tables: the shipped tables load, every default cites its source, SRAM energy scales
with capacity through its points, and a bad table is refused in one line that names the key."""

from __future__ import annotations

import copy
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simcore.energy import TechnologyError, load_technology, shipped_table, technology_from_dict
from simcore.energy.technology import AREA_KEYS, ENERGY_KEYS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT = tomllib.loads(shipped_table("default_45nm.toml").read_text())


def test_the_default_table_is_45nm_with_8_bit_words_and_32_bit_sums() -> None:
    tech = load_technology()
    assert (tech.node_nm, tech.supply_v, tech.word_bits, tech.accumulator_bits) == (45, 0.9, 8, 32)
    assert tech.mac_pj == pytest.approx(0.2 + 0.1)  # Horowitz: 8-bit multiply + 32-bit add
    assert tech.dram_read_pj == pytest.approx(1300 / 8)  # 1.3 nJ per 64-bit access


def test_every_default_value_cites_its_source() -> None:
    tech = load_technology()
    for key in (*ENERGY_KEYS, *AREA_KEYS, "sram"):
        assert tech.source(key), key
    assert all("Horowitz" in (tech.source(k) or "") for k in ("mac_pj", "dram_read_pj", "sram"))


def test_the_zigzag_table_carries_tpu_likes_per_access_costs() -> None:
    tech = load_technology(shipped_table("zigzag_tpu_like.toml"))
    assert tech.sram_read_pj(2048) == pytest.approx(416.16 * 8 / 2048)
    assert tech.sram_write_pj(64) == pytest.approx(378.4 * 8 / 2048)  # one point: constant
    assert (tech.dram_read_pj, tech.dram_write_pj) == (700 * 8 / 64, 750 * 8 / 64)
    assert tech.node_nm is None


def test_sram_energy_passes_through_horowitz_points() -> None:
    tech = load_technology()
    for kib, per_64_bits in ((8, 10.0), (32, 20.0), (1024, 100.0)):
        assert tech.sram_read_pj(kib) == pytest.approx(per_64_bits / 8)
    # Between the points a power law: 16 KiB is the geometric mean of 8 and 32 KiB.
    assert tech.sram_read_pj(16) == pytest.approx(math.sqrt(1.25 * 2.5))


@given(st.floats(0.01, 1e6), st.floats(1.0001, 100))
def test_sram_energy_grows_with_capacity(kib: float, factor: float) -> None:
    tech = load_technology()
    assert 0 < tech.sram_read_pj(kib) < tech.sram_read_pj(kib * factor)


def test_values_may_carry_their_unit() -> None:
    data = copy.deepcopy(DEFAULT)
    data["energy"]["mac_pj"] = "300 fJ"
    data["energy"]["dram_read_pj"] = "0.1625 nJ"
    data["area"]["pe_um2"] = "0.000636 mm2"
    tech = technology_from_dict(data)
    assert (tech.mac_pj, tech.dram_read_pj, tech.pe_um2) == pytest.approx((0.3, 162.5, 636))


def _broken(change: Any) -> str:
    data = copy.deepcopy(DEFAULT)
    change(data)
    with pytest.raises(TechnologyError) as caught:
        technology_from_dict(data)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["energy"].pop("mac_pj"), "energy.mac_pj: missing key"),
        (lambda d: d.pop("word_bits"), "word_bits: missing key"),
        (lambda d: d["sram"][1].pop("read_pj"), "sram[1].read_pj: missing key"),
        (
            lambda d: d["energy"].__setitem__("dram_read_pj", -1.0),
            "energy.dram_read_pj: must not be negative",
        ),
        (lambda d: d["area"].__setitem__("pe_um2", -5), "area.pe_um2: must not be negative"),
        (lambda d: d["energy"].__setitem__("mac_pj", "0.3 mm2"), "energy.mac_pj: wrong unit 'mm2'"),
        (
            lambda d: d["area"].__setitem__("dma_lane_um2", "3 pJ"),
            "area.dma_lane_um2: wrong unit 'pJ'",
        ),
        (lambda d: d["energy"].__setitem__("mac_pj", "a lot"), "energy.mac_pj: expected a number"),
        (
            lambda d: d["energy"].__setitem__("mac_pj", True),
            "energy.mac_pj: expected a number in pJ",
        ),
        (
            lambda d: d["energy"].__setitem__("mac_pj", float("nan")),
            "energy.mac_pj: must be finite",
        ),
        (lambda d: d.__setitem__("word_bits", 8.5), "word_bits: expected a whole number of bits"),
        (lambda d: d.__setitem__("accumulator_bits", 0), "accumulator_bits: must be positive"),
        (
            lambda d: d["energy"].__setitem__("mac_nj", 0.0003),
            "energy.mac_nj: unknown key (wrong unit: this table states it as mac_pj, in pJ)",
        ),
        (lambda d: d["energy"].__setitem__("leakage_pj", 1.0), "energy.leakage_pj: unknown key"),
        (lambda d: d.__setitem__("clock_ghz", 1.0), "clock_ghz: unknown key"),
        (lambda d: d["sources"].__setitem__("voltage", "x"), "sources.voltage: cites a key"),
        (lambda d: d.__setitem__("energy", 3), "energy: expected a table"),
        (lambda d: d.__setitem__("sram", []), "sram: expected one or more [[sram]] tables"),
        (lambda d: d["sram"][2].__setitem__("kib", 8), "sram: two points at 8 KiB"),
        (lambda d: d["sram"][0].__setitem__("kib", 0), "sram[0].kib: must be positive"),
        (lambda d: d.__setitem__("name", ""), "name: expected a non-empty string"),
        (lambda d: d.__setitem__("word_bits", 10**20), "word_bits: 100000000000000000000 bits"),
        (lambda d: d.__setitem__("accumulator_bits", 4096), "accumulator_bits: 4096 bits is past"),
        (lambda d: d["energy"].__setitem__("mac_pj", 1e7), "energy.mac_pj: 1e+07 pJ is past any"),
        (lambda d: d["energy"].__setitem__("dram_read_pj", "2 uJ"), "energy.dram_read_pj: 2e+06"),
        (lambda d: d["area"].__setitem__("pe_um2", "2e6 mm2"), "area.pe_um2: 2e+12 um2 is past"),
        (lambda d: d["sram"][0].__setitem__("kib", 2**31), "sram[0].kib: 2.14748e+09 KiB"),
        (lambda d: d.__setitem__("node_nm", 0), "node_nm: must be positive"),
        (lambda d: d.__setitem__("supply_v", 230), "supply_v: 230 V is past any technology"),
    ],
)
def test_a_bad_table_is_refused_naming_the_key(change: Any, expected: str) -> None:
    assert _broken(change).startswith(expected)


def test_a_file_that_is_not_toml_or_not_there_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "node.toml"
    bad.write_text("energy = [unclosed\n")
    with pytest.raises(TechnologyError, match=r"node\.toml: not valid TOML"):
        load_technology(bad)
    with pytest.raises(TechnologyError, match="cannot read technology file"):
        load_technology(tmp_path / "missing.toml")


def test_a_table_written_as_a_file_loads(tmp_path: Path) -> None:
    text = shipped_table("default_45nm.toml").read_text().replace("mac_pj = 0.3", "mac_pj = 0.15")
    (tmp_path / "half_mac.toml").write_text(text)
    assert load_technology(tmp_path / "half_mac.toml").mac_pj == 0.15


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda tmp: Path("/dev/zero"), "/dev/zero is a device, not a regular file"),
        (lambda tmp: _fifo(tmp / "pipe"), "pipe is a FIFO, not a regular file"),
        (lambda tmp: _written(tmp / "u16.toml", "name = 1".encode("utf-16")), "is UTF-16 text"),
        (lambda tmp: _written(tmp / "bin.toml", bytes(range(256))), "is not a text file"),
        (lambda tmp: _written(tmp / "deep.toml", b"a = " + b"[" * 10**5), "nested more than"),
        (lambda tmp: _written(tmp / "big.toml", b"#" * (2 << 20)), "more than the 1048576"),
    ],
)
def test_a_file_that_cannot_be_a_table_is_refused_in_one_line(
    tmp_path: Path, make: Any, expected: str
) -> None:
    with pytest.raises(TechnologyError) as caught:
        load_technology(make(tmp_path))
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def _written(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path
