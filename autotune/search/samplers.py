"""autotune's own samplers, each a `SamplerSpec` registered in the entry-point group
`autotune.samplers` like a third-party one (pyproject.toml). Optuna loads when a sampler is made,
not when its spec is read (the command line's parser reads the specs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autotune.search.sampling import SamplerSpec

if TYPE_CHECKING:
    import optuna

    from autotune.search.problem import Search


def _guided(seed: int, search: Search) -> optuna.samplers.BaseSampler:
    from autotune.search.guided import GuidedSampler

    return GuidedSampler(search, seed)


def _tpe(seed: int, search: Search) -> optuna.samplers.BaseSampler:
    import optuna

    from autotune.search.tpe import history_cached

    # The same TPE, drawing the same points, with its history cached between trials.
    return history_cached(
        optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True, n_startup_trials=20)
    )


def _random(seed: int, search: Search) -> optuna.samplers.BaseSampler:
    import optuna

    return optuna.samplers.RandomSampler(seed=seed)


def _nsga2(seed: int, search: Search) -> optuna.samplers.BaseSampler:
    import optuna

    return optuna.samplers.NSGAIISampler(seed=seed, population_size=40)


GUIDED = SamplerSpec(
    "guided",
    "refinement around the best schedules, exploration by mutating them, conditional encoding",
    "conditional",
    _guided,
)
TPE = SamplerSpec("tpe", "multivariate TPE over every parameter of the flat encoding", "flat", _tpe)
RANDOM = SamplerSpec("random", "", "flat", _random)
# Every feasible point is enqueued, most promising first; random draws fill what is left.
GRID = SamplerSpec("grid", "every feasible point, most promising first", "flat", _random, True)
NSGA2 = SamplerSpec("nsga2", "", "flat", _nsga2)
