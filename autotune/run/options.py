"""What a run is given besides its plan, and what it gives back: the run's options, one
study's settings (what a worker process needs to open it), and the outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import optuna
import pandas as pd

from autotune.errors import PlanError
from autotune.run.plan import RunPlan
from autotune.search.problem import Candidate, Search
from autotune.search.sampling import DEFAULT_SAMPLER, encoding_for
from autotune.storage import (
    GRACE_SECONDS,
    HEARTBEAT_SECONDS,
    SharedStudy,
    is_memory,
)
from workloads import Gemm


def verify_top_default(spec: RunPlan) -> int:
    """Entries verified by default: ten for one product; a workload uses each GEMM's winner."""
    return 10 if spec.single else 1


@dataclass(frozen=True)
class RunOptions:
    trials: int
    sampler: str = DEFAULT_SAMPLER
    seed: int = 0
    study: str | None = None
    storage: str | None = (
        None  # a storage address (autotune.storage.locations); None: a journal per study under results/
    )
    results: Path = Path("results")
    workers: int = 1
    timeout: float | None = None
    heartbeat: int | None = None
    verify_top: int | None = None  # None: verify_top_default
    allow_sampler_change: bool = False
    starts: tuple[Candidate, ...] = ()  # starting points (exported schedules), run first
    transfer: bool = (
        False  # also start from earlier studies' best on nearby problems (autotune.search.transfer)
    )
    write: bool = True
    progress: bool = False


@dataclass(frozen=True)
class StudySettings:
    """Everything a worker process needs to open the study (picklable)."""

    name: str
    storage_url: str
    sampler: str
    seed: int
    directions: tuple[str, ...]  # each objective's ("minimize" or "maximize")
    heartbeat_seconds: int = HEARTBEAT_SECONDS
    grace_seconds: int = GRACE_SECONDS


@dataclass
class StudyOutcome:
    name: str
    gemm: Gemm | None
    frame: pd.DataFrame
    trials: int
    distinct: int
    failures: list[str]
    paths: list[Path] = field(default_factory=list)
    verified: bool = True  # False: an interrupted run ranked it without verifying
    study: optuna.Study | None = None  # the run's handle (closed with the run's storage)


@dataclass
class Outcome:
    name: str
    studies: list[StudyOutcome]
    summary: pd.DataFrame | None  # a workload tuned GEMM by GEMM: each GEMM's winner
    summary_metadata: dict[str, object]
    paths: list[Path]  # what to tell the user was written
    elapsed: float
    interrupted: bool

    @property
    def failures(self) -> list[str]:
        return [f for s in self.studies for f in s.failures]


def _check_options(options: RunOptions) -> None:
    if options.trials < 1:
        raise PlanError(f"trials must be at least 1, got {options.trials}", setting="trials")
    if options.timeout is not None and options.timeout <= 0:
        raise PlanError("timeout must be positive", setting="timeout")
    if options.verify_top is not None and options.verify_top < 0:
        raise PlanError(
            f"verify_top must not be negative, got {options.verify_top}", setting="verify_top"
        )
    if options.storage is not None and is_memory(options.storage) and options.workers > 1:
        raise PlanError(
            "an in-memory study lives in one process: several workers need a storage",
            setting="workers",
        )
    encoding_for(options.sampler)


@dataclass
class Job:
    """One study of a run, opened and checked."""

    settings: StudySettings
    gemm: Gemm | None
    search: Search
    shared: SharedStudy
    study: optuna.Study
    starts: tuple[Candidate, ...]
    grid: tuple[Candidate, ...] = ()  # with --sampler grid: every feasible point, built up front
