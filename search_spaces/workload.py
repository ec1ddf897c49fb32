"""Workloads: a weighted list of GEMMs (a model's layers), read from TOML, CSV, an ONNX model or
a SCALE-Sim topology (search_spaces/formats/), or named after a bundled network
(search_spaces/workloads/, e.g. `resnet50`).

TOML (Python 3.11's tomllib; on 3.10 the `tomli` package if installed):

    [[gemm]]
    name = "qkv"
    shape = "64x256x768"   # M x K x N: A is M x K, B is K x N
    weight = 1             # how many times the product runs per workload step

    source = "Conv"        # optional: the op the GEMM comes from
    layers = ["conv1"]     # optional: the model's layers that run it

CSV (any Python): a header `name,shape,weight`, then one GEMM per line; `#` starts a comment.
A .csv whose header is a SCALE-Sim topology's is read as one (formats/scalesim.py).

Every reader's workload passes `validate_workload`: at least one GEMM, names that are safe parts
of a file name (at most MAX_NAME characters) and unique, dimensions within int64 (MAX_DIM) and
weights within MAX_WEIGHT. Names written by a user are refused when too long; the importers
shorten the layer names they derive instead (formats/layers.py).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from search_spaces.gemm import DynamicShapeError, Gemm, Workload, WorkloadError  # noqa: F401 - also here
from search_spaces.validation import (  # noqa: F401 - also here
    MAX_DIM,
    MAX_NAME,
    MAX_WEIGHT,
    brief,
    check_name,
    check_size,
    check_weight,
    validate_workload,
)
from simcore.shape import parse_shape

FORMATS: tuple[str, ...] = (".toml", ".csv", ".onnx")
CSV_HEADER: tuple[str, ...] = ("name", "shape", "weight")
OPTIONAL_KEYS: tuple[str, ...] = ("source", "layers")
BUNDLED = Path(__file__).resolve().parent / "workloads"


def bundled_workloads() -> dict[str, Path]:
    """The bundled workloads by name (file stem)."""
    return {p.stem: p for p in sorted(BUNDLED.iterdir()) if p.suffix in (".toml", ".csv")}


def resolve_workload(path: str | Path) -> Path:
    """A file path, or the bundled workload of that name (`resnet50`)."""
    path = Path(path)
    if not path.exists() and not path.suffix and len(path.parts) == 1:
        bundled = bundled_workloads()
        if path.name in bundled:
            return bundled[path.name]
        raise WorkloadError(
            f"workload {path}: no such file, and no bundled workload of that name "
            f"(bundled: {', '.join(bundled)})"
        )
    return path


def load_workload(
    path: str | Path, input_shapes: dict[str, tuple[int, ...]] | None = None
) -> Workload:
    """Read and validate a workload: .toml, .csv (autotune's or a SCALE-Sim topology), .onnx, or a
    bundled network's name; WorkloadError with a one-line reason. `input_shapes` fixes an ONNX
    model's input shapes by input name."""
    path = resolve_workload(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise WorkloadError(
            f"workload {path}: unknown format {path.suffix or '(no suffix)'!r} "
            f"(use .toml, .csv or .onnx)"
        )
    if path.is_dir():
        raise WorkloadError(f"workload {path} is a directory, not a file")
    if not path.is_file():
        raise WorkloadError(f"workload file {path} not found")
    if input_shapes and suffix != ".onnx":
        raise WorkloadError(f"workload {path}: input shapes apply to ONNX models only")
    if suffix == ".onnx":
        from search_spaces.formats.onnx_graph import read_onnx

        return read_onnx(path, input_shapes)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's byte-order mark is not data
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkloadError(f"cannot read workload {path}: {exc}") from None
    if suffix == ".toml":
        return build_workload(path.stem, _toml_entries(text, path), str(path))
    from search_spaces.formats.scalesim import is_topology, read_topology

    if is_topology(text):
        return read_topology(text, path)
    return build_workload(path.stem, _csv_entries(text, path), str(path))


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
            f"{where}: unknown key(s) {', '.join(unknown)} "
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
        raise WorkloadError(f"{where} ({name}): source must be a string, got {source!r}")
    if not isinstance(layers, list) or not all(isinstance(layer, str) for layer in layers):
        raise WorkloadError(f"{where} ({name}): layers must be a list of strings")
    return Gemm(name, shape, weight, source, tuple(layers))


def _toml_entries(text: str, path: Path) -> list[dict[str, object]]:
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # 3.10: the same parser, as a package
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise WorkloadError(
                f"workload {path}: TOML needs Python 3.11 or the tomli package; "
                f"use the CSV format (name,shape,weight) instead"
            ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WorkloadError(f"workload {path}: invalid TOML: {exc}") from None
    extra = sorted(k for k in data if k != "gemm")
    if extra:
        raise WorkloadError(
            f"workload {path}: unknown table(s) {', '.join(extra)} (expected [[gemm]] entries)"
        )
    entries = data.get("gemm", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise WorkloadError(f"workload {path}: 'gemm' must be an array of tables ([[gemm]])")
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
            f"{','.join(repr(cell) for cell in header)}"
        )
    entries: list[dict[str, object]] = []
    for number, cells in enumerate(reader, start=2):
        if len(cells) != len(CSV_HEADER):
            raise WorkloadError(
                f"workload {path}, data line {number}: expected 3 fields (name,shape,weight), got {len(cells)}"
            )
        entries.append(dict(zip(CSV_HEADER, (c.strip() for c in cells))))
    return entries
