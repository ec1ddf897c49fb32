"""The open stage: every study of a run opened and checked before any trial runs (its settings,
the study itself with its sampler, the checks a resumed study must pass: the same problem,
sampler and seed), and who runs its trials."""

from __future__ import annotations

import numpy as np
import optuna
from optuna.trial import TrialState

from autotune import __version__, record
from autotune.errors import PlanError, Ref, StudyError, Text, ref
from autotune.record import Provenance
from autotune.results.owner import claim
from autotune.run.check import Checked
from autotune.run.jobs import Job, StudySettings
from autotune.run.options import RunOptions
from autotune.run.plan import RunPlan
from autotune.search import sampling
from autotune.search.objectives import directions
from autotune.search.problem import Candidate, GridTooLarge, Search
from autotune.search.sampling import make_sampler
from autotune.storage import (
    GRACE_SECONDS,
    HEARTBEAT_SECONDS,
    WORKER,
    SharedStudy,
    default_storage,
)
from autotune.storage.locations import finished_trials
from autotune.storage.names import check_name, study_folder
from workloads import Gemm


def open_studies(checked: Checked) -> list[Job]:
    """Every study of the run, opened and checked before any trial runs: a refused resume
    adds nothing anywhere, and a study whose results folder holds results its storage could
    not rebuild (autotune.results.owner) is refused before its storage is touched."""
    plan, options, name = checked.plan, checked.options, checked.name
    jobs: list[Job] = []
    try:
        searches = plan.searches()
        if options.write and not plan.single and not plan.codesign:
            first = settings_for(plan, options, plan.study_name(name, searches[0][0]))
            claim(study_folder(options.results, name), first.storage_url, lambda: 0)
        for gemm, search in searches:
            if gemm is not None and any(
                job.gemm is not None and job.gemm.shape == gemm.shape for job in jobs
            ):
                continue  # a shape is tuned once: its GEMMs share the first one's study
            jobs.append(open_job(checked, gemm, search))
    except BaseException:
        close_studies(jobs)
        raise
    return jobs


def open_job(checked: Checked, gemm: Gemm | None, search: Search) -> Job:
    """One study of the run, opened and checked."""
    plan, options = checked.plan, checked.options
    name = plan.study_name(checked.name, gemm)
    check_name(name, setting="study" if options.study else None)
    settings = settings_for(plan, options, name)
    if options.write:
        url = settings.storage_url
        claim(
            study_folder(options.results, settings.name),
            url,
            lambda: finished_trials(url, settings.name),
        )
    reasons = [search.why_not(c) for c in options.starts]
    if options.starts and all(reasons):
        raise PlanError(f"the starting point does not fit study {settings.name!r}: {reasons[0]}")
    grid = grid_of(search, options.sampler)  # too large: refused before anything exists
    if options.storage is None:  # refusals above create nothing; now the study's folder
        default_storage(options.results, settings.name)
    shared, study = open_study(settings, search)
    starts = tuple(search.canonical(c) for c, why in zip(options.starts, reasons) if why is None)
    job = Job(settings, gemm, search, shared, study, starts, grid)
    try:
        check_study(study, plan, gemm, options)
    except BaseException:
        close_studies([job])
        raise
    return job


def grid_of(search: Search, sampler: str) -> tuple[Candidate, ...]:
    """For a sampler that enumerates (the grid), every feasible point; PlanError when there are
    too many."""
    if not sampling.spec(sampler).enumerates:
        return ()
    try:
        return tuple(search.grid())
    except GridTooLarge as exc:
        use = Text(f"{exc}: use ", ref("sampler", "tpe"), " or random")
        raise PlanError(use, setting="sampler") from None


def close_studies(jobs: list[Job]) -> None:
    """Leave each study: its run record stays, its lock and lease files go."""
    for job in jobs:
        job.shared.close(job.study)


def settings_for(plan: RunPlan, options: RunOptions, name: str) -> StudySettings:
    url = options.storage or default_storage(options.results, name, create=False)
    beat = options.heartbeat
    return StudySettings(
        name,
        url,
        options.sampler,
        options.seed,
        tuple(directions(plan.objective_measures())),
        beat or HEARTBEAT_SECONDS,
        2 * beat if beat else GRACE_SECONDS,
    )


def open_study(
    settings: StudySettings, search: Search, seed_offset: int = 0
) -> tuple[SharedStudy, optuna.Study]:
    shared = SharedStudy(
        settings.storage_url, settings.name, settings.heartbeat_seconds, settings.grace_seconds
    )
    seed = settings.seed + seed_offset
    study = shared.open(make_sampler(settings.sampler, seed, search), list(settings.directions))
    drawn = sum(t.state != TrialState.WAITING for t in study.get_trials(deepcopy=False))
    if drawn:
        # A sampler's random draws follow from its seed alone: a resumed study would repeat
        # those its first run made. Its stream follows from the seed and the trials run so far.
        study.sampler = make_sampler(settings.sampler, resumed_seed(seed, drawn), search)
    return shared, study


