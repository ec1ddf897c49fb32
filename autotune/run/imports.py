"""Schedules imported whole into a study: a candidate that no sampler draws (the exact solver's
program, a family of imported schedules: search_spaces.base.Family.imported) added as one
completed trial with its evaluation, who made it and how, so that the study's leaderboard ranks
and verifies it like any other entry and `tune` resumes the study around it.

The study is one of the same product on the same machine: an existing single-product study
(its own plan, sampler and seed are kept), or a new one made as `tune --study NAME` makes it
(the default spaces and sampler). The imported trial records no Optuna parameters: its family
is no choice of the study's samplers, so Optuna holds no distribution of it; its candidate is
read back from its result (autotune.record.candidate_params)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

import optuna
from optuna.trial import TrialState

from autotune import record
from autotune.errors import StorageError, StudyError
from autotune.oracles import configured
from autotune.record import Provenance
from autotune.results import leaderboard as board
from autotune.run.check import check
from autotune.run.finish import finish
from autotune.run.jobs import StudyOutcome
from autotune.run.options import RunOptions, verify_top_default
from autotune.run.plan import RunPlan
from autotune.run.resolve import plan_of
from autotune.run.study import close_studies, open_studies
from autotune.search.objectives import objective_values
from autotune.search.problem import Candidate, Problem
from autotune.search.sampling import DEFAULT_SAMPLER, encoding_for
from autotune.storage import default_storage, existing_study
from autotune.storage.names import check_name, study_folder
from search_spaces.base import Verdict
from simcore.shape import Shape


@dataclass(frozen=True)
class Destination:
    """The study a schedule is imported into, checked before anything is made."""

    name: str
    storage: str | None  # as given (None: the default journal under results/<study>/)
    results: Path
    plan: RunPlan  # the study's own plan, or a new study's
    sampler: str  # the study's recorded sampler and seed (a new study: the defaults)
    seed: int
    exists: bool

    @property
    def folder(self) -> Path:
        return study_folder(self.results, self.name, setting="enqueue")


@dataclass(frozen=True)
class Imported:
    """What an import did: the trial holding the schedule, and the study's leaderboard now."""

    study: str
    trial: int
    added: bool  # False: the study held this schedule already (that trial is reported)
    row: Mapping[str, object]  # the schedule's leaderboard row
    outcome: StudyOutcome
    verdict: Verdict  # the study's oracle's check of the schedule, before it was added


def destination(
    name: str,
    shape: Shape,
    machine: Any,
    oracle: str,
    results: Path = Path("results"),
    storage: str | None = None,
) -> Destination:
    """Study `name` as an import of a schedule of `shape` on `machine` needs it, read without
    creating anything: StudyError (naming `enqueue`) for a study of another product, machine or
    oracle, of a workload, or searching machines."""
    check_name(name, setting="enqueue")
    try:
        url = storage or default_storage(results, name, create=False)
    except StorageError as exc:
        raise StorageError(str(exc), setting="enqueue") from None
    study = existing_study(url, name)
    if study is None:
        plan = plan_of(shape, oracle=oracle, machine=machine)
        plan.validate()
        return Destination(name, storage, results, plan, DEFAULT_SAMPLER, 0, False)
    stored = record.study_plan(study)
    if stored is None:
        raise StudyError(
            f"study {name!r} predates stored run settings: resume it with `tune` first",
            setting="enqueue",
        )
    plan = RunPlan.from_json(stored)
    _check_same(name, plan, shape, machine, oracle)
    sampler = record.study_sampler(study) or {}
    return Destination(
        name,
        storage,
        results,
        plan,
        str(sampler.get("sampler", DEFAULT_SAMPLER)),
        int(sampler.get("seed", 0)),
        True,
    )


def _check_same(name: str, plan: RunPlan, shape: Shape, machine: Any, oracle: str) -> None:
    if plan.oracle != oracle:
        raise StudyError(
            f"study {name!r} is a study of the {plan.oracle} oracle, not {oracle}: "
            f"choose another study",
            setting="enqueue",
        )
    if not plan.single or plan.search_machine:
        kind = "a GEMM of a workload" if not plan.single else "a search of machines"
        raise StudyError(
            f"study {name!r} is {kind}: a schedule goes into a study of one product on one machine",
            setting="enqueue",
        )
    theirs = plan.workload.gemms[0].shape
    if theirs != shape or plan.machine != machine:
        described = plan.the_oracle().describe_machine
        raise StudyError(
            f"study {name!r} tunes {theirs} on {described(plan.machine)}; this schedule is of "
            f"{shape} on {described(machine)}: choose another study",
            setting="enqueue",
        )


