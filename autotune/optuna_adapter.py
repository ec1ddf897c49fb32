"""Optuna behind one adapter: everything the tuner needs beyond Optuna's public study API.

Here and nowhere else: where a study's storage lives and how it is opened, the lock shared by
every process working on one study, the exact global trial budget, the heartbeat retry of a
dead worker's trial (and the trials killed before their first heartbeat, found with one SQL
query on Optuna's tables), and reading another worker's trial by number. Each Optuna behaviour
this relies on has a test in tests/autotune/test_optuna_adapter.py; pyproject pins the Optuna
major version those tests passed with.

The budget: Optuna's MaxTrialsCallback stops a worker only after its own trial finishes, so N
workers overshoot by up to N - 1 trials, and two may evaluate one candidate at once. Here the
study lock is held from the budget check through Optuna's ask and the sampling of the
candidate, and released (by the objective, `SharedStudy.release`) before the simulation: every
started trial is counted, and a candidate another worker is evaluating is waited for instead
of simulated twice. A trial killed mid-run stays RUNNING until its heartbeat goes stale;
workers that find the budget full of RUNNING trials wait, so a stale one is failed, retried
(RetryHeartbeatStaleTrialCallback) and run, and the study ends with exactly `target` results."""
from __future__ import annotations

import contextlib
import datetime
import fcntl
import os
import socket
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Callable, Iterator

import optuna
from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback
from optuna.study import MaxTrialsCallback
from optuna.trial import FrozenTrial, TrialState
from sqlalchemy import event
from sqlalchemy.engine import Engine

from autotune.errors import UsageError
from autotune.interrupt import STOP

MEMORY = ":memory:"                 # an in-memory study: one process, gone at exit
HEARTBEAT_SECONDS = 5               # RDB heartbeat; a RUNNING trial silent past the grace is failed and retried
GRACE_SECONDS = 20
POLL_SECONDS = 0.2
STORAGE_FILE = "study.db"           # the default storage, one file per study under results/<study>/
DONE = (TrialState.COMPLETE, TrialState.PRUNED)  # trials that consume the budget (a FAIL is retried)
WORKER = f"{socket.gethostname()}:{os.getpid()}"


# --- where studies live -------------------------------------------------------------------


def default_storage(results: Path, name: str) -> str:
    """An embedded SQLite file under results/: no server, and optuna-dashboard opens it."""
    path = results / name / STORAGE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def local_storage(results: Path, name: str) -> str | None:
    """The default storage of study `name` if its file exists (never creates one)."""
    path = results / name / STORAGE_FILE
    return f"sqlite:///{path}" if path.is_file() else None


def local_storages(results: Path) -> list[str]:
    """Every default storage under results/, in name order."""
    return [f"sqlite:///{path}" for path in sorted(results.glob(f"*/{STORAGE_FILE}"))]


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


def open_storage(url: str, heartbeat_seconds: int = HEARTBEAT_SECONDS,
                 grace_seconds: int = GRACE_SECONDS) -> optuna.storages.BaseStorage:
    """Connect (creating tables if needed); an unreachable URL is a one-line usage error."""
    if url == MEMORY:
        return optuna.storages.InMemoryStorage()
    engine_kwargs = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {"pool_pre_ping": True}
    try:
        return RDBStorage(url, engine_kwargs=engine_kwargs, heartbeat_interval=heartbeat_seconds, grace_period=grace_seconds,
                          heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=3))
    except Exception as exc:  # sqlalchemy raises many kinds; all mean the same thing here
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"cannot open storage {url!r}: {reason[:200]}") from None


def _readable(url: str) -> optuna.storages.BaseStorage:
    """An existing storage, for reading back; anything unreadable is a one-line usage error."""
    try:
        storage = open_storage(url)
        optuna.get_all_study_names(storage)
        return storage
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"cannot read storage {url!r}: {str(exc).splitlines()[0][:200]}") from None


def study_names(url: str) -> list[str]:
    """The studies in a storage."""
    return sorted(optuna.get_all_study_names(_readable(url)))


def read_studies(url: str, names: list[str] | None = None) -> list[optuna.Study]:
    """Existing studies (all of the storage's, or those of `names` it holds), for reading back."""
    storage = _readable(url)
    held = optuna.get_all_study_names(storage)
    return [optuna.load_study(study_name=name, storage=storage) for name in sorted(held) if names is None or name in names]


