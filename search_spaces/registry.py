"""Spaces by name. Adding a space: write its module, then add one line here."""

from __future__ import annotations

import importlib

from search_spaces.base import Family, Space
from search_spaces.domains import Param

# name -> module that defines SPACE
SPACE_MODULES: dict[str, str] = {
    "chapter": "search_spaces.chapter",
    "general": "search_spaces.general",
    "strips": "search_spaces.strips",
    "delayed": "search_spaces.delayed",
    "systolic": "search_spaces.systolic",
    "systolic-blocked": "search_spaces.systolic_blocked",
}
# The delayed space holds the general and strip orders with every store delay, the undelayed
# among them, so the default searches it in place of the plain two.
DEFAULT_SPACES: tuple[str, ...] = ("chapter", "delayed")
LEGACY_SPACES: tuple[str, ...] = (
    "chapter",
    "general",
)  # the flat TPE's spaces: their studies keep their names


class SpaceError(ValueError):
    """An unknown space, or spaces whose parameters clash."""


def available() -> list[str]:
    names = []
    for name in SPACE_MODULES:
        try:
            get(name)
        except SpaceError:
            continue
        names.append(name)
    return names


def get(name: str) -> Space:
    if name not in SPACE_MODULES:
        raise SpaceError(f"unknown search space {name!r} (known: {', '.join(SPACE_MODULES)})")
    try:
        module = importlib.import_module(SPACE_MODULES[name])
    except ModuleNotFoundError as exc:
        raise SpaceError(f"search space {name!r} is not installed ({exc})") from None
    return module.SPACE


def families(names: tuple[str, ...] | list[str]) -> tuple[Family, ...]:
    """The families of the named spaces, in order; family names must be unique."""
    found: list[Family] = []
    for name in names:
        for family in get(name).families:
            if any(f.name == family.name for f in found):
                raise SpaceError(f"family {family.name!r} is defined by two spaces")
            found.append(family)
    if not found:
        raise SpaceError("no schedule family to search")
    return tuple(found)


def check_shared_params(params_by_family: dict[str, tuple[Param, ...]]) -> None:
    """A parameter name shared by families must have one domain (Optuna keys on the name)."""
    seen: dict[str, tuple[str, Param]] = {}
    for family, params in params_by_family.items():
        for param in params:
            if param.name in seen and seen[param.name][1].domain != param.domain:
                raise SpaceError(
                    f"parameter {param.name!r} has different domains in families "
                    f"{seen[param.name][0]!r} and {family!r}"
                )
            seen.setdefault(param.name, (family, param))


def find_family(name: str) -> Family:
    """A family by name, from any registered space (for rebuilding a leaderboard entry)."""
    for space in available():
        for family in get(space).families:
            if family.name == name:
                return family
    raise SpaceError(f"unknown schedule family {name!r}")
