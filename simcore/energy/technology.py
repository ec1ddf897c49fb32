"""A technology table: the energy of every action the oracles count and the area of every block,
read from a TOML file and validated (`load_technology`): read strictly (simcore.files: a regular
UTF-8 file of at most TABLE_BYTES), every key known, every value a number in its unit within a
physical range (PHYSICAL). The default table ships with the package (data/default_45nm.toml); its
header and [sources] say where every value comes from.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from simcore.files import FileError, parse_toml, read_text

DEFAULT_TABLE = "default_45nm.toml"
TABLE_BYTES = 1 << 20  # a table of every action fits in a few KB
# The most a value may be, by its unit: far past any technology (a word of a kilobit, a micro-
# joule per action, a square metre, a tebibyte of SRAM, a micrometre node, 10 V). Bits at least 1,
# a capacity, a node and a supply above 0.
MOST_BITS = 1024
PHYSICAL: dict[str, float] = {"pj": 1e6, "um2": 1e12, "kib": float(1 << 30), "nm": 1e4, "v": 10.0}


class TechnologyError(ValueError):
    """A technology table is missing a key, has an unknown one, or a value of the wrong type,
    sign or unit. The message names the key."""


@dataclass(frozen=True)
class SramPoint:
    """SRAM energy per word (of word_bits) at one capacity."""

    kib: float
    read_pj: float
    write_pj: float


@dataclass(frozen=True)
class Technology:
    """Energy per action in pJ, area in um2; words are `word_bits` wide, sums `accumulator_bits`."""

    name: str
    node_nm: float | None
    supply_v: float | None
    word_bits: int
    accumulator_bits: int
    mac_pj: float
    operand_register_read_pj: float
    operand_register_write_pj: float
    accumulator_register_read_pj: float
    accumulator_register_write_pj: float
    forward_register_read_pj: float
    forward_register_write_pj: float
    dram_read_pj: float
    dram_write_pj: float
    dma_setup_pj: float
    sram: tuple[SramPoint, ...]
    pe_um2: float
    shadow_register_um2: float
    sram_um2_per_kib: float
    dma_lane_um2: float
    sources: tuple[tuple[str, str], ...] = ()
    hbm_read_pj: float | None = None  # optional: a table without them cannot cost an HBM link
    hbm_write_pj: float | None = None
    # The vector unit's arithmetic per word (optional: a table without them leaves it uncosted).
    vector_add_pj: float | None = None  # add, subtract, max, relu, negate, a reduction's step
    vector_mul_pj: float | None = None  # multiply, scale
    vector_div_pj: float | None = None
    sfu_pj: float | None = None  # exp and the sfu's functions

    @property
    def accumulator_words(self) -> float:
        """What one accumulator word costs in an SRAM, in words."""
        return self.accumulator_bits / self.word_bits

    def sram_read_pj(self, kib: float) -> float:
        """Energy of reading one word from an SRAM of `kib` KiB."""
        return _log_log(self.sram, kib, "read_pj")

    def sram_write_pj(self, kib: float) -> float:
        """Energy of writing one word into an SRAM of `kib` KiB."""
        return _log_log(self.sram, kib, "write_pj")

    def source(self, key: str) -> str | None:
        return dict(self.sources).get(key)


def _log_log(points: tuple[SramPoint, ...], kib: float, field: str) -> float:
    """Piecewise power law through the points; beyond the ends, the nearest segment's exponent."""
    if not math.isfinite(kib) or kib <= 0:
        raise TechnologyError(f"SRAM capacity must be positive, got {kib} KiB")
    if len(points) == 1:
        return float(getattr(points[0], field))
    index = 1
    while index < len(points) - 1 and kib > points[index].kib:
        index += 1
    low, high = points[index - 1], points[index]
    e_low, e_high = getattr(low, field), getattr(high, field)
    if e_low == 0 or e_high == 0:  # a zero energy has no logarithm: interpolate linearly
        share = (kib - low.kib) / (high.kib - low.kib)
        return float(max(0.0, e_low + share * (e_high - e_low)))
    slope = math.log(e_high / e_low) / math.log(high.kib / low.kib)
    return float(e_low * (kib / low.kib) ** slope)


# ---- the schema: section, key, unit kind ------------------------------------------------------

