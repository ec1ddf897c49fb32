"""What a run is given besides its plan: how it runs (`RunOptions`). Loads nothing heavy: the
plan stage checks options before Optuna or the engine is imported."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from autotune import settings
from autotune.errors import PlanError
from autotune.search.sampling import DEFAULT_SAMPLER, spec

if TYPE_CHECKING:
    from autotune.run.plan import RunPlan
    from autotune.search.problem import Candidate


def verify_top_default(plan: RunPlan) -> int:
    """Entries verified by default: ten for one product; a workload uses each GEMM's winner."""
    return 10 if plan.single else 1


@dataclass(frozen=True)
class RunOptions:
    trials: int  # the finished trials each study holds when the run ends (a target)
    more_trials: int | None = None  # instead: this many trials more than each study holds
    sampler: str = DEFAULT_SAMPLER
    seed: int = 0
    study: str | None = None
    # A storage address (autotune.storage.locations); None: a journal per study under results/.
    storage: str | None = None
    results: Path = Path("results")
    workers: int = 1
    timeout: float | None = None
    heartbeat: int | None = None
    verify_top: int | None = None  # None: verify_top_default
    allow_sampler_change: bool = False
    starts: tuple[Candidate, ...] = ()  # starting points (exported schedules), run first
    # Also start from earlier studies' best on nearby problems (autotune.search.transfer).
    transfer: bool = False
    write: bool = True
    progress: bool = False
    all_trials: bool = False  # no stop at the proven lower bound
    max_memory: int | None = None  # bytes a run may need (None: 1 GiB)
    # What each worker process does first (the front end's logging); a module's function.
    worker_setup: Callable[[], None] | None = None


def check_options(options: RunOptions) -> None:
    """Each option as its setting's declaration takes it (autotune.settings), and the options
    that exclude each other."""
    from autotune.storage.locations import is_memory
    from autotune.storage.names import check_length

    for name in (
        "trials",
        "more_trials",
        "seed",
        "workers",
        "timeout",
        "heartbeat",
        "verify_top",
        "max_memory",
    ):
        settings.check(name, getattr(options, name))
    spec(options.sampler)  # an unknown sampler, named
    check_length(Path(options.results), "results folder", "results")
    if options.storage is not None and is_memory(options.storage) and options.workers > 1:
        raise PlanError(
            "an in-memory study lives in one process: several workers need a storage",
            setting="workers",
        )
