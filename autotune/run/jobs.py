"""What the stages of a run pass on: one study's settings (what a worker process needs to open
it), the studies opened (`Job`), and what the run gives back (`StudyOutcome`, `Outcome`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import optuna
import pandas as pd

from autotune.search.problem import Candidate, Search
from autotune.storage import GRACE_SECONDS, HEARTBEAT_SECONDS, SharedStudy
from workloads import Gemm


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
class Job:
    """One study of a run, opened and checked."""

    settings: StudySettings
    gemm: Gemm | None
    search: Search
    shared: SharedStudy
    study: optuna.Study
    starts: tuple[Candidate, ...]
    grid: tuple[Candidate, ...] = ()  # a sampler that enumerates: every feasible point, up front

    @property
    def label(self) -> str:
        """What a log line calls the job: its GEMM with shape and weight, or its study."""
        return self.gemm.label if self.gemm is not None else self.settings.name


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
