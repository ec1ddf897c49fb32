"""The samplers a study may run, by name, from the entry-point group `autotune.samplers`.

A sampler is a `SamplerSpec`: its name, one line of help, the encoding its trials suggest
parameters in (autotune.search.problem.ENCODINGS: "flat", every parameter of the family on every
trial; or "conditional", a parameter only where it matters), the factory that makes it, and
whether the run enqueues every feasible point first (`enumerates`, the grid). A package adds one
by declaring, in its pyproject.toml,

    [project.entry-points."autotune.samplers"]
    mine = "my_package:SAMPLER"

autotune's own (autotune.search.samplers) are declared the same way; `BUILT_IN` is what a source
tree that is not installed falls back to (a test holds it equal to pyproject.toml)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from autotune import plugins
from autotune.errors import PlanError

if TYPE_CHECKING:
    import optuna

    from autotune.search.problem import Search

GROUP = "autotune.samplers"
DEFAULT_SAMPLER = "guided"
BUILT_IN = {
    "guided": "autotune.search.samplers:GUIDED",
    "tpe": "autotune.search.samplers:TPE",
    "random": "autotune.search.samplers:RANDOM",
    "grid": "autotune.search.samplers:GRID",
    "nsga2": "autotune.search.samplers:NSGA2",
}


@dataclass(frozen=True)
class SamplerSpec:
    name: str
    help: str  # one phrase for `--sampler`'s help ("": its name says it)
    encoding: str  # how its trials suggest parameters: "flat" or "conditional"
    factory: Callable[[int, Search], optuna.samplers.BaseSampler]  # (seed, search) -> sampler
    enumerates: bool = False  # every feasible point is enqueued before it draws (a grid)


@functools.lru_cache(maxsize=1)
def specs() -> dict[str, SamplerSpec]:
    """Every installed sampler by name, the built-in ones first."""
    found = {}
    for name, target in plugins.declared(GROUP, BUILT_IN).items():
        spec = plugins.load(target, "SAMPLER")
        if not isinstance(spec, SamplerSpec):
            raise TypeError(f"sampler {name!r} ({target}) is not a SamplerSpec")
        found[name] = spec
    return found


def names() -> tuple[str, ...]:
    return tuple(specs())


def spec(name: str) -> SamplerSpec:
    """The sampler `name`; PlanError (naming `sampler`) when none is installed so."""
    found = specs().get(name)
    if found is None:
        raise PlanError(
            f"unknown sampler {name!r} (known: {', '.join(specs())})", setting="sampler"
        )
    return found


def encoding_for(sampler: str) -> str:
    return spec(sampler).encoding


def make_sampler(name: str, seed: int, search: Search) -> optuna.samplers.BaseSampler:
    """The sampler `name`, seeded, for `search` (the guided sampler proposes its candidates)."""
    return spec(name).factory(seed, search)


def described() -> str:
    """The samplers as `--sampler`'s help lists them."""
    parts = []
    for found in specs().values():
        about = found.help
        if found.name == DEFAULT_SAMPLER:
            about = f"default: {about}" if about else "default"
        parts.append(f"{found.name} ({about})" if about else found.name)
    return ", ".join(parts[:-1]) + " or " + parts[-1] if len(parts) > 1 else parts[0]


def using(encoding: str) -> list[str]:
    """The samplers whose trials suggest parameters in `encoding`."""
    return [name for name, found in specs().items() if found.encoding == encoding]
