"""A study's results rebuilt from its storage alone: the run's last stages (rank, verify, write)
on a stored study, with the plan it stored (after a kill, or with newer trials); and a workload
run's summary from its GEMM studies. autotune.results.load asks for these when a results file is
missing, damaged, stale or unverified."""

from __future__ import annotations

from pathlib import Path

import optuna
import pandas as pd

from autotune import record
from autotune.errors import AutotuneError, StudyError
from autotune.results import tables
from autotune.results.load import load, note, stale
from autotune.results.owner import WORKLOAD
from autotune.run.finish import finish
from autotune.run.jobs import StudyOutcome
from autotune.run.options import verify_top_default
from autotune.run.plan import RunPlan
from autotune.run.summary import summarise
from autotune.storage import finished_count, local_storages, read_studies
from autotune.storage.names import member_prefix


def rebuild(
    study: optuna.Study,
    results: Path | None,
    verify_top: int | None = None,
    storage: str | None = None,
) -> StudyOutcome:
    """A study's results from its storage alone (after a kill, or with newer trials)."""
    data = record.study_plan(study)
    if data is None:
        raise StudyError(
            f"study {study.study_name!r} predates stored run settings: "
            f"resume it with `tune` to write its leaderboard"
        )
    plan = RunPlan.from_json(data)
    gemm_name = record.study_gemm(study)
    for gemm, search in plan.searches():
        if gemm is None or plan.single or gemm.name == gemm_name:
            return finish(
                study,
                search,
                plan,
                gemm,
                verify_top if verify_top is not None else verify_top_default(plan),
                results,
                storage,
            )
    raise StudyError(
        f"study {study.study_name!r}: GEMM {gemm_name!r} is not in its stored workload"
    )


# --- a workload's summary ----------------------------------------------------------------------


def rebuild_workload(folder: Path, storage: str | None) -> None:
    """Rebuild results/<run>/workload.parquet from its GEMM studies when it is missing, damaged,
    stale or unverified (nothing happens when no storage holds the run's GEMM studies)."""
    run, root = folder.name, folder.parent
    found = _gemm_studies(run, root, storage)
    if found is None:
        return
    plan, studies = found
    path = folder / WORKLOAD
    metadata, damage = tables.inspect(path)
    current = {gemm: finished_count(study) for gemm, (study, _) in studies.items()}
    reason = stale(metadata, damage, None)
    if reason is None:
        rows = {
            str(r["gemm"]): r.get("trials") for r in tables.read(path)[0].to_dict(orient="records")
        }
        reason = None if rows == current else "its GEMM studies hold other trials"
    if reason is None:
        return
    outcomes = []
    for gemm in plan.workload.gemms:
        study, url = studies[gemm.name]
        if current[gemm.name] == 0:  # never reached (an interrupted run): a row without cycles
            outcomes.append(StudyOutcome(study.study_name, gemm, pd.DataFrame(), 0, 0, []))
            continue
        loaded = load(str(root / study.study_name), root, url if storage else None)
        outcomes.append(
            StudyOutcome(
                study.study_name, gemm, loaded.frame, current[gemm.name], len(loaded.frame), []
            )
        )
    summarise(plan, run, outcomes, root, studies[plan.workload.gemms[0].name][1])
    note(f"rebuilt {path} from the {len(outcomes)} GEMM studies of {run!r}: {reason}")


def _gemm_studies(
    run: str, root: Path, storage: str | None
) -> tuple[RunPlan, dict[str, tuple[optuna.Study, str]]] | None:
    """The plan of workload run `run` and each GEMM's study (with its storage), when every one
    of them is found."""
    urls = (
        [storage]
        if storage
        else [u for u in local_storages(root) if _folder_of(u).startswith(member_prefix(run))]
    )
    studies: dict[str, tuple[optuna.Study, str]] = {}
    plan = None
    for url in urls:
        try:
            held = read_studies(url)
        except AutotuneError:
            continue
        for study in held:
            if (
                not study.study_name.startswith(member_prefix(run))
                or record.study_plan(study) is None
            ):
                continue
            plan = RunPlan.from_json(record.study_plan(study))  # type: ignore[arg-type]
            gemm = record.study_gemm(study)
            if (
                plan.single
                or plan.codesign
                or plan.study_name(run, _gemm(plan, gemm)) != study.study_name
            ):
                continue
            plan = plan or plan
            studies[str(gemm)] = (study, url)
    if plan is None or any(g.name not in studies for g in plan.workload.gemms):
        return None
    return plan, studies


def _gemm(plan: RunPlan, name: str | None):  # type: ignore[no-untyped-def]
    return next((g for g in plan.workload.gemms if g.name == name), None)


def _folder_of(url: str) -> str:
    """The study folder's name of a default storage under results/."""
    return Path(url.removeprefix("sqlite:///")).parent.name
