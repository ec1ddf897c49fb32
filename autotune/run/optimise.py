"""The optimise stage: a study's trials run up to its budget, in this process or in worker
processes sharing it (`workers`), each trial an `Objective` call (autotune.run.objective)."""

from __future__ import annotations

from typing import Callable

import optuna
from optuna.trial import TrialState

from autotune.run.check import Checked
from autotune.run.jobs import Job
from autotune.run.objective import Objective
from autotune.run.study import provenance
from autotune.run.workers import run_workers
from autotune.search.problem import Problem, Search
from autotune.storage import finished_count


def trials_for(checked: Checked, job: Job, log: Callable[[str], None] | None) -> int:
    """The trials to run on the study now: as many as it lacks of the run's `trials` (0: it
    holds them already, from an earlier run, and is reported as it is), or `more_trials`."""
    options = checked.options
    if options.more_trials is not None:
        return options.more_trials
    done = finished_count(job.study)
    if done >= options.trials and log:
        held = f"study {job.settings.name!r} holds {done} finished trials"
        if job.gemm is not None and not checked.plan.single:
            log(f"reusing {job.label}: {held}")
        else:
            log(f"{held} (target {options.trials}): nothing to run")
    return max(0, options.trials - done)


def proven_bound(search: Search) -> int | None:
    """The proven lower bound on the cycles of one product's schedules, when the study's only
    objective is cycles on a fixed machine (a best equal to it cannot improve); else None.

    A machine search has none: each front point at its machine's bound does not make the front
    complete, since an untried machine may still join or dominate it (docs/guide/commands.md)."""
    if not isinstance(search, Problem) or search.machine_space is not None:
        return None
    if tuple(search.objectives) != ("cycles",):
        return None
    bound = search.oracle.bound(search.shape, search.machine)
    return bound if bound is not None and bound > 0 else None


def at_bound(bound: int) -> Callable[[optuna.Study], bool]:
    """Whether a study's best (its smallest feasible cycles) has reached `bound`."""

    def reached(study: optuna.Study) -> bool:
        trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        best = min((t.values[0] for t in trials if t.values), default=None)
        return best is not None and best <= bound

    return reached


def optimise(
    checked: Checked,
    job: Job,
    trials: int,
    log: Callable[[str], None] | None,
    note: Callable[[str], None] | None = None,
) -> None:
    """Run `trials` more trials on the job's study (the budget is global: workers of other runs
    on shared storage count), stopping early once its best equals the proven lower bound."""
    options = checked.options
    target = job.shared.begin(job.study, trials)
    if log:
        log(f"tuning {job.label}: {trials} trials in study {job.settings.name!r}")
    bound = None if options.all_trials else proven_bound(job.search)
    enough = at_bound(bound) if bound is not None else None
    if options.workers == 1:
        job.shared.optimize(
            job.study,
            Objective(job.search, job.study, provenance(job.settings), job.shared),
            target,
            options.timeout,
            options.progress,
            enough,
        )
    else:  # each worker reads the study's best before asking for a trial: the first at the
        # bound stops them all, and the trials in flight finish and are kept
        run_workers(
            job.settings,
            job.search,
            target,
            options.timeout,
            options.workers,
            options.progress,
            options.worker_setup,
            bound,
        )
    _say_optimal(job, bound, enough, note or log)


def _say_optimal(
    job: Job,
    bound: int | None,
    enough: Callable[[optuna.Study], bool] | None,
    log: Callable[[str], None] | None,
) -> None:
    if bound is None or enough is None or not enough(job.study):
        return
    done = finished_count(job.study)
    line = (
        f"study {job.settings.name!r}: stopped after {done} trials: the best, {bound:,} cycles, "
        "equals the proven lower bound (no schedule is faster)"
    )
    if log:
        log(line)
