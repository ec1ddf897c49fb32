"""Oracles by name, from the entry-point group `autotune.oracles`.

A package adds an oracle by declaring, in its pyproject.toml,

    [project.entry-points."autotune.oracles"]
    toy = "toy_oracle:ORACLE"

where `ORACLE` is an `Oracle` instance. autotune's own GA-1 and systolic oracles are declared
the same way. A source tree that is not installed (no entry points) still finds those two.
"""

from __future__ import annotations

import functools
from importlib import import_module
from importlib.metadata import entry_points

from autotune.errors import OracleError
from autotune.oracles.base import Metrics, Oracle, Work
from search_spaces.base import Family

GROUP = "autotune.oracles"
DEFAULT_ORACLE = "ga1"
# What an uninstalled source tree falls back to; an installed autotune reads its entry points.
_BUILT_IN = {"ga1": "autotune.oracles.ga1:ORACLE", "systolic": "autotune.oracles.systolic:ORACLE"}

__all__ = [
    "DEFAULT_ORACLE",
    "GROUP",
    "Metrics",
    "Oracle",
    "OracleError",
    "Work",
    "family_of",
    "get",
    "names",
]


@functools.lru_cache(maxsize=1)
def _declared() -> dict[str, str]:
    return {**_BUILT_IN, **{ep.name: ep.value for ep in entry_points(group=GROUP)}}


def names() -> list[str]:
    """The names of the oracles installed."""
    return sorted(_declared())


@functools.lru_cache(maxsize=None)
def get(name: str) -> Oracle:
    """The oracle `name`; OracleError when none is installed under that name."""
    target = _declared().get(name)
    if target is None:
        raise OracleError(
            f"unknown oracle {name!r} (installed: {', '.join(names())})", setting="oracle"
        )
    module_name, _, attribute = target.partition(":")
    try:
        found = getattr(import_module(module_name), attribute or "ORACLE")
    except (ImportError, AttributeError) as exc:
        raise OracleError(
            f"oracle {name!r} ({target}) cannot be loaded: {exc}", setting="oracle"
        ) from None
    if not isinstance(found, Oracle):
        raise OracleError(f"oracle {name!r} ({target}) is not an autotune Oracle", setting="oracle")
    return found


def family_of(name: str, oracle: str | None = None) -> tuple[Oracle, Family] | None:
    """The oracle and family of a recorded entry, by the family's name (the named oracle first,
    then every installed one); None for a family no installed oracle has."""
    order = ([oracle] if oracle else []) + [n for n in names() if n != oracle]
    for candidate in order:
        try:
            found = get(candidate)
        except OracleError:
            continue
        family = found.family(name)
        if family is not None:
            return found, family
    return None
