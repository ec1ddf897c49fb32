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
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from simcore.shape import Shape, ShapeError, parse_shape

FORMATS: tuple[str, ...] = (".toml", ".csv", ".onnx")
CSV_HEADER: tuple[str, ...] = ("name", "shape", "weight")
OPTIONAL_KEYS: tuple[str, ...] = ("source", "layers")
BUNDLED = Path(__file__).resolve().parent / "workloads"
# Occurrences per step: more than any model has, few enough that weight x cycles stays finite.
MAX_WEIGHT = 1e9
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
MAX_NAME = 128  # a GEMM name becomes part of a study folder's name (at most 255 bytes)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # becomes part of a study name and a file path


class WorkloadError(ValueError):
    """A workload file is missing, malformed, or describes no valid GEMM."""


class DynamicShapeError(WorkloadError):
    """A model input has a dimension that is not fixed, and no shape was given for it."""

    def __init__(self, message: str, input_name: str, dims: tuple[int | None, ...]) -> None:
        super().__init__(message)
        self.input_name = input_name
        self.dims = dims  # None where the dimension is dynamic


@dataclass(frozen=True)
class Gemm:
    name: str
    shape: Shape
    weight: float  # occurrences per workload step; the objective sums weight x cycles
    source: str = ""  # the op it comes from (Conv, MatMul, ...), if known
    layers: tuple[str, ...] = ()  # the model's layers that run it, if known (merged layers)

    @property
    def macs(self) -> int:
        """Multiply-accumulates of one run."""
        return self.shape.m * self.shape.k * self.shape.n

    @property
    def label(self) -> str:
        return f"{self.name} ({self.shape} x{self.weight:g})"


@dataclass(frozen=True)
class Workload:
    name: str
    gemms: tuple[Gemm, ...]
    summary: tuple[str, ...] = ()  # what an importer read besides the GEMMs (other ops)
    warnings: tuple[str, ...] = ()  # what it could not turn into GEMMs

    def weighted(self, cycles: dict[str, int | float]) -> float:
        """The workload's objective: sum of weight x cycles, by GEMM name."""
        return float(sum(g.weight * cycles[g.name] for g in self.gemms))


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
    if not entries:
        raise WorkloadError(f"workload {source} is empty: it needs at least one GEMM")
    gemms: list[Gemm] = []
    for index, entry in enumerate(entries, start=1):
        gemms.append(_gemm(entry, f"{source}, GEMM {index}"))
    seen: set[str] = set()
    for gemm in gemms:
        if gemm.name in seen:
            raise WorkloadError(f"workload {source}: GEMM name {gemm.name!r} appears twice")
        seen.add(gemm.name)
    return Workload(name, tuple(gemms))


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
    name = str(entry["name"]).strip()
    if not _NAME.match(name):
        raise WorkloadError(f"{where}: name {name!r} must be letters, digits, '_', '-' or '.'")
    if len(name) > MAX_NAME:  # it becomes part of a study's folder name
        raise WorkloadError(f"{where}: name {name[:20]!r}... is longer than {MAX_NAME} characters")
    try:
        shape = parse_shape(str(entry["shape"]))
    except ShapeError as exc:
        raise WorkloadError(f"{where} ({name}): {exc}") from None
    weight = _weight(entry["weight"], f"{where} ({name})")
    source = entry.get("source", "")
    layers = entry.get("layers", [])
    if not isinstance(source, str):
        raise WorkloadError(f"{where} ({name}): source must be a string, got {source!r}")
    if not isinstance(layers, list) or not all(isinstance(layer, str) for layer in layers):
        raise WorkloadError(f"{where} ({name}): layers must be a list of strings")
    return Gemm(name, shape, weight, source, tuple(layers))


def _weight(raw: object, where: str) -> float:
    if isinstance(raw, bool):
        raise WorkloadError(f"{where}: weight must be a positive number, got {raw!r}")
    if isinstance(raw, str):
        if not _NUMBER.fullmatch(
            raw.strip()
        ):  # float() would take 'inf', '1_0' and other scripts' digits
            raise WorkloadError(f"{where}: weight must be a positive number, got {raw!r}")
        raw = float(raw.strip())
    if not isinstance(raw, (int, float)) or raw != raw or raw in (float("inf"), float("-inf")):
        raise WorkloadError(f"{where}: weight must be a positive number, got {raw!r}")
    if raw <= 0:
        raise WorkloadError(f"{where}: weight must be positive, got {raw:g}")
    if raw > MAX_WEIGHT:
        raise WorkloadError(
            f"{where}: weight {raw:g} is too large (at most {MAX_WEIGHT:g} occurrences per step, so that "
            f"weighted cycles stay finite)"
        )
    return float(raw)


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
            f"workload {path}: the CSV header must be {','.join(CSV_HEADER)}, got "
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
