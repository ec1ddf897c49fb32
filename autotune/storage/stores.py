"""The kinds of storage a study can live in, behind one interface (`Store`): Optuna's storage
object, the lock every process working on the study shares, and how the trials of a dead
worker are found.

- `JournalStore` (the default, one machine): Optuna's JournalStorage on our `JournalFile`.
  The study lock is the journal's own flock; a worker holds a `Lease`, so a RUNNING trial
  whose owner's lease is free belongs to a dead worker.
- `RdbStore` (`postgresql://...`) and `SqliteStore` (`sqlite:///...`): Optuna's RDBStorage. The
  lock is a PostgreSQL advisory lock or a file lock beside the SQLite file; a dead worker's
  trial is found by Optuna's heartbeat (plus `fail_silent` for one killed before its first
  heartbeat).
- `MemoryStore`: one process, gone at exit."""

from __future__ import annotations

import datetime
import errno
import secrets
import time
import zlib
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Callable

import optuna
from optuna.storages import JournalStorage, RDBStorage, RetryHeartbeatStaleTrialCallback
from optuna.trial import FrozenTrial, TrialState
from sqlalchemy import event
from sqlalchemy.engine import Engine

from autotune.storage import locks
from autotune.storage.journal import JournalFile

OWNER_ATTR = "autotune:owner"  # a trial's system attribute: the token of the worker that runs it
MAX_RETRY = 3  # a dead worker's trial is retried this many times


class Store(ABC):
    storage: optuna.storages.BaseStorage
    shared: bool  # other processes may work on the study (the budget is kept under the lock)
    token: str  # this handle's name in the study's run record
    heartbeat: bool  # Optuna's heartbeat thread runs with each trial

    @abstractmethod
    def acquire(self) -> None: ...

    @abstractmethod
    def release(self) -> None: ...

    @abstractmethod
    def alive(self, token: str, seen: float) -> bool:
        """Whether the worker registered as `token`, last seen at `seen` (epoch seconds), lives."""

    @abstractmethod
    def fail_dead(self, study: optuna.Study) -> None:
        """Fail the RUNNING trials of dead workers and queue their retries (under the lock)."""

    def close(self) -> None:
        pass


class MemoryStore(Store):
    def __init__(self) -> None:
        self.storage = optuna.storages.InMemoryStorage()
        self.shared, self.token, self.heartbeat = False, "memory", False
        self._lock = locks.ThreadLock()

    def acquire(self) -> None:
        self._lock.acquire()

    def release(self) -> None:
        self._lock.release()

    def alive(self, token: str, seen: float) -> bool:
        return False  # nobody else can reach an in-memory study

    def fail_dead(self, study: optuna.Study) -> None:
        pass


class JournalStore(Store):
    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.parent.exists():  # as for an SQLite file: the missing folder is named
            raise FileNotFoundError(errno.ENOENT, "no such folder", str(path.parent))
        self.file = JournalFile(path)
        try:
            self.storage = JournalStorage(self.file)  # replays the file
            self.file.check_tail()
            self.lease = locks.Lease(path)
        except BaseException:
            self.file.close()
            raise
        self.shared, self.token, self.heartbeat = True, self.lease.token, False

    def acquire(self) -> None:
        self.file.acquire()

    def release(self) -> None:
        self.file.release()

    def alive(self, token: str, seen: float) -> bool:
        return token == self.token or locks.alive(self.path, token)

    def fail_dead(self, study: optuna.Study) -> None:
        """A RUNNING trial whose owner's lease is free is a dead worker's; one without an owner was
        left by a worker killed between the ask and the owner's write (both happen under the
        lock, which we hold now), or made by another program."""
        for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            owner = trial.system_attrs.get(OWNER_ATTR)
            if owner is None or not self.alive(str(owner), 0.0):
                fail_and_retry(study, self.storage, trial._trial_id)

    def close(self) -> None:
        self.lease.close()
        self.file.close()


class RdbStore(Store):
    """A database server: PostgreSQL (an advisory lock), or another (no lock across processes:
    the budget is then kept per process). Workers of a run are alive while seen within the grace."""

    storage: RDBStorage

    def __init__(
        self, url: str, study_name: str, heartbeat_seconds: int, grace_seconds: int
    ) -> None:
        self.url, self.grace = url, grace_seconds
        self._lock = self._make_lock(url, study_name)
        self._lock.acquire()  # processes creating the tables at the same moment would collide
        try:
            self.storage = _created(lambda: open_rdb(url, heartbeat_seconds, grace_seconds))
        finally:
            self._lock.release()
        self.shared, self.heartbeat = True, True
        self.token = secrets.token_hex(6)

    def _make_lock(
        self, url: str, study_name: str
    ) -> locks.ThreadLock | locks.FileLock | locks.AdvisoryLock:
        return (
            locks.AdvisoryLock(url, study_name)
            if url.startswith("postgresql")
            else locks.ThreadLock()
        )

    def acquire(self) -> None:
        self._lock.acquire()

    def release(self) -> None:
        self._lock.release()

    def alive(self, token: str, seen: float) -> bool:
        return token == self.token or time.time() - seen < self.grace

    def fail_dead(self, study: optuna.Study) -> None:
        optuna.storages.fail_stale_trials(study)
        self.fail_silent(study)

    def fail_silent(self, study: optuna.Study) -> list[int]:
        """Fail RUNNING trials that never sent a heartbeat and started longer than the grace period
        ago: a process killed between the ask and its first heartbeat leaves one, and Optuna's
        stale check skips trials without a heartbeat, so the budget would wait for it forever."""
        import sqlalchemy

        storage = self.storage
        assert isinstance(storage, RDBStorage)
        grace = (
            storage.grace_period
            if storage.grace_period is not None
            else 2 * (storage.heartbeat_interval or 0)
        )
        cutoff = datetime.datetime.now() - datetime.timedelta(
            seconds=grace
        )  # Optuna stamps starts with local now()
        with storage.engine.connect() as connection:
            rows = connection.execute(
                sqlalchemy.text(
                    "SELECT t.trial_id FROM trials t LEFT JOIN trial_heartbeats h ON h.trial_id = t.trial_id "
                    "WHERE t.study_id = :study AND t.state = 'RUNNING' AND h.trial_id IS NULL AND t.datetime_start < :cutoff"
                ),
                {"study": storage.get_study_id_from_name(study.study_name), "cutoff": cutoff},
            ).fetchall()
        return [trial_id for (trial_id,) in rows if fail(storage, trial_id)]

    def close(self) -> None:
        self.storage.engine.dispose()  # the last connection to an SQLite file folds its WAL back in
        self._lock.close()


