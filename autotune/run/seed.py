"""The seed stage: each study starts from the candidates the run was given (starting points,
the chapter's baseline, transferred schedules and, for a sampler that enumerates, every feasible
point), each enqueued once with where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import optuna

from autotune import record
from autotune.run.check import Checked
from autotune.run.jobs import Job
from autotune.search.problem import Candidate, Search
from autotune.search.transfer import sibling_seeds, transfer_seeds
from autotune.storage import SharedStudy, is_memory, local_storages
from simcore.shape import Shape, parse_shape

Origin = tuple[Candidate, dict[str, object]]  # a candidate and where it came from


@dataclass(frozen=True)
class Sibling:
    """A finished study of the same workload run: its best schedules start the next ones."""

    study: optuna.Study
    shape: Shape
    storage: str


def seed(checked: Checked, job: Job, siblings: Sequence[Sibling] = ()) -> None:
    """Enqueue the job's starting points, transferred schedules (with `transfer`, and from the
    run's finished `siblings`), its baseline and its grid."""
    transfers = transfers_for(checked, job)
    if siblings and job.gemm is not None:
        donors = [(s.study, s.shape, s.storage) for s in siblings]
        transfers += sibling_seeds(
            job.search, donors, checked.plan.the_oracle(), job.gemm.shape, checked.plan.machine
        )
    seed_study(job.shared, job.study, job.search, job.starts, transfers, job.grid)


def seed_study(
    shared: SharedStudy,
    study: optuna.Study,
    search: Search,
    starts: Sequence[Candidate] = (),
    transfers: Sequence[Origin] = (),
    grid: Sequence[Candidate] = (),
) -> None:
    """Enqueue the starting points, the transferred schedules, the baseline (and a grid) not yet
    in the study, each with where it came from, under the study's lock: workers starting
    together would otherwise each enqueue the same baseline."""
    batches = (
        [(c, record.origin_attrs("enqueued")) for c in starts]
        + [(c, record.origin_attrs("transfer", origin)) for c, origin in transfers]
        + [(c, record.origin_attrs("baseline")) for c in search.seeds()]
        + [(c, record.origin_attrs("grid")) for c in grid]
    )
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


def transfers_for(checked: Checked, job: Job) -> list[Origin]:
    """With `transfer`, the best schedules of the nearest earlier studies, scaled to this one."""
    plan, options = checked.plan, checked.options
    ident = plan.identity(job.gemm) if options.transfer else {}
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
        plan.the_oracle(),
        parse_shape(str(ident["shape"])),
        plan.machine,
        job.settings.name,
    )
