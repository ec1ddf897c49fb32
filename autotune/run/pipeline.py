"""One run, the tuner's counterpart of Optuna's `_optimize.py`: every command that runs a study
goes through `run` (tune, --workload, co-design, check, sweep --tuned), and `leaderboard`,
`show`, `export` and `plot` rebuild a study's results through `finish`.

    validate the spec  ->  open each study (identity and sampler checked)  ->  seed it
    ->  optimise (one process, N workers, or the exact global budget on shared storage)
    ->  rank (one sort, one Pareto front)  ->  verify  ->  write

A single product is a workload of one GEMM: one study. A workload is a study per GEMM plus a
summary; a co-design is one study over machines. Optuna beyond its public study API lives in
autotune.storage."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Sequence

import optuna

from autotune import record
from autotune.errors import PlanError
from autotune.interrupt import StopRequest, graceful_stop
from autotune.results.owner import claim
from autotune.run.finish import finish, finish_jobs, unverified_note  # noqa: F401
from autotune.run.objective import Objective
from autotune.run.options import (  # noqa: F401 - the run's types, also here
    Job,
    Outcome,
    RunOptions,
    StudyOutcome,
    StudySettings,
    _check_options,
    verify_top_default,
)
from autotune.run.plan import RunPlan
from autotune.run.settings import DEFAULT_TRIALS, SHORT_TRIALS  # noqa: F401 - the run's defaults, also here
from autotune.run.study import (  # noqa: F401 - opening a study, also here
    check_study,
    encoding_refusal,
    open_study,
    provenance,
    settings_for,
)
from autotune.run.summary import summarise
from autotune.run.workers import run_workers
from autotune.search import sampling
from autotune.search.problem import Candidate, GridTooLarge, Search
from autotune.search.sampling import encoding_for
from autotune.search.transfer import sibling_seeds, transfer_seeds
from autotune.storage import (
    SharedStudy,
    default_storage,
    finished_count,
    is_memory,
    local_storages,
)
from autotune.storage.locations import finished_trials
from autotune.storage.names import check_name, study_folder
from simcore.shape import Shape, parse_shape

# --- open, check and seed ----------------------------------------------------------------------


def seed_study(
    shared: SharedStudy,
    study: optuna.Study,
    search: Search,
    options: RunOptions,
    transfers: Sequence[tuple[Candidate, dict[str, object]]] = (),
    grid: Sequence[Candidate] = (),
) -> None:
    """Enqueue the starting points, the transferred schedules, the baseline (and with --sampler
    grid, every feasible point) not yet in the study, each with where it came from, under the
    study's lock: workers starting together would otherwise each enqueue the same baseline."""
    batches = (
        [(c, record.origin_attrs("enqueued")) for c in options.starts]
        + [(c, record.origin_attrs("transfer", origin)) for c, origin in transfers]
        + [(c, record.origin_attrs("baseline")) for c in search.seeds()]
    )
    grid = grid or grid_of(search, options.sampler)
    batches += [(c, record.origin_attrs("grid")) for c in grid]
    with shared.locked():
        states = (
            optuna.trial.TrialState.WAITING,
            optuna.trial.TrialState.COMPLETE,
            optuna.trial.TrialState.RUNNING,
        )
        # A WAITING trial holds its parameters as fixed_params until it runs; keys are canonical,
        # so a trial of the conditional encoding (without its unused parameters) is recognised.
        seen = {
            search.key_of(t.system_attrs.get("fixed_params", t.params))
            for t in study.get_trials(deepcopy=False, states=states)
        }
        for candidate, attrs in batches:
            key = search.key_of(candidate.params())
            if key not in seen:
                study.enqueue_trial(candidate.params(), user_attrs=attrs)
                seen.add(key)


def transfers_for(
    job: Job, spec: RunPlan, options: RunOptions
) -> list[tuple[Candidate, dict[str, object]]]:
    """With --transfer, the best schedules of the nearest earlier studies, scaled to this one."""
    ident = spec.identity(job.gemm) if options.transfer else {}
    if "shape" not in ident:
        return []  # not asked for, or a co-design (machines, not schedules)
    urls = (
        [options.storage]
        if options.storage and not is_memory(options.storage)
        else local_storages(options.results)
    )
    return transfer_seeds(
        job.search,
        urls,
        spec.the_oracle(),
        parse_shape(str(ident["shape"])),
        spec.machine,
        job.settings.name,
    )


# --- optimise ----------------------------------------------------------------------------------


def optimise(
    settings: StudySettings,
    search: Search,
    shared: SharedStudy,
    study: optuna.Study,
    target: int,
    options: RunOptions,
) -> None:
    if options.workers == 1:
        shared.optimize(
            study,
            Objective(search, study, provenance(settings), shared),
            target,
            options.timeout,
            options.progress,
        )
        return
    run_workers(settings, search, target, options.timeout, options.workers, options.progress)


# --- the run -----------------------------------------------------------------------------------


