"""A study's results as a command finds them: a parquet file, a results folder or a study name.

Results files are caches of the study's storage: a leaderboard that is missing, damaged, stale
(fewer trials than the storage holds) or unverified (an interrupted run) is rebuilt from the
storage with a one-line note; so is a workload's summary, from its GEMM studies. A results file
is read as it stands only when no storage holds its study.

Rebuilding runs the run's last stages again (autotune.run.rebuild): the one place results reads
the run, imported only when a file must be rebuilt."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import optuna

from autotune.errors import AutotuneError, ResultsError, StorageError
from autotune.results import tables
from autotune.results.owner import LEADERBOARD, WORKLOAD, default_storage_in
from autotune.results.readback import Loaded
from autotune.storage import finished_count, local_storage, read_study
from autotune.storage.names import name_problem, shown


def load(path_or_study: str, results: Path = Path("results"), storage: str | None = None) -> Loaded:
    """A parquet path, a results/<study>/ folder, or a study name; a study's results rebuilt
    from its storage when they are missing, damaged, stale or unverified."""
    given = Path(path_or_study)
    if given.is_file() and not (
        given.name in (LEADERBOARD, WORKLOAD) and default_storage_in(given.parent)
    ):
        return Loaded(*tables.read(given), given)
    if given.is_file():
        given = given.parent  # a study's own leaderboard: the study's folder
    if given.is_dir():
        folder = Path(os.path.abspath(given)) if given.name in ("", ".", "..") else given
    else:
        problem = name_problem(path_or_study)
        if problem is not None and ("/" in path_or_study or os.sep in path_or_study):
            raise ResultsError(f"no leaderboard at {shown(path_or_study)}: no such file or folder")
        if problem is not None:
            raise ResultsError(
                f"no leaderboard at {shown(path_or_study)}: not a parquet file or a results "
                f"folder, and not a study name (it {problem})"
            )
        folder = results / path_or_study
    return _load_folder(folder, path_or_study, storage)


def _load_folder(folder: Path, asked: str, storage: str | None) -> Loaded:
    name, root = folder.name, folder.parent
    url = storage or local_storage(root, name)
    path = folder / LEADERBOARD
    study = None
    if url:
        try:
            study = read_study(url, name)
        except StorageError as exc:
            if storage is not None or tables.inspect(path)[0] is None:
                raise
            note(f"warning: {exc}; showing {path} as it was written")
            return Loaded(*tables.read(path), path)
    if study is not None:
        _refresh(study, path, url, explicit=storage is not None)  # type: ignore[arg-type]
    elif url and path.exists():
        note(
            f"warning: the storage {url} holds no study {name!r}; showing {path} as it was written"
        )
    elif (folder / WORKLOAD).exists() or not path.exists():
        _refresh_workload(folder, storage)
    for candidate in (path, folder / WORKLOAD):
        if candidate.exists():
            return _read(candidate, study is None)
    raise ResultsError(
        f"no leaderboard at {shown(asked)} (give a parquet file, a results folder or a study name)"
    )


def _refresh(study: optuna.Study, path: Path, url: str, explicit: bool) -> None:
    """Rebuild the study's leaderboard when it is missing, damaged, stale or unverified."""
    metadata, damage = tables.inspect(path)
    reason = stale(metadata, damage, finished_count(study))
    if reason is None:
        return
    try:
        from autotune.run.rebuild import rebuild

        outcome = rebuild(study, path.parent.parent, storage=url)
    except AutotuneError as exc:
        if explicit or metadata is None:
            raise
        note(f"warning: cannot rebuild {path} ({exc}); showing it as it was written")
        return
    if outcome.paths:  # a workload's GEMM study without trials has no leaderboard
        note(
            f"rebuilt {outcome.paths[0]} from study {study.study_name!r} "
            f"({outcome.trials} finished trials): {reason}"
        )


def _read(path: Path, unsourced: bool) -> Loaded:
    try:
        return Loaded(*tables.read(path), path)
    except ResultsError as exc:
        if unsourced:
            raise ResultsError(f"{exc}; no storage holds its study to rebuild it from") from None
        raise


def note(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def stale(metadata: dict[str, object] | None, damage: str | None, trials: int | None) -> str | None:
    """Why a results file (its metadata, or why it cannot be read) must be rebuilt for a study
    of `trials` finished trials (None: any count)."""
    if damage is not None:
        return f"the file was damaged ({damage})"
    if metadata is None:
        return "there was none"
    if metadata.get("unverified"):
        return "an interrupted run wrote it unverified"
    if trials is not None and metadata.get("trials") != trials:
        return f"the file ranked {metadata.get('trials')} of them"
    return None


# --- a workload's summary ----------------------------------------------------------------------


def _refresh_workload(folder: Path, storage: str | None) -> None:
    """Rebuild results/<run>/workload.parquet from its GEMM studies when it is missing, damaged,
    stale or unverified (nothing happens when no storage holds the run's GEMM studies)."""
    from autotune.run.rebuild import rebuild_workload

    rebuild_workload(folder, storage)