def resumed_seed(seed: int, drawn: int) -> int:
    """The seed of a study resumed after `drawn` trials, in 0 .. 2**32 - 1: the same seed and
    trials give the same stream, and it is none of a fresh run's (seed + worker index)."""
    return int(np.random.SeedSequence((seed, drawn)).generate_state(1)[0])


def check_study(study: optuna.Study, plan: RunPlan, gemm: Gemm | None, options: RunOptions) -> None:
    """A resumed study must be about the same thing, and run by the same sampler and seed
    unless the user allows the change (each trial records its own)."""
    identity, name = plan.identity(gemm), study.study_name
    recorded = record.study_identity(study)
    if recorded is None:
        study.set_user_attr(record.STUDY_IDENTITY, identity)
    elif recorded != identity:
        raise StudyError(
            identity_refusal(name, recorded, identity, record.study_sampler(study), options),
            setting="study" if options.study else None,  # else named from the shape or workload
        )
    if record.study_plan(study) is None:
        study.set_user_attr(record.STUDY_PLAN, plan.to_json())
        study.set_user_attr(record.STUDY_GEMM, gemm.name if gemm and not plan.single else None)
    wanted = {"sampler": options.sampler, "seed": options.seed}
    before = record.study_sampler(study)
    if before is not None and before != wanted and not options.allow_sampler_change:
        raise StudyError(
            Text(
                f"study {name!r} was run with sampler {before['sampler']} and seed "
                f"{before['seed']}; resuming it with sampler {options.sampler} and seed "
                f"{options.seed} needs ",
                ref("allow_sampler_change", True),
            )
        )
    if before != wanted:
        study.set_user_attr(record.STUDY_SAMPLER, wanted)


# Identity keys a setting sets to the recorded value (the hint names them as `ref`s).
_SETTABLE = ("oracle", "spaces", "objectives")


def identity_refusal(
    name: str,
    recorded: dict[str, object],
    identity: dict[str, object],
    before: dict[str, object] | None,
    options: RunOptions,
) -> Text:
    """Why a resume is refused, naming the settings that differ and, where a setting sets them,
    how to resume. The encoding follows the sampler and the spaces (a space without conditional
    parameters has none), so it is named only when nothing else differs."""
    keys = set(recorded) | set(identity)
    differs = sorted(k for k in keys if recorded.get(k) != identity.get(k) and k != "encoding")
    if not differs:
        return encoding_refusal(name, recorded, before)
    if "oracle" in differs:
        differs = ["oracle"]  # the rest (machine, spaces) follows from the oracle
    shown = "; ".join(
        f"{k}: {_value(recorded.get(k))}, now {_value(identity.get(k))}" for k in differs
    )
    text = f"study {name!r} already exists with a different {', '.join(differs)} ({shown})"
    hint = [ref(k, _value(recorded.get(k))) for k in differs if k in _SETTABLE]
    made_by = before.get("sampler") if before else None
    if made_by is not None and made_by != options.sampler:  # resuming needs its sampler too
        hint.insert(0, ref("sampler", made_by))
        encoding = "the flat encoding" if "encoding" not in recorded else "its encoding"
        text += f", made by sampler {made_by} ({encoding})"
    another: tuple[str | Ref, ...] = (
        ("choose another study name",)
        if options.study
        else ("name another with ", ref("study", "NAME"))
    )
    if hint and all(k in _SETTABLE for k in differs):
        spaced = [part for h in hint for part in (" ", h)][1:]
        return Text(f"{text}; resume it with ", *spaced, " (or ", *another, ")")
    return Text(f"{text}; ", *another)


def _value(value: object) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def encoding_refusal(
    name: str, recorded: dict[str, object], before: dict[str, object] | None
) -> Text:
    """Why a study cannot be resumed with this sampler's encoding, and the sampler that made it."""
    if "encoding" not in recorded:  # the flat encoding (studies before encodings said none)
        flat = sampling.using("flat")
        made = before["sampler"] if before and before.get("sampler") in flat else flat[0]
        return Text(
            f"study {name!r} was made with the flat encoding (the samplers "
            f"{', '.join(flat[:-1])} and {flat[-1]}): resume it with ",
            ref("sampler", made),
            " (or choose another study name)",
        )
    encoding = str(recorded["encoding"])
    return Text(
        f"study {name!r} was made with the {encoding} encoding of the "
        f"{' or '.join(sampling.using(encoding))} sampler: resume it with ",
        ref("sampler", sampling.using(encoding)[0]),
        " (or choose another study name)",
    )


def provenance(settings: StudySettings) -> Provenance:
    return Provenance(settings.sampler, settings.seed, __version__, WORKER)
