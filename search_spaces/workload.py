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
import math
import re
from pathlib import Path

from search_spaces.gemm import DynamicShapeError, Gemm, Workload, WorkloadError  # noqa: F401 - also here
from simcore.shape import COUNT_LIMIT, parse_shape

FORMATS: tuple[str, ...] = (".toml", ".csv", ".onnx")
CSV_HEADER: tuple[str, ...] = ("name", "shape", "weight")
OPTIONAL_KEYS: tuple[str, ...] = ("source", "layers")
BUNDLED = Path(__file__).resolve().parent / "workloads"
# Occurrences per step: more than any model has, few enough that weight x cycles stays finite.
MAX_WEIGHT = 1e9
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
MAX_NAME = 128  # a GEMM name becomes part of a study folder's name (at most 255 bytes)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # becomes part of a study name and a file path
# No dimension past int64: the simulators hold sizes in int64 arrays and totals in floats.
MAX_DIM = COUNT_LIMIT


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


def validate_workload(workload: Workload, source: str) -> Workload:
    """The checks every format's GEMMs pass, whichever reader built them; WorkloadError with a
    one-line reason."""
    if not workload.gemms:
        raise WorkloadError(f"workload {source} is empty: it needs at least one GEMM")
    seen: set[str] = set()
    for index, gemm in enumerate(workload.gemms, start=1):
        where = f"{source}, GEMM {index}"
        check_name(gemm.name, where)
        for axis, size in zip("MKN", (gemm.shape.m, gemm.shape.k, gemm.shape.n)):
            check_size(size, f"dimension {axis}", f"{where} ({gemm.name})")
        check_weight(gemm.weight, f"{where} ({gemm.name})")
        if gemm.name in seen:
            raise WorkloadError(f"workload {source}: GEMM name {gemm.name!r} appears twice")
        seen.add(gemm.name)
    return workload


def check_name(name: object, where: str) -> str:
    """A GEMM name: a string of safe file-name characters, at most MAX_NAME long."""
    if not isinstance(name, str):
        raise WorkloadError(f"{where}: name must be a string, got {name!r}")
    if not _NAME.fullmatch(name):  # match() lets '$' pass a trailing newline
        raise WorkloadError(f"{where}: name {name!r} must be letters, digits, '_', '-' or '.'")
    if len(name) > MAX_NAME:  # it becomes part of a study's folder name
        raise WorkloadError(f"{where}: name {name[:20]!r}... is longer than {MAX_NAME} characters")
    return name


def check_size(value: int, what: str, where: str) -> int:
    """A size within int64 (MAX_DIM)."""
    if value > MAX_DIM:
        raise WorkloadError(f"{where}: {what} {brief(value)} is too large (at most {MAX_DIM})")
    return value


def brief(value: int | float) -> str:
    """A number for a one-line message; a huge integer as its first digits and its length (it
    has no float, and str() of more than 4300 digits raises)."""
    if not isinstance(value, int):
        return f"{value:g}"
    size = abs(value)
    if size.bit_length() <= 100:
        return str(value)
    digits = int(math.log10(size)) + 1
    while 10 ** (digits - 1) > size:  # log10 of a huge int can be off by one
        digits -= 1
    while 10**digits <= size:
        digits += 1
    lead = size // 10 ** (digits - 6)
    return f"{'-' if value < 0 else ''}{lead}... ({digits} digits)"


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


def check_weight(raw: object, where: str) -> float:
    """A weight as a float: a positive finite number, at most MAX_WEIGHT."""
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
        raise WorkloadError(f"{where}: weight must be positive, got {brief(raw)}")
    if raw > MAX_WEIGHT:
        raise WorkloadError(
            f"{where}: weight {brief(raw)} is too large (at most {MAX_WEIGHT:g} occurrences per step, "
            f"so that weighted cycles stay finite)"
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
