"""Workload formats by name, from the entry-point group `autotune.workloads`, and the one reader
that picks a file's format: by its suffix, and among the formats of one suffix by its content
(a SCALE-Sim topology is a .csv whose header is SCALE-Sim's).

A package adds a format by declaring, in its pyproject.toml,

    [project.entry-points."autotune.workloads"]
    mine = "my_package:FORMAT"

where `FORMAT` is a `WorkloadFormat`. The built-in TOML, CSV, SCALE-Sim and ONNX readers are
declared the same way; a source tree that is not installed (no entry points) finds them in
`BUILT_IN`, which a test holds equal to pyproject.toml's declarations. Bundled networks
(workloads/networks/, e.g. `resnet50`) are found by name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from workloads.model import Workload, WorkloadError

if TYPE_CHECKING:
    from workloads.graph import Graph

GROUP = "autotune.workloads"
BUILT_IN = {
    "toml": "workloads.text:TOML",
    "csv": "workloads.text:CSV",
    "scalesim": "workloads.scalesim:FORMAT",
    "onnx": "workloads.onnx_graph:FORMAT",
}
BUNDLED = Path(__file__).resolve().parent / "networks"

Reader = Callable[[Path, Mapping[str, tuple[int, ...]] | None], Workload]


@dataclass(frozen=True)
class WorkloadFormat:
    """One way to read a workload file."""

    name: str
    suffixes: tuple[str, ...]  # the file suffixes it reads, lower case with the dot
    read: Reader  # (path, input shapes by input name or None) -> the validated workload
    title: str  # what the format is called in messages: "ONNX"
    help: str  # how help texts name it: "an ONNX model"
    # Claims a file among the formats of its suffix by its content; None: the suffix's default.
    sniff: Callable[[Path], bool] | None = None
    takes_input_shapes: bool = False  # a model with inputs whose shapes can be given
    # (path, input shapes) -> the network graph; None: the GEMMs read as a graph of GEMMs
    read_graph: Callable[[Path, Mapping[str, tuple[int, ...]] | None], Graph] | None = None


@functools.lru_cache(maxsize=1)
def installed() -> tuple[WorkloadFormat, ...]:
    """Every installed format, the built-in ones first."""
    declared = {**BUILT_IN, **{ep.name: ep.value for ep in entry_points(group=GROUP)}}
    found = []
    for name, target in declared.items():
        module, _, attribute = target.partition(":")
        spec = getattr(import_module(module), attribute or "FORMAT")
        if not isinstance(spec, WorkloadFormat):
            raise TypeError(f"workload format {name!r} ({target}) is not a WorkloadFormat")
        found.append(spec)
    return tuple(found)


def suffixes() -> tuple[str, ...]:
    return tuple(dict.fromkeys(s for f in installed() for s in f.suffixes))


def described() -> str:
    """The formats as help texts name them: "a .toml list of weighted GEMMs, ..., an ONNX model"."""
    return ", ".join(f.help for f in installed())


def format_of(path: Path) -> WorkloadFormat:
    """The format that reads `path`: one that claims it by its content, else its suffix's."""
    suffix = path.suffix.lower()
    candidates = [f for f in installed() if suffix in f.suffixes]
    if not candidates:
        known = list(suffixes())
        shown = ", ".join(known[:-1]) + " or " + known[-1] if len(known) > 1 else known[0]
        raise WorkloadError(
            f"workload {path}: unknown format {path.suffix or '(no suffix)'!r} (use {shown})"
        )
    for candidate in candidates:
        if candidate.sniff is not None and candidate.sniff(path):
            return candidate
    plain = [f for f in candidates if f.sniff is None]
    return plain[0] if plain else candidates[0]


def bundled_workloads() -> dict[str, Path]:
    """The bundled workloads by name (file stem)."""
    readable = suffixes()
    return {p.stem: p for p in sorted(BUNDLED.iterdir()) if p.suffix in readable}


def _graph_names() -> list[str]:
    from workloads import networks

    return list(networks.NETWORKS)


def resolve_workload(path: str | Path) -> Path:
    """A file path, or the bundled workload of that name (`resnet50`)."""
    path = Path(path)
    if not path.exists() and not path.suffix and len(path.parts) == 1:
        bundled = bundled_workloads()
        if path.name in bundled:
            return bundled[path.name]
        raise WorkloadError(
            f"workload {path}: no such file, and no bundled workload of that name "
            f"(bundled: {', '.join(bundled)}; built as graphs: {', '.join(_graph_names())})"
        )
    return path


def load_workload(
    path: str | Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None
) -> Workload:
    """Read and validate a workload file of any installed format, or a bundled network by name;
    WorkloadError with a one-line reason. `input_shapes` fixes a model's input shapes by input
    name (for the formats that take them). A network built as a graph (workloads.networks) and
    not bundled as a GEMM list gives its graph's GEMMs, its settings at their defaults."""
    if isinstance(path, str) and path not in bundled_workloads() and not Path(path).exists():
        from workloads import networks

        if path in networks.NETWORKS:
            from workloads.network import gemm_workload

            return gemm_workload(networks.build(path))
    path = resolve_workload(path)
    if path.suffix.lower() not in suffixes():
        format_of(path)  # the unknown format, named
    if path.is_dir():
        raise WorkloadError(f"workload {path} is a directory, not a file")
    if not path.exists():
        raise WorkloadError(f"workload file {path} not found")
    if not path.is_file():  # a device or a FIFO: never opened (a FIFO's open would block)
        raise WorkloadError(f"workload {path} is a device or a FIFO, not a regular file")
    found = format_of(path)
    if input_shapes and not found.takes_input_shapes:
        takers = " and ".join(f.title for f in installed() if f.takes_input_shapes)
        raise WorkloadError(f"workload {path}: input shapes apply to {takers} models only")
    return found.read(path, input_shapes)
