"""Plug-ins by name, from an entry-point group: how autotune finds its oracles and samplers (and
workloads.formats its workload formats, in the same way).

A package declares a plug-in in its pyproject.toml, `[project.entry-points."GROUP"]`, as
`name = "module:OBJECT"`. autotune's own plug-ins are declared there too; a source tree that is
not installed (no entry points at all) falls back to the group's `built_in` mapping, which a test
holds equal to pyproject.toml's declarations."""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points
from typing import Mapping


def declared(group: str, built_in: Mapping[str, str]) -> dict[str, str]:
    """Name -> `module:OBJECT` of every plug-in of `group`, the built-in ones first."""
    return {**built_in, **{ep.name: ep.value for ep in entry_points(group=group)}}


def load(target: str, default_attribute: str) -> object:
    """The object `module:OBJECT` names (ImportError or AttributeError when it is not there)."""
    module_name, _, attribute = target.partition(":")
    return getattr(import_module(module_name), attribute or default_attribute)