def read_study(url: str, name: str) -> optuna.Study | None:
    """An existing study, for reading back (None when the storage has no such study)."""
    found = read_studies(url, [name])
    return found[0] if found else None


# --- one process's handle on a shared study ------------------------------------------------


class StudyLock:
    """A mutual-exclusion lock shared by every process working on one study: a PostgreSQL
    advisory lock, a file lock beside a SQLite file, or a thread lock in memory."""

    def __init__(self, storage_url: str, study_name: str) -> None:
        self.held = False
        self._thread = threading.Lock()
        self._file = None
        self._conn = None
        if storage_url.startswith("postgresql"):
            import sqlalchemy
            from sqlalchemy.pool import NullPool

            engine = sqlalchemy.create_engine(storage_url, poolclass=NullPool)
            # Session-level advisory locks need a connection of their own, outside transactions;
            # the server drops the lock if this process dies.
            self._conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            self._key = zlib.crc32(f"autotune:{study_name}".encode())
        elif storage_url.startswith("sqlite:///"):
            path = Path(storage_url[len("sqlite:///"):])
            self._file = open(path.with_name(path.name + f".{zlib.crc32(study_name.encode()):08x}.lock"), "a+")

    def acquire(self) -> None:
        self._thread.acquire()
        if self._conn is not None:
            import sqlalchemy

            self._conn.execute(sqlalchemy.text("SELECT pg_advisory_lock(:k)"), {"k": self._key})
        elif self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_EX)
        self.held = True

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        if self._conn is not None:
            import sqlalchemy

            self._conn.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:k)"), {"k": self._key})
        elif self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
        self._thread.release()

    def close(self) -> None:
        self.release()
        if self._conn is not None:
            self._conn.close()
        if self._file is not None:
            self._file.close()


