"""The stored trial: one typed record, and the one place that knows how it is stored.

Optuna keeps a trial's outcome as user attributes. Their names, their layout and their schema
version are defined here and nowhere else; every reader (the objective's cache, leaderboards,
`studies`, transfer, the samplers, plots) goes through `TrialRecord.of_trial` or the study
functions below, and every writer through `Evaluation.to_attr`, `Provenance.to_attr` and
`origin_attrs`.

Schema 1 is what every study before the typed record holds: the same flat `result` dict without
a version. Schema 2 adds the version and the timing method. Both are read; a newer version is
refused in one line rather than misread.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from autotune.errors import RecordError

SCHEMA_VERSION = 2

# Trial user attributes.
RESULT = "result"  # what the oracle found for the candidate (Evaluation)
RUN = "run"  # who ran it, with what (Provenance)
ORIGIN = "source"  # where the candidate came from (ORIGINS)
TRANSFER = "transfer"  # for a transferred candidate: the study, shape and machine it came from
IMPORTED = "imported"  # for a schedule imported whole: what made it (the solver, its proof)

# Study user attributes.
STUDY_PLAN = "spec"  # the run plan, as JSON: the study can be rebuilt from its storage
STUDY_IDENTITY = "identity"  # what the study is about: a resumed study must match it
STUDY_SAMPLER = "sampler"  # the sampler and seed the study was run with
STUDY_GEMM = "gemm"  # the GEMM of a workload study (None for a single product)

ORIGINS: tuple[str, ...] = (
    "baseline",
    "enqueued",
    "transfer",
    "grid",
    "optimum",
    "refine",
    "explore",
    "random",
)
TIMINGS: tuple[str, ...] = ("full", "periodic")

# Keys of the stored result that are not metrics.
_SCHEMA_KEY = "schema"
_STRUCTURE = ("feasible", "violation", "machine", "point", "duplicate_of", "timing", _SCHEMA_KEY)


@dataclass(frozen=True)
class Evaluation:
    """What the oracle found for one candidate: feasibility, the machine it ran on, the
    canonical parameters, and the metrics (an infeasible candidate's hold what was computed
    before a limit stopped it, often nothing)."""

    feasible: bool
    violation: float
    point: Mapping[str, Any]  # the canonical candidate, as Optuna records parameters
    machine: Mapping[str, int] = field(default_factory=dict)  # {} where the point is the machine
    metrics: Mapping[str, Any] = field(default_factory=dict)
    timing: str | None = None  # how the cycles were timed (TIMINGS); None: not simulated
    duplicate_of: int | None = None  # the trial whose result this repeats

    @property
    def cycles(self) -> float | None:
        value = self.metrics.get("cycles")
        return None if value is None else float(value)

    def repeat_of(self, trial: int) -> Evaluation:
        return replace(self, duplicate_of=trial)

    def to_attr(self) -> dict[str, Any]:
        """The stored form: one flat dict (few storage writes per trial)."""
        attr: dict[str, Any] = {
            _SCHEMA_KEY: SCHEMA_VERSION,
            "feasible": self.feasible,
            "violation": self.violation,
            "point": dict(self.point),
        }
        if self.machine:
            attr["machine"] = dict(self.machine)
        if self.timing is not None:
            attr["timing"] = self.timing
        if self.duplicate_of is not None:
            attr["duplicate_of"] = self.duplicate_of
        attr.update(self.metrics)
        return attr

    @staticmethod
    def from_attr(attr: Mapping[str, Any]) -> Evaluation:
        version = attr.get(_SCHEMA_KEY, 1)
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise RecordError(
                f"a trial record of schema {version!r} is newer than this autotune "
                f"reads (schema {SCHEMA_VERSION}): upgrade autotune to read it"
            )
        metrics = {k: v for k, v in attr.items() if k not in _STRUCTURE}
        duplicate = attr.get("duplicate_of")
        return Evaluation(
            bool(attr.get("feasible")),
            float(attr.get("violation", 0.0)),
            dict(attr.get("point") or {}),
            dict(attr.get("machine") or {}),
            metrics if attr.get("feasible") else metrics,
            attr.get("timing", "full" if metrics.get("cycles") is not None else None),
            int(duplicate) if duplicate is not None else None,
        )


@dataclass(frozen=True)
class Provenance:
    """Who ran a trial, with what."""

    sampler: str | None = None
    seed: int | None = None
    autotune_version: str | None = None
    worker: str | None = None

    def to_attr(self) -> dict[str, Any]:
        return {
            "sampler": self.sampler,
            "seed": self.seed,
            "autotune_version": self.autotune_version,
            "worker": self.worker,
        }

    @staticmethod
    def from_attr(attr: Mapping[str, Any] | None) -> Provenance:
        attr = attr or {}
        seed = attr.get("seed")
        return Provenance(
            attr.get("sampler"),
            int(seed) if seed is not None else None,
            attr.get("autotune_version"),
            attr.get("worker"),
        )


@dataclass(frozen=True)
class TrialRecord:
    """One completed trial, as every reader sees it."""

    number: int
    params: Mapping[str, Any]  # the candidate's parameters (candidate_params)
    evaluation: Evaluation
    provenance: Provenance
    origin: str | None = None  # ORIGINS; None for a trial of a sampler that says nothing
    transfer: Mapping[str, Any] | None = None
    completed: str | None = None  # ISO time the trial completed
    values: tuple[float, ...] | None = None  # Optuna's objective values
    imported: Mapping[str, Any] | None = None  # for a schedule imported whole: what made it

    @property
    def feasible(self) -> bool:
        return self.evaluation.feasible

    @property
    def cycles(self) -> float | None:
        return self.evaluation.cycles

    @property
    def metrics(self) -> Mapping[str, Any]:
        return self.evaluation.metrics

    @property
    def timing(self) -> str | None:
        return self.evaluation.timing

    @staticmethod
    def of_trial(trial: Any) -> TrialRecord | None:
        """The record of an Optuna FrozenTrial; None for a trial that stored no result (one
        that stopped while sampling)."""
        attrs = trial.user_attrs
        if RESULT not in attrs:
            return None
        completed = trial.datetime_complete.isoformat() if trial.datetime_complete else None
        return TrialRecord(
            trial.number,
            candidate_params(trial),
            Evaluation.from_attr(attrs[RESULT]),
            Provenance.from_attr(attrs.get(RUN)),
            attrs.get(ORIGIN),
            attrs.get(TRANSFER),
            completed,
            tuple(trial.values) if trial.values else None,
            attrs.get(IMPORTED),
        )


def has_result(trial: Any) -> bool:
    return RESULT in trial.user_attrs


def candidate_params(trial: Any) -> dict[str, Any]:
    """The parameters that identify a trial's candidate: as Optuna recorded them, or for a trial
    recorded with none (a schedule imported whole, whose family no sampler draws, so that Optuna
    holds no distribution of it: `imported_attrs`) the candidate its result stores."""
    if trial.params:
        return dict(trial.params)
    stored = trial.user_attrs.get(RESULT)
    point = stored.get("point") if isinstance(stored, Mapping) else None
    return dict(point) if isinstance(point, Mapping) else {}


def imported_attrs(
    evaluation: Evaluation, provenance: Provenance, origin: str, source: Mapping[str, Any]
) -> dict[str, Any]:
    """The user attributes of a trial imported whole (`origin`, e.g. "optimum" for the exact
    solver's schedule): its result, who ran it, and `source`, what made it (the solver's
    status, bound and settings)."""
    return {
        RESULT: evaluation.to_attr(),
        RUN: provenance.to_attr(),
        **origin_attrs(origin),
        IMPORTED: dict(source),
    }


def origin_attrs(origin: str, transfer: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The user attributes of an enqueued trial: where its candidate came from."""
    if origin not in ORIGINS:
        raise ValueError(f"unknown origin {origin!r} (known: {', '.join(ORIGINS)})")
    return {ORIGIN: origin, **({TRANSFER: dict(transfer)} if transfer is not None else {})}


def record_result(trial: Any, evaluation: Evaluation) -> None:
    trial.set_user_attr(RESULT, evaluation.to_attr())


def record_provenance(trial: Any, provenance: Provenance) -> None:
    trial.set_user_attr(RUN, provenance.to_attr())


# --- study attributes ----------------------------------------------------------------------


def study_identity(study: Any) -> dict[str, Any] | None:
    found = study.user_attrs.get(STUDY_IDENTITY)
    return dict(found) if found is not None else None


def study_plan(study: Any) -> dict[str, Any] | None:
    found = study.user_attrs.get(STUDY_PLAN)
    return dict(found) if found is not None else None


def study_gemm(study: Any) -> str | None:
    found = study.user_attrs.get(STUDY_GEMM)
    return str(found) if found is not None else None


def study_sampler(study: Any) -> dict[str, Any] | None:
    found = study.user_attrs.get(STUDY_SAMPLER)
    return dict(found) if found is not None else None