class SqliteStore(RdbStore):
    """An SQLite file: on this machine, so workers hold leases beside it, as on a journal."""

    def __init__(
        self, url: str, study_name: str, heartbeat_seconds: int, grace_seconds: int
    ) -> None:
        self.path = Path(url[len("sqlite:///") :])
        if not self.path.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, "no such folder", str(self.path.parent))
        super().__init__(url, study_name, heartbeat_seconds, grace_seconds)
        try:
            self.lease = locks.Lease(self.path)
        except BaseException:
            super().close()
            raise
        self.token = self.lease.token

    def _make_lock(self, url: str, study_name: str) -> locks.FileLock:
        return locks.FileLock(
            self.path.with_name(self.path.name + f".{zlib.crc32(study_name.encode()):08x}.lock")
        )

    def alive(self, token: str, seen: float) -> bool:
        return token == self.token or locks.alive(self.path, token)

    def close(self) -> None:
        super().close()
        self.lease.close()


def _sqlite_pragmas(connection, _record) -> None:  # type: ignore[no-untyped-def]
    # WAL and relaxed syncing: a commit per trial no longer waits for the disk, and readers
    # (other workers, optuna-dashboard) don't block the writer. A crash loses at most the last
    # commits of the OS buffer, never the file's consistency.
    if type(connection).__module__.startswith("sqlite3"):
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


event.listen(Engine, "connect", _sqlite_pragmas)


def _created(make: Callable[[], RDBStorage]) -> RDBStorage:
    """Creating the tables (and Optuna's version rows) races any process that opens the database
    without our lock (optuna-dashboard, a reader): what it created first is what we wanted, and a
    lock it holds for a moment (SQLite reports "database is locked" at once when switching to
    WAL) is waited out."""
    import sqlalchemy.exc

    for attempt in range(5):
        try:
            return make()
        except (
            sqlalchemy.exc.IntegrityError,
            sqlalchemy.exc.OperationalError,
            sqlalchemy.exc.ProgrammingError,
        ) as exc:
            if attempt == 4 or not any(
                w in str(exc)
                for w in (
                    "already exists",
                    "UNIQUE constraint",
                    "duplicate key",
                    "database is locked",
                )
            ):
                raise
            time.sleep(0.1 * (attempt + 1))
    raise AssertionError("unreachable")


def open_rdb(
    url: str,
    heartbeat_seconds: int | None = None,
    grace_seconds: int | None = None,
    create: bool = True,
) -> RDBStorage:
    """Optuna's RDB storage; `create=False` (reading back) never creates its tables."""
    engine_kwargs = (
        {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {"pool_pre_ping": True}
    )
    if heartbeat_seconds is None:
        return RDBStorage(url, engine_kwargs=engine_kwargs, skip_table_creation=not create)
    return RDBStorage(
        url,
        engine_kwargs=engine_kwargs,
        heartbeat_interval=heartbeat_seconds,
        grace_period=grace_seconds,
        heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY),
    )


def fail(storage: optuna.storages.BaseStorage, trial_id: int) -> bool:
    try:
        return storage.set_trial_state_values(trial_id, state=TrialState.FAIL)
    except optuna.exceptions.UpdateFinishedTrialError:
        return False  # it finished (or another worker failed it) meanwhile


def fail_and_retry(
    study: optuna.Study, storage: optuna.storages.BaseStorage, trial_id: int
) -> None:
    """What Optuna's heartbeat does with a stale trial: FAIL it and enqueue its retry."""
    if fail(storage, trial_id):
        failed: FrozenTrial = storage.get_trial(trial_id)
        RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY)(study, failed)


def check_integrity(storage: RDBStorage) -> None:
    """SQLite damage shows only when a damaged page is read, mid-run: check every page up front
    (`PRAGMA quick_check`, milliseconds for a study's file)."""
    if storage.engine.dialect.name != "sqlite":
        return
    import sqlalchemy

    with storage.engine.connect() as connection:
        found = [row[0] for row in connection.execute(sqlalchemy.text("PRAGMA quick_check"))]
    if found != ["ok"]:
        raise RuntimeError(f"the database is damaged ({found[0]})")
