"""autotune's own workload formats: a list of weighted GEMMs as TOML or as CSV.

TOML (Python 3.11's tomllib; on 3.10 the `tomli` package if installed):

    [[gemm]]
    name = "qkv"
    shape = "64x256x768"   # M x K x N: A is M x K, B is K x N
    weight = 1             # how many times the product runs per workload step

    source = "Conv"        # optional: the op the GEMM comes from
    layers = ["conv1"]     # optional: the model's layers that run it

CSV (any Python): a header `name,shape,weight`, then one GEMM per line; `#` starts a comment.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Mapping

from simcore import files
from simcore.shape import parse_shape
from workloads.formats import WorkloadFormat
from workloads.model import Gemm, Workload, WorkloadError
from workloads.validation import (
    check_count,
    check_name,
    check_weight,
    clipped,
    printable,
    validate_workload,
)

CSV_HEADER: tuple[str, ...] = ("name", "shape", "weight")
WORKLOAD_BYTES = 16 << 20  # far past any network's list of GEMMs (MAX_GEMMS lines of them)
OPTIONAL_KEYS: tuple[str, ...] = ("source", "layers")


def read_text(path: Path) -> str:
    """A workload file's text: a regular file of at most WORKLOAD_BYTES of UTF-8 (simcore.files);
    a spreadsheet's byte-order mark is not data."""
    try:
        return files.read_text(path, "workload", WORKLOAD_BYTES)
    except files.FileError as exc:
        raise WorkloadError(str(exc)) from None


def read_toml(path: Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Workload:
    return build_workload(path.stem, _toml_entries(read_text(path), path), str(path))


def read_csv(path: Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Workload:
    return build_workload(path.stem, _csv_entries(read_text(path), path), str(path))


def build_workload(name: str, entries: list[dict[str, object]], source: str) -> Workload:
    """Validate raw entries (dicts with name, shape, weight) and build the workload."""
    gemms = tuple(
        _gemm(entry, f"{source}, GEMM {index}") for index, entry in enumerate(entries, start=1)
    )
    return validate_workload(Workload(name, gemms), source)


def _gemm(entry: dict[str, object], where: str) -> Gemm:
    unknown = sorted(set(entry) - set(CSV_HEADER) - set(OPTIONAL_KEYS))
    if unknown:
        raise WorkloadError(
            f"{where}: unknown key(s) {clipped(', '.join(unknown))} "
            f"(expected name, shape, weight; optional source, layers)"
        )
    missing = [k for k in CSV_HEADER if entry.get(k) in (None, "")]
    if missing:
        raise WorkloadError(f"{where}: missing {', '.join(missing)}")
    raw_name = entry["name"]
    name = check_name(raw_name.strip() if isinstance(raw_name, str) else raw_name, where)
    try:
        shape = parse_shape(str(entry["shape"]))
    except ValueError as exc:  # ShapeError, or int()'s limit on very long digit strings
        raise WorkloadError(f"{where} ({name}): {exc}") from None
    weight = check_weight(entry["weight"], f"{where} ({name})")
    source = entry.get("source", "")
    layers = entry.get("layers", [])
    if not isinstance(source, str):
        raise WorkloadError(f"{where} ({name}): source must be a string, got {clipped(source)}")
    if not isinstance(layers, list) or not all(isinstance(layer, str) for layer in layers):
        raise WorkloadError(f"{where} ({name}): layers must be a list of strings")
    return Gemm(name, shape, weight, source, tuple(layers))


def _toml_entries(text: str, path: Path) -> list[dict[str, object]]:
    try:
        data = files.parse_toml(text, "it")
    except files.FileError as exc:  # "it: not valid TOML: ..." or a bound passed
        reason = str(exc).removeprefix("it: ").replace("not valid TOML", "invalid TOML", 1)
        raise WorkloadError(f"workload {path}: {reason}") from None
    extra = sorted(k for k in data if k != "gemm")
    if extra:
        raise WorkloadError(
            f"workload {path}: unknown table(s) {clipped(', '.join(extra))} (expected [[gemm]] entries)"
        )
    entries = data.get("gemm", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise WorkloadError(f"workload {path}: 'gemm' must be an array of tables ([[gemm]])")
    check_count(len(entries), f"workload {path}")
    return entries


def _csv_entries(text: str, path: Path) -> list[dict[str, object]]:
    lines = [
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        return []
    reader = csv.reader(io.StringIO("\n".join(lines)))
    header = tuple(cell.strip().lower() for cell in next(reader))
    if header != CSV_HEADER:
        raise WorkloadError(
            f"workload {path}: the CSV header must be {','.join(CSV_HEADER)} (or a SCALE-Sim "
            f"topology's: Layer name, IFMAP Height, ... or Layer, M, N, K), got "
            f"{printable(','.join(repr(cell) for cell in header), 200)}"
        )
    check_count(len(lines) - 1, f"workload {path}")
    entries: list[dict[str, object]] = []
    for number, cells in enumerate(reader, start=2):
        if len(cells) != len(CSV_HEADER):
            raise WorkloadError(
                f"workload {path}, data line {number}: expected 3 fields (name,shape,weight), got {len(cells)}"
            )
        entries.append(dict(zip(CSV_HEADER, (c.strip() for c in cells))))
    return entries


TOML = WorkloadFormat("toml", (".toml",), read_toml, "TOML", "a .toml list of weighted GEMMs")
CSV = WorkloadFormat("csv", (".csv",), read_csv, "CSV", "a .csv list of weighted GEMMs")