def import_schedule(
    destination: Destination,
    candidate: Candidate,
    provenance: Provenance,
    origin: str,
    source: Mapping[str, Any],
    cycles: int | None = None,
) -> Imported:
    """Add `candidate` (of a family of imported schedules, its content already in the study's
    folder) to the study as a completed trial, unless the study holds it already, then rank,
    verify and write the study's leaderboard. The candidate is evaluated and verified by the
    study's oracle first: one that does not fit, does not run in `cycles` (when given) or fails
    verification is refused (StudyError), and nothing is added."""
    plan = replace(destination.plan, encoding=encoding_for(destination.sampler))
    options = RunOptions(
        trials=1,
        sampler=destination.sampler,
        seed=destination.seed,
        study=destination.name,
        storage=destination.storage,
        results=destination.results,
    )
    jobs = open_studies(check(plan, options))
    try:
        job = jobs[0]
        search = job.search
        assert isinstance(search, Problem)  # a single product's study searches schedules
        search = replace(search, oracle=configured(search.oracle, study_folder=destination.folder))
        candidate = search.canonical(candidate)
        evaluation, verdict = _checked(search, candidate, cycles)
        with job.shared.locked():  # a tuner running on the study adds its trials in between
            number = _holding(job.study, search, candidate)
            added = number is None
            if number is None:
                job.study.add_trial(_trial(search, evaluation, provenance, origin, source))
                number = _holding(job.study, search, candidate)
        assert number is not None
        verify_top = verify_top_default(plan)
        outcome = finish(
            job.study,
            job.search,
            plan,
            job.gemm,
            verify_top,
            destination.results,
            job.settings.storage_url,
        )
    finally:
        close_studies(jobs)
    row = next(r for r in board.json_rows(outcome.frame) if r["trial"] == number)
    return Imported(destination.name, number, added, row, outcome, verdict)


def _checked(
    search: Problem, candidate: Candidate, cycles: int | None
) -> tuple[record.Evaluation, Verdict]:
    """The candidate's evaluation, once it has been verified exactly by the study's oracle."""
    evaluation = search.evaluate(candidate)
    if not evaluation.feasible:
        raise StudyError(
            f"the schedule does not fit the study's machine (over its limits by "
            f"{evaluation.violation:g}): it is not imported"
        )
    if cycles is not None and evaluation.cycles != cycles:
        raise StudyError(
            f"the {search.oracle.name} oracle times the schedule at {evaluation.cycles:.0f} cycles, "
            f"not {cycles}: it is not imported"
        )
    family = search.family(candidate.family)
    verdict = search.oracle.verify(family, candidate.point, search.shape, search.machine)
    if not verdict.verified:
        raise StudyError(f"the schedule failed verification, it is not imported: {verdict.detail}")
    return evaluation, verdict


def _holding(study: optuna.Study, search: Problem, candidate: Candidate) -> int | None:
    """The first completed trial of the study that evaluated `candidate` (None: none)."""
    key = candidate.key()
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if record.has_result(trial) and search.key_of(record.candidate_params(trial)) == key:
            return trial.number
    return None


def _trial(
    search: Problem,
    evaluation: record.Evaluation,
    provenance: Provenance,
    origin: str,
    source: Mapping[str, Any],
) -> optuna.trial.FrozenTrial:
    """The completed trial of an imported schedule: its values, constraints and record, and no
    Optuna parameters (see the module's docstring)."""
    values = objective_values(evaluation, search.measures)
    trial = optuna.trial.create_trial(
        state=TrialState.COMPLETE,
        values=list(values) if isinstance(values, tuple) else [values],
        params={},
        distributions={},
        user_attrs=record.imported_attrs(evaluation, provenance, origin, source),
    )
    for name, value in search.constraints(evaluation).items():
        trial.set_constraint(name, value)
    return trial
