"""The samplers a study may run, and the encoding each suggests its parameters in.

`guided` (the default) refines around the best schedules and explores by redrawing a few
parameters of one of them, over the conditional encoding (autotune.search.guided; multivariate TPE when
there are several objectives). `tpe` is
multivariate TPE with groups over the flat encoding (every parameter of the family on every
trial), so its studies resume and its figures reproduce. `random`, `grid` and `nsga2` also keep
the flat encoding."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autotune.errors import PlanError

if TYPE_CHECKING:
    import optuna

    from autotune.search.problem import Search

DEFAULT_SAMPLER = "guided"
SAMPLERS: tuple[str, ...] = ("guided", "tpe", "random", "grid", "nsga2")
ENCODING: dict[str, str] = {
    "guided": "conditional",
    "tpe": "flat",
    "random": "flat",
    "grid": "flat",
    "nsga2": "flat",
}
HELP = (
    "guided (default: refinement around the best schedules, exploration by mutating them, conditional encoding), "
    "tpe (multivariate TPE over every parameter of the flat encoding), random, "
    "grid (every feasible point, most promising first) or nsga2"
)


def encoding_for(sampler: str) -> str:
    if sampler not in ENCODING:
        raise PlanError(f"unknown sampler {sampler!r} (known: {', '.join(SAMPLERS)})")
    return ENCODING[sampler]


def make_sampler(name: str, seed: int, search: Search | None = None) -> optuna.samplers.BaseSampler:
    """The sampler `name`, seeded; `guided` needs the search it proposes candidates of."""
    import optuna  # the samplers' names and encodings above are read without it (the parser)

    from autotune.search.guided import GuidedSampler
    from autotune.search.tpe import history_cached

    encoding_for(name)
    if name == "guided":
        if search is None:
            raise ValueError("the guided sampler needs the search it samples")
        return GuidedSampler(search, seed)
    if name == "tpe":
        # The same TPE, drawing the same points, with its history cached between trials.
        return history_cached(
            optuna.samplers.TPESampler(
                seed=seed, multivariate=True, group=True, n_startup_trials=20
            )
        )
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=40)
    return optuna.samplers.RandomSampler(
        seed=seed
    )  # random; grid: every feasible point is enqueued, random fills gaps
