"""The last stages of a run, study by study: rank its distinct candidates (one sort, one Pareto
front), verify the top ones with their oracle, and write the leaderboard. `finish` runs the
three on one study (a study rebuilt from its storage, a schedule imported into one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import optuna

from autotune import record
from autotune.oracles import configured
from autotune.results import leaderboard as board
from autotune.results import tables
from autotune.results.owner import claim, storage_key
from autotune.run.jobs import StudyOutcome
from autotune.run.plan import RunPlan
from autotune.search.problem import Search
from autotune.storage import finished_count
from autotune.storage.names import study_folder
from workloads import Gemm


@dataclass
class Ranking:
    """One study's candidates ranked and laid out as leaderboard rows (the rank stage), its top
    ones verified or not (the verify stage)."""

    study: optuna.Study
    search: Search
    gemm: Gemm | None
    info: board.RunInfo
    ranked: list[board.Ranked]
    rows: list[dict[str, object]]
    verified: bool = False
    failures: list[str] = field(default_factory=list)


def rank(
    plan: RunPlan, study: optuna.Study, search: Search, gemm: Gemm | None, results: Path | None
) -> Ranking:
    """The study's distinct candidates, ranked, as leaderboard rows. `results`: the results
    folder, where the schedules imported into the study are kept."""
    ranked = board.records(study, search)
    sampler = record.study_sampler(study) or {}
    folder = study_folder(results, study.study_name) if results is not None else None
    info = board.RunInfo(
        study.study_name,
        str(sampler.get("sampler", "")),
        int(sampler.get("seed", 0)),
        (gemm or plan.workload.gemms[0]).shape,
        plan.machine,
        configured(plan.the_oracle(), study_folder=folder),  # the schedules imported into it
        plan.objectives,
    )
    return Ranking(study, search, gemm, info, ranked, board.rows_of(ranked, info, search.families))


def verify(ranking: Ranking, verify_top: int) -> Ranking:
    """The entries of the top `verify_top` candidates (and, with several objectives, of every
    Pareto candidate) verified by their oracle; their failures named."""
    families = ranking.search.families
    ranking.failures = board.annotate(
        ranking.rows, ranking.ranked, ranking.info, families, verify_top
    )
    ranking.verified = True
    return ranking


def write(
    plan: RunPlan, ranking: Ranking, results: Path | None, storage: str | None = None
) -> StudyOutcome:
    """The study's outcome and (with `results`) results/<study>/leaderboard.parquet, and
    pareto.parquet for several objectives. `storage`: the study's storage address, recorded in
    the files (autotune.results.owner). An unverified ranking (an interrupted run) is written so
    marked: the next reader verifies it."""
    study, gemm = ranking.study, ranking.gemm
    frame = board.to_frame(ranking.rows, ranking.info.oracle.measures)
    done = finished_count(study)
    outcome = StudyOutcome(
        study.study_name,
        gemm,
        frame,
        done,
        len(ranking.ranked),
        ranking.failures,
        verified=ranking.verified,
        study=study,
    )
    untouched = done == 0 and gemm is not None and not plan.single  # a GEMM never reached
    if results is None or untouched:
        return outcome
    folder = study_folder(results, study.study_name)
    if storage is not None:
        claim(folder, storage, lambda: done)
    metadata = {
        "study": study.study_name,
        "shape": str(ranking.info.shape),
        "base_machine": plan.machine.as_dict(),
        "objectives": list(plan.objectives),
        "oracle": plan.oracle,
        "trials": done,
        "workload": None if plan.single else plan.workload.name,
        "gemm": gemm.name if gemm else None,
        "variant": "codesign" if plan.codesign else None,
        "storage": storage_key(storage, results) if storage is not None else None,
        "unverified": not ranking.verified,
        **plan.costing_metadata(),
    }
    outcome.paths.append(
        tables.write("leaderboard", frame, folder / "leaderboard.parquet", metadata)
    )
    if len(plan.objectives) > 1:
        front = frame[frame["pareto"] == True].copy() if not frame.empty else frame  # noqa: E712
        if not front.empty:
            front["rank"] = list(range(1, len(front) + 1))
        outcome.paths.append(tables.write("pareto", front, folder / "pareto.parquet", metadata))
    return outcome


def finish(
    study: optuna.Study,
    search: Search,
    plan: RunPlan,
    gemm: Gemm | None,
    verify_top: int,
    results: Path | None,
    storage: str | None = None,
) -> StudyOutcome:
    """Rank, verify and write one study."""
    ranking = verify(rank(plan, study, search, gemm, results), verify_top)
    return write(plan, ranking, results, storage)


def unverified_note(outcomes: list[StudyOutcome], run: str | None) -> str:
    """What an interrupted run wrote without verifying, and the one command that verifies it."""
    names = [o.name for o in outcomes if not o.verified]
    target = run or names[0]
    return (
        f"interrupted: wrote the leaderboard of {len(names)} {'study' if len(names) == 1 else 'studies'} "
        f"from the stored trials, unverified; `autotune leaderboard {target}` verifies "
        f"{'it' if len(names) == 1 else 'them'}"
    )