def open_jobs(spec: RunPlan, options: RunOptions, name: str) -> list[Job]:
    """Every study of the run, opened and checked before any trial runs: a refused resume
    adds nothing anywhere, and a study whose results folder holds results its storage could
    not rebuild (autotune.results.owner) is refused before its storage is touched."""
    jobs: list[Job] = []
    try:
        searches = spec.searches()
        if options.write and not spec.single and not spec.codesign:
            first = settings_for(spec, options, spec.study_name(name, searches[0][0]))
            claim(study_folder(options.results, name), first.storage_url, lambda: 0)
        for gemm, search in searches:
            if gemm is not None and any(
                job.gemm is not None and job.gemm.shape == gemm.shape for job in jobs
            ):
                continue  # a shape is tuned once: its GEMMs share the first one's study
            check_name(spec.study_name(name, gemm), setting="study" if options.study else None)
            settings = settings_for(spec, options, spec.study_name(name, gemm))
            if options.write:
                url = settings.storage_url
                claim(
                    study_folder(options.results, settings.name),
                    url,
                    lambda url=url, name=settings.name: finished_trials(url, name),
                )
            reasons = [search.why_not(c) for c in options.starts]
            if options.starts and all(reasons):
                raise PlanError(
                    f"the starting point does not fit study {settings.name!r}: {reasons[0]}"
                )
            grid = grid_of(search, options.sampler)  # too large: refused before anything exists
            if options.storage is None:  # refusals above create nothing; now the study's folder
                default_storage(options.results, settings.name)
            shared, study = open_study(settings, search)
            jobs.append(Job(settings, gemm, search, shared, study, (), grid))
            check_study(study, spec, gemm, options)
            jobs[-1].starts = tuple(
                search.canonical(c) for c, reason in zip(options.starts, reasons) if reason is None
            )
    except BaseException:
        close_jobs(jobs)
        raise
    return jobs


def grid_of(search: Search, sampler: str) -> tuple[Candidate, ...]:
    """With a sampler that enumerates (the grid), every feasible point; PlanError when there are
    too many."""
    if not sampling.spec(sampler).enumerates:
        return ()
    try:
        return tuple(search.grid())
    except GridTooLarge as exc:
        raise PlanError(str(exc), setting="sampler") from None


def close_jobs(jobs: list[Job]) -> None:
    for job in jobs:
        job.shared.close(job.study)


def run(spec: RunPlan, options: RunOptions, log: Callable[[str], None] | None = None) -> Outcome:
    """Validate, open every study, then seed, optimise, rank, verify and write each. Ctrl-C
    stops after the trials in flight; what is done is ranked and written (autotune.interrupt)."""
    spec.validate()
    _check_options(options)
    if options.study is not None:
        check_name(options.study)
    if options.transfer and spec.codesign:
        raise PlanError(
            "transfer starts from earlier studies' schedules; a co-design searches machines",
            setting="transfer",
        )
    spec = replace(spec, encoding=encoding_for(options.sampler))
    name = check_name(spec.run_name(options.study), setting="study" if options.study else None)
    with graceful_stop() as stop:
        with stop.urgently():  # no trial is in flight yet: the first Ctrl-C stops the opening
            jobs = open_jobs(spec, options, name)
        try:
            return _run_jobs(spec, options, name, jobs, stop, log)
        finally:
            close_jobs(jobs)  # leaves the run record, deletes lock and lease files


def _run_jobs(
    spec: RunPlan,
    options: RunOptions,
    name: str,
    jobs: list[Job],
    stop: StopRequest,
    log: Callable[[str], None] | None,
) -> Outcome:
    started, reached = time.perf_counter(), 1
    per_gemm = not spec.single and not spec.codesign
    finished: list[tuple[optuna.Study, Shape, str]] = []  # a workload's studies done so far: donors
    try:
        for reached, job in enumerate(jobs, start=1):
            _run_job(
                spec, options, job, finished if per_gemm else None, log if len(jobs) > 1 else None
            )
            if job.gemm is not None:
                finished.append((job.study, job.gemm.shape, job.settings.storage_url))
            if stop.requested:
                break
    except KeyboardInterrupt:
        pass  # a second Ctrl-C: rank and write what is stored, without verifying
    elapsed = time.perf_counter() - started
    outcomes = finish_jobs(jobs[:reached], spec, options, stop)
    interrupted = stop.requested or stop.forced
    if log and not all(o.verified for o in outcomes):
        log(unverified_note(outcomes, name if not (spec.single or spec.codesign) else None))
    if spec.single or spec.codesign:
        return Outcome(name, outcomes, None, {}, outcomes[0].paths, elapsed, interrupted)
    results = options.results if options.write else None
    summary, metadata, paths = summarise(
        spec, name, outcomes, results, jobs[0].settings.storage_url
    )
    return Outcome(name, outcomes, summary, metadata, paths, elapsed, interrupted)


def _run_job(
    spec: RunPlan,
    options: RunOptions,
    job: Job,
    siblings: list[tuple[optuna.Study, Shape, str]] | None,
    log: Callable[[str], None] | None,
) -> None:
    """Seed and optimise one study. A workload's GEMM study (`siblings` given) is tuned up to
    `trials` finished trials, starting from its finished siblings' best schedules; one already
    holding as many (a rerun with more layers) is reused as it is."""
    trials = options.trials
    transfers = transfers_for(job, spec, options)
    if siblings is not None:
        done = finished_count(job.study)
        if done >= trials:
            if log:
                log(
                    f"reusing {_label(job)}: study {job.settings.name!r} "
                    f"holds {done} finished trials"
                )
            return
        trials -= done
        assert job.gemm is not None
        transfers += sibling_seeds(
            job.search, siblings, spec.the_oracle(), job.gemm.shape, spec.machine
        )
    starting = replace(options, starts=job.starts)
    seed_study(job.shared, job.study, job.search, starting, transfers, job.grid)
    target = job.shared.begin(job.study, trials)
    if log:
        log(f"tuning {_label(job)}: {trials} trials in study {job.settings.name!r}")
    optimise(job.settings, job.search, job.shared, job.study, target, options)


def _label(job: Job) -> str:
    """What a log line calls the job: its GEMM with shape and weight, or its study."""
    return job.gemm.label if job.gemm is not None else job.settings.name
