"""SCALE-Sim 3.0's configuration file (`.cfg`), read as SCALE-Sim reads it.

SCALE-Sim parses the file with Python's configparser (scalesim/scale_config.py): section names
are case-sensitive, keys are not, `key: value` and `key = value` both work, a line starting with
`#` or `;` is a comment, sections and keys it does not ask for are ignored (the published
configs carry `MemoryBanks`, `OnChipMemoryBanks` and the like, which it never reads). The keys
it asks for must be there:

  [general]              run_name
  [architecture_presets] ArrayHeight, ArrayWidth, IfmapSramSzkB, FilterSramSzkB, OfmapSramSzkB,
                         IfmapOffset, FilterOffset, OfmapOffset, Dataflow, ReadRequestBuffer,
                         WriteRequestBuffer, and Bandwidth in USER mode (a comma-separated list
                         of which only the first is used)
  [layout]               IfmapCustomLayout, FilterCustomLayout, IfmapSRAMBankBandwidth,
                         IfmapSRAMBankNum, IfmapSRAMBankPort, FilterSRAMBankBandwidth,
                         FilterSRAMBankNum, FilterSRAMBankPort
  [sparsity]             SparsitySupport
  [run_presets]          InterfaceBandwidth (USER or CALC), UseRamulatorTrace

Stricter than SCALE-Sim: a number must be a plain decimal integer, a size or count positive;
Dataflow must be ws, os or is (SCALE-Sim warns and runs os); InterfaceBandwidth must be USER or
CALC (SCALE-Sim returns from its reader half-done). Each problem is one line naming the key.
A [network_presets] section makes SCALE-Sim look for TopologyCsvLoc in [architecture_presets]
(its reader's slip); that is reproduced.
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass
from pathlib import Path

from simcore import files
from simcore.systolic.scalesim_layer import Offsets

MAX_CONFIG_BYTES = 1 << 16
# At most 18 digits: every value fits in 64 bits, and a 5,000-digit one is refused before int()
# (Python's own limit would raise outside this reader's errors).
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}", re.ASCII)
_BOOLEANS = {"1": True, "yes": True, "true": True, "on": True}
_BOOLEANS.update({"0": False, "no": False, "false": False, "off": False})


class ScalesimConfigError(ValueError):
    """A SCALE-Sim configuration SCALE-Sim would not run, or one this model does not reproduce."""


@dataclass(frozen=True)
class ScalesimConfig:
    """The settings of a SCALE-Sim 3.0 run. Sizes in KB of one-byte words (1 KB = 1024 words);
    bandwidths in words per cycle."""

    run_name: str
    array_rows: int
    array_cols: int
    ifmap_kb: int
    filter_kb: int
    ofmap_kb: int
    dataflow: str
    offsets: Offsets
    bandwidths: tuple[int, ...]
    user_bandwidth: bool
    ifmap_bank_bandwidth: int
    ifmap_banks: int
    filter_bank_bandwidth: int
    filter_banks: int
    ifmap_custom_layout: bool = False
    filter_custom_layout: bool = False
    sparsity: bool = False
    ramulator: bool = False
    read_request_buffer: int = 32
    write_request_buffer: int = 32

    def __post_init__(self) -> None:
        if self.dataflow not in ("ws", "os", "is"):
            raise ScalesimConfigError(f"Dataflow must be ws, os or is, got {self.dataflow!r}")
        for key, value in (
            ("ArrayHeight", self.array_rows),
            ("ArrayWidth", self.array_cols),
            ("IfmapSramSzkB", self.ifmap_kb),
            ("FilterSramSzkB", self.filter_kb),
            ("OfmapSramSzkB", self.ofmap_kb),
            ("IfmapSRAMBankBandwidth", self.ifmap_bank_bandwidth),
            ("IfmapSRAMBankNum", self.ifmap_banks),
            ("FilterSRAMBankBandwidth", self.filter_bank_bandwidth),
            ("FilterSRAMBankNum", self.filter_banks),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ScalesimConfigError(f"{key} must be a positive integer, got {value!r}")
        if self.user_bandwidth and (not self.bandwidths or self.bandwidths[0] <= 0):
            raise ScalesimConfigError(f"Bandwidth must be positive, got {self.bandwidths!r}")

    @property
    def ofmap_bandwidth(self) -> int:
        """USER mode: the OFMAP buffer drains Bandwidth words per cycle."""
        return self.bandwidths[0]

    def memory_unsupported(self) -> str | None:
        """Why the memory model does not reproduce this configuration, or None."""
        if not self.user_bandwidth:
            return "InterfaceBandwidth CALC is not reproduced (only USER)"
        for what, on in (
            ("IfmapCustomLayout", self.ifmap_custom_layout),
            ("FilterCustomLayout", self.filter_custom_layout),
            ("SparsitySupport", self.sparsity),
            ("UseRamulatorTrace", self.ramulator),
        ):
            if on:
                return f"{what} on is not reproduced"
        for key, bandwidth, banks in (
            ("IfmapSRAMBankBandwidth", self.ifmap_bank_bandwidth, self.ifmap_banks),
            ("FilterSRAMBankBandwidth", self.filter_bank_bandwidth, self.filter_banks),
        ):
            if bandwidth % banks:  # SCALE-Sim's read buffer asserts this when it starts
                return f"{key} {bandwidth} is not a multiple of the {banks} banks"
        return None


def _get(parser: configparser.ConfigParser, section: str, key: str) -> str:
    if not parser.has_section(section):
        raise ScalesimConfigError(f"missing section [{section}] (needed for {key})")
    if not parser.has_option(section, key):
        raise ScalesimConfigError(f"missing key {key} in [{section}]")
    try:
        return parser.get(section, key).strip()
    except configparser.Error as error:
        raise ScalesimConfigError(f"{key} in [{section}]: {error.message}") from None


def _int(parser: configparser.ConfigParser, section: str, key: str) -> int:
    text = _get(parser, section, key)
    if not _INTEGER.fullmatch(text):
        raise ScalesimConfigError(
            f"{key} in [{section}] must be an integer of at most 18 digits, got {_short(text)}"
        )
    return int(text)


def _short(text: str) -> str:
    """The value as written, cut in the middle past 40 characters (an error is one short line)."""
    return repr(text) if len(text) <= 40 else repr(text[:18] + "..." + text[-18:])


def _bool(parser: configparser.ConfigParser, section: str, key: str) -> bool:
    text = _get(parser, section, key)
    if text.lower() not in _BOOLEANS:
        raise ScalesimConfigError(f"{key} in [{section}] must be true or false, got {text!r}")
    return _BOOLEANS[text.lower()]


def _bandwidths(parser: configparser.ConfigParser) -> tuple[int, ...]:
    text = _get(parser, "architecture_presets", "Bandwidth")
    cells = [cell.strip() for cell in text.split(",")]
    if not all(_INTEGER.fullmatch(cell) for cell in cells):
        raise ScalesimConfigError(
            f"Bandwidth must be integers of at most 18 digits separated by commas, got {_short(text)}"
        )
    return tuple(int(cell) for cell in cells)


def parse_scalesim_config(text: str) -> ScalesimConfig:
    """Read a SCALE-Sim .cfg file's text; one-line ScalesimConfigError naming the key."""
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error as error:
        first = str(error).splitlines()[0]  # configparser quotes whole section names
        if len(first) > 200:
            first = first[:120] + " ... " + first[-60:]
        raise ScalesimConfigError(first) from None
    run_name = _get(parser, "general", "run_name")
    mode = _get(parser, "run_presets", "InterfaceBandwidth")
    if mode not in ("USER", "CALC"):
        raise ScalesimConfigError(f"InterfaceBandwidth must be USER or CALC, got {mode!r}")
    ramulator = _get(parser, "run_presets", "UseRamulatorTrace") == "True"
    arch = "architecture_presets"
    sizes = {key: _int(parser, arch, key) for key in ("ArrayHeight", "ArrayWidth")}
    sizes.update(
        {
            key: _int(parser, arch, key)
            for key in ("IfmapSramSzkB", "FilterSramSzkB", "OfmapSramSzkB")
        }
    )
    offsets = Offsets(*(_int(parser, arch, f"{o}Offset") for o in ("Ifmap", "Filter", "Ofmap")))
    dataflow = _get(parser, arch, "Dataflow")
    requests = (_int(parser, arch, "ReadRequestBuffer"), _int(parser, arch, "WriteRequestBuffer"))
    layout = {
        key: _bool(parser, "layout", key) for key in ("IfmapCustomLayout", "FilterCustomLayout")
    }
    banks = {
        f"{o}{what}": _int(parser, "layout", f"{o}{what}")
        for o in ("Ifmap", "Filter")
        for what in ("SRAMBankBandwidth", "SRAMBankNum", "SRAMBankPort")
    }
    bandwidths = _bandwidths(parser) if mode == "USER" else ()
    if parser.has_section("network_presets"):
        _get(parser, arch, "TopologyCsvLoc")
    sparsity = _get(parser, "sparsity", "SparsitySupport").lower() == "true"
    return ScalesimConfig(
        run_name=run_name,
        array_rows=sizes["ArrayHeight"],
        array_cols=sizes["ArrayWidth"],
        ifmap_kb=sizes["IfmapSramSzkB"],
        filter_kb=sizes["FilterSramSzkB"],
        ofmap_kb=sizes["OfmapSramSzkB"],
        dataflow=dataflow,
        offsets=offsets,
        bandwidths=bandwidths,
        user_bandwidth=mode == "USER",
        ifmap_bank_bandwidth=banks["IfmapSRAMBankBandwidth"],
        ifmap_banks=banks["IfmapSRAMBankNum"],
        filter_bank_bandwidth=banks["FilterSRAMBankBandwidth"],
        filter_banks=banks["FilterSRAMBankNum"],
        ifmap_custom_layout=layout["IfmapCustomLayout"],
        filter_custom_layout=layout["FilterCustomLayout"],
        sparsity=sparsity,
        ramulator=ramulator,
        read_request_buffer=requests[0],
        write_request_buffer=requests[1],
    )


def read_scalesim_config(path: str | Path) -> ScalesimConfig:
    """Read a .cfg file of at most MAX_CONFIG_BYTES."""
    try:  # a regular file, within the limit, UTF-8 without a NUL (a device or a FIFO is refused)
        text = files.read_text(path, "SCALE-Sim config", MAX_CONFIG_BYTES)
    except files.FileError as exc:
        raise ScalesimConfigError(str(exc)) from None
    return parse_scalesim_config(text)
