"""Where studies live: the storage addresses `--storage` takes, the default storage of a study
under results/, and opening a storage to run or to read back, every failure a one-line usage
error.

An address is `:memory:` (also `sqlite://` and `sqlite:///:memory:`, SQLite's in-memory
names: one process, one study object shared by the run and its leaderboard), an RDB URL
(`sqlite:///file.db`, `postgresql://...`), or the path of a journal file (an SQLite file given
by path is opened as `sqlite:///path`, as optuna-dashboard does)."""

from __future__ import annotations

import contextlib
import importlib.util
import stat
from pathlib import Path

import optuna
from optuna.storages import JournalStorage

from autotune.errors import AutotuneError, StorageError
from autotune.storage.journal import JournalCorrupt, JournalFile, is_sqlite_file
from autotune.storage.names import (
    ensure_folder,
    input_file,
    name_problem,
    refuse_link,
    study_folder,
)
from autotune.storage.stores import (
    JournalStore,
    MemoryStore,
    RdbStore,
    SqliteStore,
    Store,
    check_integrity,
    open_rdb,
)

# Database drivers that are optional extras: the URL's scheme, the driver module, the extra.
DRIVERS: dict[str, tuple[str, str]] = {
    "postgresql": ("psycopg2", "postgres"),
    "postgresql+psycopg2": ("psycopg2", "postgres"),
    "postgresql+psycopg": ("psycopg", "postgres"),
}

MEMORY = ":memory:"
MEMORY_NAMES = (MEMORY, "sqlite://", "sqlite:///:memory:")
JOURNAL_FILE = "study.journal"  # the default storage, one file per study under results/<study>/
SQLITE_FILE = "study.db"  # the default before the journal: such studies keep their file


def is_memory(address: str) -> bool:
    return address in MEMORY_NAMES


def _rdb_url(address: str) -> str | None:
    """The RDB URL an address names (None for a journal file)."""
    if "://" in address:
        return address
    return f"sqlite:///{address}" if is_sqlite_file(Path(address)) else None


def check_driver(address: str) -> None:
    """A database URL whose driver is an extra that is not installed: one line saying which."""
    scheme = address.partition("://")[0].lower() if "://" in address else ""
    driver, extra = DRIVERS.get(scheme, (None, None))
    if driver is not None and importlib.util.find_spec(driver) is None:
        raise StorageError(
            f"storage {_redacted(address)!r} needs the {driver} driver, which the {extra} extra "
            f"installs: pip install 'autotune[{extra}]'",
            setting="storage",
        )


def _redacted(address: str) -> str:
    """The address without a password (postgresql://user:secret@host/db)."""
    head, sep, tail = address.partition("://")
    who, at, where = tail.rpartition("@")
    if not sep or not at or ":" not in who:
        return address
    return f"{head}://{who.split(':', 1)[0]}:***@{where}"


# --- the default storage under results/ ------------------------------------------------------


def default_storage(results: Path, name: str, create: bool = True) -> str:
    """results/<name>/study.journal; a study begun before the journal keeps its study.db. With
    `create`, its folder is made; without, only checked (a file in the way is refused)."""
    folder = study_folder(results, name)
    older = folder / SQLITE_FILE
    if older.is_file() and not (folder / JOURNAL_FILE).exists():
        return f"sqlite:///{older}"
    for path, what, setting in (
        (results, "results folder", "results"),
        (folder, "study folder", "study"),
    ):
        if create:
            ensure_folder(path, what, setting=setting)
        elif (path.exists() or path.is_symlink()) and not path.is_dir():
            raise StorageError(f"{what} {path} is a file, not a folder", setting=setting)
    journal = folder / JOURNAL_FILE
    refuse_link(journal, "the study's storage", "study")
    if journal.is_dir():
        raise StorageError(
            f"the study's storage {journal} is a directory, not a file", setting="study"
        )
    return str(journal)


def local_storage(results: Path, name: str) -> str | None:
    """The default storage of study `name` if it exists (never creates one); None for a name
    that is not one."""
    if name_problem(name) is not None:
        return None
    folder = study_folder(results, name)
    refuse_link(folder / JOURNAL_FILE, "the study's storage", "study")
    if (folder / JOURNAL_FILE).is_file():
        return str(folder / JOURNAL_FILE)
    return f"sqlite:///{folder / SQLITE_FILE}" if (folder / SQLITE_FILE).is_file() else None


def local_storages(results: Path) -> list[str]:
    """Every default storage under results/, in folder order."""
    found = [(p.parent.name, str(p)) for p in results.glob(f"*/{JOURNAL_FILE}")]
    found += [(p.parent.name, f"sqlite:///{p}") for p in results.glob(f"*/{SQLITE_FILE}")]
    return [address for _, address in sorted(found)]


# --- opening -----------------------------------------------------------------------------------


