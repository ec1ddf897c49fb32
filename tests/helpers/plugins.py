"""Registering a plug-in the way an installed package does: a distribution on sys.path whose
entry_points.txt names the plug-in, and its module beside it. Nothing is installed; the path and
the registries' caches are restored by the caller's monkeypatch."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest


def install(
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    group: str,
    name: str,
    module: str,
    source: str,
) -> None:
    """Put `module` (its `source`) and a distribution declaring `name = module:...` in `group`
    under `folder`, and `folder` first on sys.path. `source` defines the object the entry point
    names: the entry point is `module:PLUGIN`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    info = folder / f"{module}_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {module}-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[{group}]\n{name} = {module}:PLUGIN\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
