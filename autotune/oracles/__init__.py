"""Oracles by name, from the entry-point group `autotune.oracles`.

A package adds an oracle by declaring, in its pyproject.toml,

    [project.entry-points."autotune.oracles"]
    toy = "toy_oracle:ORACLE"

where `ORACLE` is an `Oracle` instance. autotune's own GA-1 and systolic oracles are declared
the same way (`BUILT_IN` is what a source tree that is not installed falls back to; a test holds
it equal to pyproject.toml). What an oracle may do besides its core is a capability
(autotune.oracles.capabilities), asked for with `oracle.capability(Kind)`.
"""

from __future__ import annotations

import functools
from pathlib import Path

from autotune import plugins
from autotune.errors import EvaluationRefused, Infeasible, OracleError
from autotune.oracles.base import Metrics, Oracle, configured
from autotune.oracles.measures import Measure
from search_spaces.base import Family

GROUP = "autotune.oracles"
DEFAULT_ORACLE = "ga1"
BUILT_IN = {"ga1": "autotune.oracles.ga1:ORACLE", "systolic": "autotune.oracles.systolic:ORACLE"}

__all__ = [
    "DEFAULT_ORACLE",
    "GROUP",
    "EvaluationRefused",
    "Infeasible",
    "Measure",
    "Metrics",
    "Oracle",
    "OracleError",
    "configured",
    "family_of",
    "get",
    "of_identity",
    "names",
]


@functools.lru_cache(maxsize=1)
def _declared() -> dict[str, str]:
    return plugins.declared(GROUP, BUILT_IN)


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
    try:
        found = plugins.load(target, "ORACLE")
    except (ImportError, AttributeError) as exc:
        raise OracleError(
            f"oracle {name!r} ({target}) cannot be loaded: {exc}", setting="oracle"
        ) from None
    if not isinstance(found, Oracle):
        raise OracleError(f"oracle {name!r} ({target}) is not an autotune Oracle", setting="oracle")
    return found


def of_identity(name: str) -> Oracle:
    """The oracle a study's identity names: by its name, or (a co-design) by the name its
    MachineSearch gives co-design studies; OracleError when none is installed."""
    from autotune.oracles.capabilities import MachineSearch

    if name in _declared():
        return get(name)
    for candidate in names():
        try:
            searcher = get(candidate).capability(MachineSearch)
        except OracleError:
            continue
        if searcher is not None and searcher.codesign_oracle == name:
            return get(candidate)
    raise OracleError(f"no installed oracle makes studies of {name!r}", setting="oracle")


def family_of(
    name: str, oracle: str | None = None, study_folder: Path | None = None
) -> tuple[Oracle, Family] | None:
    """The oracle and family of a recorded entry, by the family's name (the named oracle first,
    then every installed one); None for a family no installed oracle has. `study_folder`: the
    results folder of the entry's study, where the schedules imported into it are kept."""
    order = ([oracle] if oracle else []) + [n for n in names() if n != oracle]
    for candidate in order:
        try:
            found = configured(get(candidate), study_folder=study_folder)
        except OracleError:
            continue
        family = found.family(name)
        if family is not None:
            return found, family
    return None
