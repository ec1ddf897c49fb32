"""The optimise stage: a study's trials run up to its budget, in this process or in worker
processes sharing it (`workers`), each trial an `Objective` call (autotune.run.objective)."""

from __future__ import annotations

from typing import Callable

from autotune.run.check import Checked
from autotune.run.jobs import Job
from autotune.run.objective import Objective
from autotune.run.study import provenance
from autotune.run.workers import run_workers
from autotune.storage import finished_count


def trials_for(checked: Checked, job: Job, log: Callable[[str], None] | None) -> int:
    """The trials to run on the study now: the run's `trials`; for a workload's GEMM study, up
    to that many finished trials (0: one already holding as many, from a rerun with more
    layers, is reused as it is)."""
    trials = checked.options.trials
    if checked.plan.single or checked.plan.codesign:
        return trials
    done = finished_count(job.study)
    if done >= trials and log:
        log(f"reusing {job.label}: study {job.settings.name!r} holds {done} finished trials")
    return max(0, trials - done)


def optimise(checked: Checked, job: Job, trials: int, log: Callable[[str], None] | None) -> None:
    """Run `trials` more trials on the job's study (the budget is global: workers of other runs
    on shared storage count)."""
    options = checked.options
    target = job.shared.begin(job.study, trials)
    if log:
        log(f"tuning {job.label}: {trials} trials in study {job.settings.name!r}")
    if options.workers == 1:
        job.shared.optimize(
            job.study,
            Objective(job.search, job.study, provenance(job.settings), job.shared),
            target,
            options.timeout,
            options.progress,
        )
        return
    run_workers(
        job.settings,
        job.search,
        target,
        options.timeout,
        options.workers,
        options.progress,
        options.worker_setup,
    )