def check_storage_file(address: str) -> None:
    """Refuse (StorageError, one line) a storage path that exists but is no regular file: a
    folder, a device or a FIFO would take neither a journal nor the workers' lease files."""
    if is_memory(address) or "://" in address:
        return
    path = Path(address)
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # nothing there yet (or unreachable: opening it says why)
    if stat.S_ISDIR(mode):
        raise StorageError(f"storage {address!r} is a directory, not a journal file")
    if not stat.S_ISREG(mode):
        raise StorageError(f"storage {address!r} is not a regular file (a device or a FIFO?)")


def open_store(address: str, study_name: str, heartbeat_seconds: int, grace_seconds: int) -> Store:
    """A storage to run trials in (created if needed)."""
    check_driver(address)
    try:
        if is_memory(address):
            return MemoryStore()
        check_storage_file(address)
        url = _rdb_url(address)
        if url is None:
            return JournalStore(Path(address))
        kind = SqliteStore if url.startswith("sqlite:///") else RdbStore
        store = kind(url, study_name, heartbeat_seconds, grace_seconds)
        check_integrity(store.storage)
        return store
    except JournalCorrupt as exc:
        raise StorageError(f"cannot open storage {address!r}: {exc.reason}") from None
    except StorageError:
        raise
    except (
        Exception
    ) as exc:  # sqlalchemy, the OS and the journal raise many kinds; all mean one thing here
        raise StorageError(f"cannot open storage {address!r}: {_reason(exc)}") from None


def read_storage(address: str) -> optuna.storages.BaseStorage:
    """An existing storage, for reading back."""
    if is_memory(address):
        raise StorageError("an in-memory study ends with its run: there is nothing to read back")
    check_driver(address)
    try:
        url = _rdb_url(address)
        if url is None:
            try:
                input_file(Path(address), "storage file")
            except AutotuneError as exc:
                raise StorageError(str(exc)) from None
            storage: optuna.storages.BaseStorage = JournalStorage(
                JournalFile(Path(address), writable=False)
            )
        else:
            if url.startswith("sqlite:///") and not _sqlite_ready(Path(url[len("sqlite:///") :])):
                raise StorageError(f"no study in {address!r} yet")
            storage = open_rdb(url, create=False)
            check_integrity(storage)
        optuna.get_all_study_names(storage)
        return storage
    except JournalCorrupt as exc:
        raise StorageError(f"cannot read storage {address!r}: {exc.reason}") from None
    except StorageError:
        raise
    except Exception as exc:
        raise StorageError(f"cannot read storage {address!r}: {_reason(exc)}") from None


def _sqlite_ready(path: Path) -> bool:
    """Whether an SQLite file holds Optuna's tables, asked read-only: opening an RDBStorage on a
    file still being set up writes Optuna's version rows, racing the tuner that creates it."""
    import sqlite3

    if not path.is_file():
        return False
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as db:
            return db.execute("SELECT COUNT(*) FROM alembic_version").fetchone()[0] > 0
    except sqlite3.DatabaseError as exc:
        return "no such table" not in str(exc)  # a damaged file: let the integrity check say so


def _reason(exc: BaseException) -> str:
    if isinstance(exc, JournalCorrupt):
        return str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror} ({exc.filename})" if exc.filename else exc.strerror
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def study_names(address: str) -> list[str]:
    """The studies in a storage."""
    return sorted(optuna.get_all_study_names(read_storage(address)))


def read_studies(address: str, names: list[str] | None = None) -> list[optuna.Study]:
    """Existing studies (all of the storage's, or those of `names` it holds), for reading back."""
    storage = read_storage(address)
    held = optuna.get_all_study_names(storage)
    return [
        optuna.load_study(study_name=name, storage=storage)
        for name in sorted(held)
        if names is None or name in names
    ]


def read_study(address: str, name: str) -> optuna.Study | None:
    """An existing study, for reading back (None when the storage has no such study)."""
    found = read_studies(address, [name])
    return found[0] if found else None


def existing_study(address: str, name: str) -> optuna.Study | None:
    """Study `name`, read back, when its storage exists and holds it; None otherwise (nothing is
    created: a storage that does not exist yet holds no study)."""
    url = _rdb_url(address)
    if is_memory(address) or (url is None and not Path(address).is_file()):
        return None
    if url is not None and url.startswith("sqlite:///"):
        if not _sqlite_ready(Path(url[len("sqlite:///") :])):
            return None
    return read_study(address, name)


def finished_trials(address: str, name: str) -> int:
    """How many finished trials (complete or pruned) the storage holds for study `name`, read
    without creating anything: 0 for a storage that does not exist yet or lacks the study."""
    from optuna.trial import TrialState

    if is_memory(address):
        return 0
    url = _rdb_url(address)
    if url is None and not Path(address).is_file():
        return 0
    if (
        url is not None
        and url.startswith("sqlite:///")
        and not _sqlite_ready(Path(url[len("sqlite:///") :]))
    ):
        return 0
    storage = read_storage(address)
    try:
        if name not in optuna.get_all_study_names(storage):
            return 0
        study = optuna.load_study(study_name=name, storage=storage)
        return len(
            study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED))
        )
    finally:
        if hasattr(
            storage, "engine"
        ):  # an SQLite file keeps its WAL file while a connection is open
            storage.engine.dispose()
