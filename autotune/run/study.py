"""Opening a run's study: its settings, the study itself with its sampler, the checks a resumed
study must pass (the same problem, sampler and seed), and who runs its trials."""

from __future__ import annotations

import optuna

from autotune import __version__, record
from autotune.errors import StudyError
from autotune.record import Provenance
from autotune.run.options import RunOptions, StudySettings
from autotune.run.plan import RunPlan
from autotune.search.problem import Search, directions
from autotune.search.sampling import make_sampler
from autotune.storage import (
    GRACE_SECONDS,
    HEARTBEAT_SECONDS,
    WORKER,
    SharedStudy,
    default_storage,
)
from search_spaces.workload import Gemm


def settings_for(spec: RunPlan, options: RunOptions, name: str) -> StudySettings:
    url = options.storage or default_storage(options.results, name, create=False)
    beat = options.heartbeat
    return StudySettings(
        name,
        url,
        options.sampler,
        options.seed,
        spec.objectives,
        beat or HEARTBEAT_SECONDS,
        2 * beat if beat else GRACE_SECONDS,
    )


def open_study(
    settings: StudySettings, search: Search, seed_offset: int = 0
) -> tuple[SharedStudy, optuna.Study]:
    shared = SharedStudy(
        settings.storage_url, settings.name, settings.heartbeat_seconds, settings.grace_seconds
    )
    study = shared.open(
        make_sampler(settings.sampler, settings.seed + seed_offset, search),
        directions(settings.objectives),
    )
    return shared, study


def check_study(study: optuna.Study, spec: RunPlan, gemm: Gemm | None, options: RunOptions) -> None:
    """A resumed study must be about the same thing, and run by the same sampler and seed
    unless the user allows the change (each trial records its own)."""
    identity, name = spec.identity(gemm), study.study_name
    recorded = record.study_identity(study)
    if recorded is None:
        study.set_user_attr(record.STUDY_IDENTITY, identity)
    elif recorded != identity:
        differs = sorted(
            k for k in set(recorded) | set(identity) if recorded.get(k) != identity.get(k)
        )
        if "encoding" in differs:
            raise StudyError(encoding_refusal(name, recorded, options.sampler))
        raise StudyError(
            f"study {name!r} already exists with a different {', '.join(differs)} "
            f"({'; '.join(f'{k}: {recorded.get(k)}' for k in differs)}); choose another study name",
            setting="study",
        )
    if record.study_plan(study) is None:
        study.set_user_attr(record.STUDY_PLAN, spec.to_json())
        study.set_user_attr(record.STUDY_GEMM, gemm.name if gemm and not spec.single else None)
    wanted = {"sampler": options.sampler, "seed": options.seed}
    before = record.study_sampler(study)
    if before is not None and before != wanted and not options.allow_sampler_change:
        raise StudyError(
            f"study {name!r} was run with sampler {before['sampler']} and seed {before['seed']}; "
            f"resuming it with sampler {options.sampler} and seed {options.seed} needs allow_sampler_change=True"
        )
    if before != wanted:
        study.set_user_attr(record.STUDY_SAMPLER, wanted)


def encoding_refusal(name: str, recorded: dict[str, object], sampler: str) -> str:
    """Why a study cannot be resumed with this sampler's encoding, and how to resume it."""
    if "encoding" not in recorded:
        return (
            f"study {name!r} was made with the flat encoding (the samplers tpe, random, grid and nsga2): "
            f"resume it with sampler=tpe spaces={recorded.get('spaces')} (or choose another study name)"
        )
    return (
        f"study {name!r} was made with the {recorded['encoding']} encoding of the guided sampler, which "
        f"sampler {sampler} does not use: resume it with sampler=guided (or choose another study name)"
    )


def provenance(settings: StudySettings) -> Provenance:
    return Provenance(settings.sampler, settings.seed, __version__, WORKER)
