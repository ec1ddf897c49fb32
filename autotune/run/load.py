"""A study's results as a command finds them: a parquet file, a results folder or a study name.
A study's leaderboard is rebuilt from its storage when the file is missing or holds fewer
trials than the storage (a run killed with `kill -9`, or newer trials)."""
from __future__ import annotations

import sys
from pathlib import Path

from autotune.errors import AutotuneError, ResultsError
from autotune.results import tables
from autotune.results.readback import Loaded
from autotune.run.pipeline import rebuild
from autotune.storage import finished_count, local_storage, read_study


def load(path_or_study: str, results: Path = Path("results"), storage: str | None = None) -> Loaded:
    """A parquet path, a results/<study>/ folder, or a study name. A study's leaderboard is
    rebuilt from its storage when the file is missing or holds fewer trials than the storage."""
    given = Path(path_or_study)
    if given.is_file():
        return Loaded(*tables.read(given), given)
    folder = given if given.is_dir() else results / path_or_study
    name = folder.name
    url = storage or local_storage(folder.parent, name)
    path = folder / "leaderboard.parquet"
    study = read_study(url, name) if url else None
    if study is not None:
        metadata = tables.read(path)[1] if path.is_file() else {}
        if metadata.get("trials") != finished_count(study):
            try:
                outcome = rebuild(study, folder.parent)
            except AutotuneError:
                if not path.is_file():
                    raise
            else:
                print(f"rebuilt {outcome.paths[0]} from study {name!r} ({outcome.trials} finished trials)", file=sys.stderr)
    for candidate in (path, folder / "workload.parquet"):
        if candidate.is_file():
            return Loaded(*tables.read(candidate), candidate)
    raise ResultsError(f"no leaderboard at {path_or_study!r} (give a parquet file, a results folder or a study name)")
