"""One run, as its list of stages. Every command that runs a study goes through `run` (tune,
--workload, co-design, check, sweep --tuned); a study rebuilt from its storage runs the last
three (autotune.run.rebuild).

    plan      check(plan, options) -> Checked           the plan validated once; the size guard
    open      open_studies(checked) -> [Job]            each study opened, its resume checked
    seed      seed(checked, job, siblings)              starting points, baseline, transfers, grid
    optimise  optimise(checked, job, trials, log)       the trials, here or in worker processes
    rank      rank(plan, study, ...) -> Ranking         one sort, one Pareto front
    verify    verify(ranking, top) -> Ranking           the top entries re-run by their oracle
    write     write(plan, ranking, ...) -> StudyOutcome the leaderboard; a workload's summary

A single product is a workload of one GEMM: one study. A workload is a study per GEMM (tuned in
turn, each seeded from the ones done) and a summary; a co-design is one study over machines.
Ctrl-C stops after the trials in flight: what is done is ranked and written (autotune.interrupt);
verification it interrupts leaves the rest written unverified, marked so."""

from __future__ import annotations

import time
from typing import Callable

from autotune.interrupt import StopRequest, graceful_stop
from autotune.run.check import Checked, check
from autotune.run.finish import Ranking, rank, unverified_note, verify, write
from autotune.run.jobs import Job, Outcome, StudyOutcome
from autotune.run.optimise import optimise, trials_for
from autotune.run.options import RunOptions, verify_top_default
from autotune.run.plan import RunPlan
from autotune.run.seed import Sibling, seed
from autotune.run.study import close_studies, open_studies
from autotune.run.summary import summarise

Log = Callable[[str], None]

__all__ = ["Checked", "Outcome", "RunOptions", "RunPlan", "check", "run", "run_checked"]


def run(plan: RunPlan, options: RunOptions, log: Log | None = None) -> Outcome:
    """Every stage, the plan's first."""
    return run_checked(check(plan, options), log)


def run_checked(checked: Checked, log: Log | None = None) -> Outcome:
    """The stages after the plan: open, seed and optimise each study, rank, verify, write."""
    with graceful_stop() as stop:
        with stop.urgently():  # no trial is in flight yet: the first Ctrl-C stops the opening
            jobs = open_studies(checked)
        try:
            started = time.perf_counter()
            reached = tune_studies(checked, jobs, stop, log)
            elapsed = time.perf_counter() - started
            plan, results = checked.plan, checked.options.results
            rankings = [rank(plan, j.study, j.search, j.gemm, results) for j in reached]
            verified = verify_all(checked, rankings, stop)
            return write_all(checked, verified, reached, elapsed, stop, log)
        finally:
            close_studies(jobs)  # leaves the run record, deletes lock and lease files


def tune_studies(
    checked: Checked, jobs: list[Job], stop: StopRequest, log: Log | None
) -> list[Job]:
    """Seed and optimise each study in turn (a workload's, each from the ones done before);
    the studies reached when a stop was asked for."""
    per_gemm = not checked.plan.single and not checked.plan.codesign
    siblings: list[Sibling] = []  # a workload's studies done so far
    reached: list[Job] = []
    try:
        for job in jobs:
            reached.append(job)
            tune_study(checked, job, siblings if per_gemm else [], log, len(jobs) > 1)
            if job.gemm is not None:
                siblings.append(Sibling(job.study, job.gemm.shape, job.settings.storage_url))
            if stop.requested:
                break
    except KeyboardInterrupt:
        pass  # a second Ctrl-C: rank and write what is stored, without verifying
    return reached


def tune_study(
    checked: Checked, job: Job, siblings: list[Sibling], log: Log | None, each: bool = False
) -> None:
    """One study: seeded, then optimised (not at all when it holds its trials already); `each`:
    one of several, each announced. The log hears when it stops at its proven lower bound."""
    trials = trials_for(checked, job, log)
    if trials:
        seed(checked, job, siblings)
        optimise(checked, job, trials, log if each else None, log)


def verify_all(checked: Checked, rankings: list[Ranking], stop: StopRequest) -> list[Ranking]:
    """Each ranking verified until a Ctrl-C (or an earlier second one): verification may take
    long and leaves nothing to finish, so the rankings not reached stay unverified."""
    options = checked.options
    top = options.verify_top if options.verify_top is not None else verify_top_default(checked.plan)
    if stop.forced:
        return rankings
    try:
        with stop.urgently():
            for ranking in rankings:
                verify(ranking, top)
    except KeyboardInterrupt:
        pass
    return rankings


def write_all(
    checked: Checked,
    rankings: list[Ranking],
    jobs: list[Job],
    elapsed: float,
    stop: StopRequest,
    log: Log | None,
) -> Outcome:
    """Each study's leaderboard, and a workload's summary of its GEMMs' winners."""
    plan, options, name = checked.plan, checked.options, checked.name
    results = options.results if options.write else None
    outcomes: list[StudyOutcome] = [
        write(plan, ranking, results, job.settings.storage_url)
        for ranking, job in zip(rankings, jobs)
    ]
    interrupted = stop.requested or stop.forced
    whole = plan.single or plan.codesign
    if log and not all(o.verified for o in outcomes):
        log(unverified_note(outcomes, None if whole else name))
    if whole:
        return Outcome(name, outcomes, None, {}, outcomes[0].paths, elapsed, interrupted)
    summary, metadata, paths = summarise(
        plan, name, outcomes, results, jobs[0].settings.storage_url
    )
    return Outcome(name, outcomes, summary, metadata, paths, elapsed, interrupted)
