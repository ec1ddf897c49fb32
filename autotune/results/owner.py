"""Which storage a study's results folder belongs to, so that nothing replaces results that its
own storage could not rebuild.

A leaderboard records the storage it was ranked from (`storage` in its metadata: a file's path
relative to the results folder, so a moved folder still matches; an RDB URL without its
password; `:memory:`) and how many finished trials it ranks. A run or a rebuild may write
results/<study>/ only when

- the folder holds no default storage of another study (results/<study>/study.journal or
  study.db that is not this run's storage), and
- any leaderboard there was ranked from this run's storage, which still holds at least the
  trials it lists (a storage emptied or replaced since is refused with the way to recover;
  an in-memory study never replaces an earlier leaderboard: nothing could rebuild it)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from autotune.errors import StudyError

LEADERBOARD = "leaderboard.parquet"
PARETO = "pareto.parquet"
WORKLOAD = "workload.parquet"
MEMORY = ":memory:"
_MEMORY_NAMES = (MEMORY, "sqlite://", "sqlite:///:memory:")
_DEFAULT_STORAGES = ("study.journal", "study.db")
_PASSWORD = re.compile(r"(//[^:/@]+):[^@/]*@")


def storage_key(url: str, root: Path) -> str:
    """How results name a storage: comparable between runs, free of passwords."""
    if url in _MEMORY_NAMES:
        return MEMORY
    path = (
        url[len("sqlite:///") :] if url.startswith("sqlite:///") else None if "://" in url else url
    )
    if path is None:
        return _PASSWORD.sub(r"\1:***@", url)
    resolved = Path(os.path.abspath(path))
    try:
        key = resolved.relative_to(Path(os.path.abspath(root))).as_posix()
    except ValueError:
        key = str(resolved)
    return _utf8(key)


def _utf8(path: str) -> str:
    """A path as UTF-8 text, whatever the locale: under an ASCII one Python holds 'ünï' as
    surrogate escapes, and the key must match the one a UTF-8 run recorded."""
    try:
        return os.fsencode(path).decode("utf-8", "surrogateescape")
    except UnicodeError:
        return path


@dataclass(frozen=True)
class Written:
    """What a results file says about itself (None fields: it does not say, or cannot be read)."""

    path: Path
    storage: str | None
    trials: int | None
    damage: str | None = None  # why the file cannot be read
    newer: bool = False  # written by a newer autotune: never replaced


def written(path: Path) -> Written | None:
    """The metadata of a results file, read from its footer alone; None when there is none."""
    if not path.is_file():
        return None
    try:
        import pyarrow.parquet as pq

        from autotune.results.files import pyarrow_file, schema_damage

        with pyarrow_file(path, "rb") as where:
            schema = pq.read_schema(where)
        damage = schema_damage(schema)
        if damage is not None:
            return Written(path, None, None, damage)
        raw = (schema.metadata or {}).get(b"autotune")
        metadata = json.loads(raw) if raw else {}
    except Exception as exc:  # pyarrow and the OS raise many kinds; all mean: damaged
        text = str(exc).strip().splitlines()
        return Written(path, None, None, text[0][:200] if text else type(exc).__name__)
    if not isinstance(metadata, dict):
        return Written(path, None, None, "its metadata is not autotune's")
    trials = metadata.get("trials")
    storage = metadata.get("storage")
    return Written(
        path,
        storage if isinstance(storage, str) else None,
        trials if isinstance(trials, int) and not isinstance(trials, bool) else None,
        newer=_newer(metadata),
    )


def _newer(metadata: dict[str, object]) -> bool:
    """Whether a results file is of a schema newer than this autotune writes."""
    from autotune.results.tables import SCHEMAS

    schema, newest = metadata.get("schema"), SCHEMAS.get(str(metadata.get("kind")))
    return isinstance(schema, int) and newest is not None and schema > newest


def default_storage_in(folder: Path) -> Path | None:
    """The study storage file kept in a results folder (study.journal, or an older study.db)."""
    for name in _DEFAULT_STORAGES:
        if (folder / name).is_file():
            return folder / name
    return None


def claim(folder: Path, url: str, stored_trials: Callable[[], int]) -> None:
    """Refuse (StudyError, one line) writing the results of the study in `url` into `folder`
    when they would replace results that storage cannot rebuild. `stored_trials`: how many
    finished trials the storage holds for the study (asked only when it matters)."""
    root = folder.parent
    key = storage_key(url, root)
    own = default_storage_in(folder)
    if own is not None and storage_key(str(own), root) != key and own.stat().st_size > 0:
        raise StudyError(
            f"the results folder {folder} belongs to the study stored in {own}, not to "
            f"this study's storage {shown_storage(url)}: give another study name or results folder"
        )
    for name in (LEADERBOARD, WORKLOAD):
        found = written(folder / name)
        if found is not None:
            _check(found, url, key, root, stored_trials)


def shown_storage(key: str, root: Path | None = None) -> str:
    """A storage as messages name it: a recorded path relative to the results folder in full."""
    if root is None or key == MEMORY or "://" in key or os.path.isabs(key):
        return key
    return str(root / key)


def _check(
    found: Written, url: str, key: str, root: Path, stored_trials: Callable[[], int]
) -> None:
    other = "give another study name or results folder"
    if found.newer:
        raise StudyError(
            f"{found.path} was written by a newer autotune: upgrade autotune, or {other}"
        )
    if found.storage is not None and found.storage != key:
        raise StudyError(
            f"{found.path} was ranked from the storage {shown_storage(found.storage, root)}, "
            f"not from this study's {shown_storage(url)}: {other}"
        )
    if key == MEMORY:
        raise StudyError(
            f"{found.path} would be replaced by an in-memory study, and nothing could "
            f"rebuild it: {other}"
        )
    if found.path.name == WORKLOAD:
        return  # a workload's summary: each GEMM study's own leaderboard is checked
    held = stored_trials()
    move = f"or move {found.path} away to start anew"
    if found.damage is not None and held == 0:
        raise StudyError(
            f"{found.path} is damaged ({found.damage}) and its storage {shown_storage(url)} "
            f"holds no trials to rebuild it from: restore the storage from a backup, {move}"
        )
    if found.trials is not None and held < found.trials:
        raise StudyError(
            f"{found.path} lists {found.trials} finished trials but its storage "
            f"{shown_storage(url)} holds {held} (emptied or replaced): restore the storage "
            f"from a backup, {move} (`autotune leaderboard {found.path}` still reads it)"
        )