OPTIONAL_ENERGY_KEYS = (
    "hbm_read_pj",
    "hbm_write_pj",
    "vector_add_pj",
    "vector_mul_pj",
    "vector_div_pj",
    "sfu_pj",
)
ENERGY_KEYS = tuple(
    f.name
    for f in fields(Technology)
    if f.name.endswith("_pj") and f.name not in OPTIONAL_ENERGY_KEYS
)
AREA_KEYS = ("pe_um2", "shadow_register_um2", "sram_um2_per_kib", "dma_lane_um2")
SRAM_KEYS = ("kib", "read_pj", "write_pj")
TOP_KEYS = ("name", "word_bits", "accumulator_bits", "energy", "sram", "area")
OPTIONAL_TOP_KEYS = ("node_nm", "supply_v", "sources")
# Units a value may be written in, by the unit its key is stated in.
UNITS: dict[str, dict[str, float]] = {
    "pj": {"fj": 1e-3, "pj": 1.0, "nj": 1e3, "uj": 1e6},
    "um2": {"um2": 1.0, "mm2": 1e6},
    "kib": {"b": 1 / 1024, "kib": 1.0, "kb": 1.0, "mib": 1024.0, "mb": 1024.0},
    "nm": {"nm": 1.0},
    "v": {"v": 1.0, "mv": 1e-3},
}
SHOWN = {"pj": "pJ", "um2": "um2", "kib": "KiB", "nm": "nm", "v": "V"}
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z0-9]+)\s*$")


def _unit_of(key: str) -> str:
    """The unit a key is stated in: its last name part (mac_pj -> pj, sram_um2_per_kib -> um2)."""
    for unit in UNITS:
        if key == unit or key.endswith("_" + unit) or f"_{unit}_" in key:
            return unit
    raise AssertionError(f"no unit in key {key}")


def _quantity(where: str, value: object, unit: str) -> float:
    """A non-negative finite number in `unit`, given as a number or as a string with its unit."""
    if isinstance(value, str):
        match = _QUANTITY.match(value)
        if not match:
            raise TechnologyError(
                f"{where}: expected a number or a quantity such as '1.5 {SHOWN[unit]}', got {value!r}"
            )
        number, given = float(match.group(1)), match.group(2).lower()
        if given not in UNITS[unit]:
            kinds = ", ".join(UNITS[unit])
            raise TechnologyError(
                f"{where}: wrong unit {match.group(2)!r}, expected one of {kinds}"
            )
        value = number * UNITS[unit][given]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TechnologyError(
            f"{where}: expected a number in {SHOWN[unit]}, got {type(value).__name__} {value!r}"
        )
    if not math.isfinite(value):
        raise TechnologyError(f"{where}: must be finite, got {value}")
    if value < 0:
        raise TechnologyError(f"{where}: must not be negative, got {value}")
    if value > PHYSICAL[unit]:
        raise TechnologyError(
            f"{where}: {value:g} {SHOWN[unit]} is past any technology (at most "
            f"{PHYSICAL[unit]:g} {SHOWN[unit]})"
        )
    return float(value)


def _wrong_unit_hint(key: str, known: tuple[str, ...]) -> str:
    """For an unknown key that is a known one in another unit (mac_nj), the key to use."""
    stem = re.sub(r"_[a-z0-9]+$", "", key)
    for name in known:
        if re.sub(r"_[a-z0-9]+$", "", name) == stem:
            return f" (wrong unit: this table states it as {name}, in {SHOWN[_unit_of(name)]})"
    return ""


