"""A workload format registers in the entry-point group `autotune.workloads`, as a package does,
and every reader of workloads finds it: loading, the help texts, the unknown-suffix message.
The built-in formats register the same way (pyproject.toml), and the list an uninstalled source
tree falls back to says the same."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import workloads.formats as registry
from tests.helpers.plugins import install
from workloads import load_workload

ROOT = Path(__file__).resolve().parents[2]

# The format of docs/extending/workload.md.
JSON_FORMAT = """
import json
from pathlib import Path
from typing import Mapping

from workloads import Workload, WorkloadError, WorkloadFormat, build_workload


def read_json(path: Path, input_shapes: Mapping[str, tuple[int, ...]] | None) -> Workload:
    try:
        layers = json.loads(path.read_text(encoding="utf-8"))["layers"]
    except (OSError, ValueError, KeyError) as exc:
        raise WorkloadError(f"workload {path}: not a layer list ({exc})") from None
    entries = [
        {
            "name": layer["name"],
            "shape": f"{layer['m']}x{layer['k']}x{layer['n']}",
            "weight": layer.get("count", 1),
        }
        for layer in layers
    ]
    return build_workload(path.stem, entries, str(path))


PLUGIN = WorkloadFormat("json", (".json",), read_json, "JSON", "a .json list of layers")
"""


@pytest.fixture
def json_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install(tmp_path / "site", monkeypatch, registry.GROUP, "json", "my_formats", JSON_FORMAT)
    registry.installed.cache_clear()
    yield tmp_path
    registry.installed.cache_clear()
    sys.modules.pop("my_formats", None)


def test_a_registered_format_reads_its_files(json_format: Path) -> None:
    path = json_format / "layers.json"
    path.write_text(
        '{"layers": [{"name": "qkv", "m": 64, "k": 256, "n": 768},'
        ' {"name": "scores", "m": 64, "k": 64, "n": 64, "count": 4}]}'
    )
    workload = load_workload(path)
    assert [g.label for g in workload.gemms] == ["qkv (64x256x768 x1)", "scores (64x64x64 x4)"]
    assert "a .json list of layers" in registry.described()
    assert registry.suffixes()[-1] == ".json"


def test_the_cli_help_names_a_registered_format(json_format: Path) -> None:
    from autotune.cli.workloads import workload_help

    assert "a .json list of layers" in workload_help()


def test_an_unknown_suffix_names_every_installed_one(json_format: Path) -> None:
    path = json_format / "layers.yaml"
    path.write_text("layers: []")
    with pytest.raises(ValueError, match=r"use \.toml, \.csv, \.onnx or \.json\)"):
        load_workload(path)


def test_the_built_in_formats_are_declared_once() -> None:
    """The source tree's fallback list is pyproject.toml's entry points, in the same order."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared[registry.GROUP] == registry.BUILT_IN