class SharedStudy:
    """One process's connection to a study: the storage it opened, the study lock, and what the
    budget and the objective need from Optuna's storage layer."""

    def __init__(self, url: str, name: str, heartbeat_seconds: int = HEARTBEAT_SECONDS,
                 grace_seconds: int = GRACE_SECONDS) -> None:
        self.url, self.name = url, name
        self.storage = open_storage(url, heartbeat_seconds, grace_seconds)
        self.shared = url != MEMORY
        self.lock = StudyLock(url, name) if self.shared else None
        # We built the storage, so we know whether it beats (Optuna wraps an RDBStorage in a
        # cache, so asking the study's storage with isinstance never held).
        self.heartbeat = isinstance(self.storage, RDBStorage) and self.storage.heartbeat_interval is not None

    def open(self, sampler: optuna.samplers.BaseSampler, directions: list[str]) -> optuna.Study:
        return optuna.create_study(storage=self.storage, study_name=self.name, sampler=sampler,
                                   directions=directions, load_if_exists=True)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the study's lock: e.g. while enqueuing, so that workers starting together do not
        each enqueue the same baseline."""
        if self.lock is None:
            yield
            return
        self.lock.acquire()
        try:
            yield
        finally:
            self.lock.release()

    def release(self) -> None:
        """The objective has sampled its candidate: let the next worker ask."""
        if self.lock is not None:
            self.lock.release()

    def close(self) -> None:
        if self.lock is not None:
            self.lock.close()

    def trial(self, study: optuna.Study, number: int) -> FrozenTrial:
        """Trial `number` as the storage holds it now (another worker may be running it)."""
        study_id = self.storage.get_study_id_from_name(study.study_name)
        return self.storage.get_trial(self.storage.get_trial_id_from_study_id_trial_number(study_id, number))

    def fail_stale(self, study: optuna.Study) -> None:
        """Fail (and, through the heartbeat callback, retry) the trials of dead workers."""
        if self.heartbeat:
            optuna.storages.fail_stale_trials(study)
            self.fail_silent(study)

    def fail_silent(self, study: optuna.Study) -> list[int]:
        """Fail RUNNING trials that never sent a heartbeat and started longer than the grace period
        ago: a process killed between the ask and its first heartbeat leaves one, and Optuna's
        stale check skips trials without a heartbeat, so the budget would wait for it forever."""
        import sqlalchemy

        storage = self.storage
        assert isinstance(storage, RDBStorage)
        grace = storage.grace_period if storage.grace_period is not None else 2 * storage.heartbeat_interval
        cutoff = datetime.datetime.now() - datetime.timedelta(seconds=grace)  # Optuna stamps starts with local now()
        with storage.engine.connect() as connection:
            rows = connection.execute(sqlalchemy.text(
                "SELECT t.trial_id FROM trials t LEFT JOIN trial_heartbeats h ON h.trial_id = t.trial_id "
                "WHERE t.study_id = :study AND t.state = 'RUNNING' AND h.trial_id IS NULL AND t.datetime_start < :cutoff"),
                {"study": storage.get_study_id_from_name(study.study_name), "cutoff": cutoff}).fetchall()
        failed = []
        for (trial_id,) in rows:
            try:
                if storage.set_trial_state_values(trial_id, state=TrialState.FAIL):
                    failed.append(trial_id)
            except optuna.exceptions.UpdateFinishedTrialError:
                pass  # it finished (or another worker failed it) meanwhile
        return failed

    def wait_until_finished(self, study: optuna.Study, number: int) -> FrozenTrial:
        """Trial `number` once it has finished. Its worker may have died: stale trials are
        failed meanwhile, under the lock, so that the retry is queued before anyone counts the
        budget again (or a new trial takes the failed trial's place and the retry never runs)."""
        while True:
            found = self.trial(study, number)
            if found.state.is_finished():
                return found
            time.sleep(POLL_SECONDS)
            with self.locked():
                self.fail_stale(study)

    def optimize(self, study: optuna.Study, objective: Callable[[optuna.Trial], object], target: int,
                 timeout: float | None, progress: bool) -> None:
        """Run trials until the study holds `target` finished trials (a budget shared by every
        worker) or the timeout passes; Ctrl-C (STOP) ends it after the trial in flight."""
        if finished_count(study) >= target:
            return
        if self.shared:
            self._run_budget(study, objective, target, timeout, progress)
            return
        study.optimize(objective, n_trials=target - finished_count(study), timeout=timeout,  # type: ignore[arg-type]
                       callbacks=[MaxTrialsCallback(target, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)),
                                  _stop_if_requested],
                       show_progress_bar=progress, gc_after_trial=False)

    def _run_budget(self, study: optuna.Study, objective: Callable[[optuna.Trial], object], target: int,
                    timeout: float | None, progress: bool) -> None:
        assert self.lock is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        bar = _bar(progress, target)
        try:
            while (deadline is None or time.monotonic() < deadline) and not STOP.requested:
                self.lock.acquire()
                try:
                    self.fail_stale(study)
                    trials = study.get_trials(deepcopy=False, states=DONE + (TrialState.RUNNING,))
                    done = sum(t.state in DONE for t in trials)
                    if bar is not None:
                        bar.n = done
                        bar.refresh()
                    if done >= target:
                        return
                    if len(trials) < target:  # a slot is free: ask (under the lock) and run
                        study.optimize(objective, n_trials=1, gc_after_trial=False)  # type: ignore[arg-type]
                        continue
                finally:
                    self.lock.release()
                time.sleep(POLL_SECONDS)  # the rest of the budget is RUNNING elsewhere; a dead one goes stale
        finally:
            if bar is not None:
                bar.close()


def finished_count(study: optuna.Study) -> int:
    # A FAILed trial (a worker died; the heartbeat retries it) does not consume the budget.
    return len(study.get_trials(deepcopy=False, states=DONE))


def _stop_if_requested(study: optuna.Study, _trial: FrozenTrial) -> None:
    if STOP.requested:
        study.stop()


def _bar(progress: bool, target: int):  # type: ignore[no-untyped-def]
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=target, unit="trial", file=sys.stderr)


def set_trial_user_attr(study: optuna.Study, trial: FrozenTrial, key: str, value: object) -> None:
    """A user attribute on a trial a sampler holds as a FrozenTrial (before it runs): the
    storage call Optuna's own samplers make for their system attributes."""
    study._storage.set_trial_user_attr(trial._trial_id, key, value)
