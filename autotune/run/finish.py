"""The last stage of a run: rank a study's distinct candidates (one sort, one Pareto front),
verify the top ones with their oracle, and write the leaderboard; for an interrupted run, what
cannot be verified now is written unverified and marked."""

from __future__ import annotations

from pathlib import Path

import optuna

from autotune import record
from autotune.interrupt import StopRequest
from autotune.oracles import configured
from autotune.results import leaderboard as board
from autotune.results import tables
from autotune.results.owner import claim, storage_key
from autotune.run.options import Job, RunOptions, StudyOutcome, verify_top_default
from autotune.run.plan import RunPlan
from autotune.search.problem import Search
from autotune.storage import (
    finished_count,
)
from autotune.storage.names import study_folder
from workloads import Gemm


def finish(
    study: optuna.Study,
    search: Search,
    spec: RunPlan,
    gemm: Gemm | None,
    verify_top: int,
    results: Path | None,
    storage: str | None = None,
    verify: bool = True,
) -> StudyOutcome:
    """Rank the study's distinct candidates, verify the top ones, and (with `results`) write
    results/<study>/leaderboard.parquet, and pareto.parquet for several objectives. `storage`:
    the study's storage address, recorded in the files (autotune.results.owner). Without
    `verify` (an interrupted run) nothing is checked and the files say so: the next reader
    rebuilds them."""
    ranked = board.records(study, search)
    first = (gemm or spec.workload.gemms[0]).shape
    sampler = record.study_sampler(study) or {}
    folder = study_folder(results, study.study_name) if results is not None else None
    info = board.RunInfo(
        study.study_name,
        str(sampler.get("sampler", "")),
        int(sampler.get("seed", 0)),
        first,
        spec.machine,
        configured(spec.the_oracle(), study_folder=folder),  # the schedules imported into it
        spec.objectives,
    )
    rows = board.rows_of(ranked, info, search.families)
    failures = board.annotate(rows, ranked, info, search.families, verify_top) if verify else []
    frame = board.to_frame(rows, info.oracle.measures)
    done = finished_count(study)
    outcome = StudyOutcome(
        study.study_name, gemm, frame, done, len(ranked), failures, verified=verify, study=study
    )
    untouched = done == 0 and gemm is not None and not spec.single  # a GEMM never reached
    if results is not None and folder is not None and not untouched:
        if storage is not None:
            claim(folder, storage, lambda: done)
        metadata = {
            "study": study.study_name,
            "shape": str(first),
            "base_machine": spec.machine.as_dict(),
            "objectives": list(spec.objectives),
            "oracle": spec.oracle,
            "trials": done,
            "workload": None if spec.single else spec.workload.name,
            "gemm": gemm.name if gemm else None,
            "variant": "codesign" if spec.codesign else None,
            "storage": storage_key(storage, results) if storage is not None else None,
            "unverified": not verify,
            **spec.costing_metadata(),
        }
        outcome.paths.append(
            tables.write("leaderboard", frame, folder / "leaderboard.parquet", metadata)
        )
        if len(spec.objectives) > 1:
            front = frame[frame["pareto"] == True].copy() if not frame.empty else frame  # noqa: E712
            if not front.empty:
                front["rank"] = list(range(1, len(front) + 1))
            outcome.paths.append(tables.write("pareto", front, folder / "pareto.parquet", metadata))
    return outcome


def finish_jobs(
    jobs: list[Job], spec: RunPlan, options: RunOptions, stop: StopRequest
) -> list[StudyOutcome]:
    """Rank, verify and write each study. Verification may take long and leaves nothing to
    finish: a Ctrl-C there (or an earlier second one) stops it, and the studies not yet written
    are ranked and written unverified, marked so that the next reader verifies them."""
    verify_top = options.verify_top if options.verify_top is not None else verify_top_default(spec)
    results = options.results if options.write else None
    outcomes: list[StudyOutcome] = []

    def write(job: Job, verify: bool) -> StudyOutcome:
        return finish(
            job.study,
            job.search,
            spec,
            job.gemm,
            verify_top,
            results,
            job.settings.storage_url,
            verify,
        )

    if not stop.forced:
        try:
            with stop.urgently():
                for job in jobs:
                    outcomes.append(write(job, True))
        except KeyboardInterrupt:
            pass
    return outcomes + [write(job, False) for job in jobs[len(outcomes) :]]


def unverified_note(outcomes: list[StudyOutcome], run: str | None) -> str:
    """What an interrupted run wrote without verifying, and the one command that verifies it."""
    names = [o.name for o in outcomes if not o.verified]
    target = run or names[0]
    return (
        f"interrupted: wrote the leaderboard of {len(names)} {'study' if len(names) == 1 else 'studies'} "
        f"from the stored trials, unverified; `autotune leaderboard {target}` verifies "
        f"{'it' if len(names) == 1 else 'them'}"
    )