def _table(
    where: str, data: Mapping[str, Any], required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> None:
    """Every required key present, no unknown key."""
    for key in data:
        if key not in required and key not in optional:
            known = ", ".join((*required, *optional))
            raise TechnologyError(
                f"{where}{key}: unknown key{_wrong_unit_hint(key, required)} (known: {known})"
            )
    for key in required:
        if key not in data:
            raise TechnologyError(f"{where}{key}: missing key")


def _positive_int(where: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TechnologyError(f"{where}: expected a whole number of bits, got {value!r}")
    if value <= 0:
        raise TechnologyError(f"{where}: must be positive, got {value}")
    if value > MOST_BITS:
        raise TechnologyError(f"{where}: {value} bits is past any word (at most {MOST_BITS})")
    return value


def _sram_points(raw: object) -> tuple[SramPoint, ...]:
    if not isinstance(raw, list) or not raw:
        raise TechnologyError("sram: expected one or more [[sram]] tables (kib, read_pj, write_pj)")
    points = []
    for index, entry in enumerate(raw):
        where = f"sram[{index}]."
        if not isinstance(entry, dict):
            raise TechnologyError(f"sram[{index}]: expected a table with kib, read_pj and write_pj")
        _table(where, entry, SRAM_KEYS)
        kib, read, write = (_quantity(where + k, entry[k], _unit_of(k)) for k in SRAM_KEYS)
        if kib == 0:
            raise TechnologyError(f"{where}kib: must be positive, got 0")
        points.append(SramPoint(kib, read, write))
    points.sort(key=lambda p: p.kib)
    for before, after in zip(points, points[1:]):
        if before.kib == after.kib:
            raise TechnologyError(f"sram: two points at {after.kib:g} KiB")
    return tuple(points)


def _optional(data: Mapping[str, Any], key: str, unit: str) -> float | None:
    """An optional quantity; a node or a supply, when given, is above zero."""
    if key not in data:
        return None
    value = _quantity(key, data[key], unit)
    if value == 0:
        raise TechnologyError(f"{key}: must be positive, got 0")
    return value


def technology_from_dict(data: Mapping[str, Any]) -> Technology:
    """Validate a parsed table and build the Technology."""
    _table("", data, TOP_KEYS, OPTIONAL_TOP_KEYS)
    for section in ("energy", "area"):
        if not isinstance(data[section], dict):
            raise TechnologyError(
                f"{section}: expected a table, got {type(data[section]).__name__}"
            )
    _table("energy.", data["energy"], ENERGY_KEYS, OPTIONAL_ENERGY_KEYS)
    _table("area.", data["area"], AREA_KEYS)
    if not isinstance(data["name"], str) or not data["name"].strip():
        raise TechnologyError(f"name: expected a non-empty string, got {data['name']!r}")
    values: dict[str, Any] = {
        key: _quantity(f"energy.{key}", data["energy"][key], "pj") for key in ENERGY_KEYS
    }
    values.update(
        {
            key: _quantity(f"energy.{key}", data["energy"][key], "pj")
            for key in OPTIONAL_ENERGY_KEYS
            if key in data["energy"]
        }
    )
    values.update({key: _quantity(f"area.{key}", data["area"][key], "um2") for key in AREA_KEYS})
    sources = data.get("sources", {})
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        raise TechnologyError('sources: expected a table of key = "citation" strings')
    citable = (*ENERGY_KEYS, *OPTIONAL_ENERGY_KEYS, *AREA_KEYS, "sram")
    for key in sources:
        if key not in citable:
            raise TechnologyError(f"sources.{key}: cites a key the table does not have")
    return Technology(
        name=data["name"],
        node_nm=_optional(data, "node_nm", "nm"),
        supply_v=_optional(data, "supply_v", "v"),
        word_bits=_positive_int("word_bits", data["word_bits"]),
        accumulator_bits=_positive_int("accumulator_bits", data["accumulator_bits"]),
        sram=_sram_points(data["sram"]),
        sources=tuple(sorted(sources.items())),
        **values,
    )


def load_technology(path: str | Path | None = None) -> Technology:
    """The technology table at `path`, or the shipped default (45 nm) when None."""
    try:
        if path is None:
            text = (
                resources.files("simcore.energy")
                .joinpath("data", DEFAULT_TABLE)
                .read_text(encoding="utf-8")
            )
            data = parse_toml(text, DEFAULT_TABLE)
        else:
            data = parse_toml(read_text(path, "technology file", TABLE_BYTES), str(path))
    except FileError as exc:
        raise TechnologyError(str(exc)) from None
    return technology_from_dict(data)


@functools.lru_cache(maxsize=1)
def default_technology() -> Technology:
    """The shipped default table, read once (a Technology is immutable)."""
    return load_technology()


def technology_to_dict(tech: Technology) -> dict[str, Any]:
    """The table in its file's layout: technology_from_dict(technology_to_dict(t)) == t."""
    data: dict[str, Any] = {
        "name": tech.name,
        "word_bits": tech.word_bits,
        "accumulator_bits": tech.accumulator_bits,
    }
    for key in ("node_nm", "supply_v"):
        if getattr(tech, key) is not None:
            data[key] = getattr(tech, key)
    data["energy"] = {key: getattr(tech, key) for key in ENERGY_KEYS}
    data["energy"].update(
        {key: getattr(tech, key) for key in OPTIONAL_ENERGY_KEYS if getattr(tech, key) is not None}
    )
    data["sram"] = [{"kib": p.kib, "read_pj": p.read_pj, "write_pj": p.write_pj} for p in tech.sram]
    data["area"] = {key: getattr(tech, key) for key in AREA_KEYS}
    if tech.sources:
        data["sources"] = dict(tech.sources)
    return data


def shipped_table(name: str) -> Path:
    """The path of a table shipped with the package (e.g. 'zigzag_tpu_like.toml')."""
    return Path(str(resources.files("simcore.energy").joinpath("data", name)))
