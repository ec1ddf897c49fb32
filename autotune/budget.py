"""A global trial budget that holds exactly when several workers share one study.

Optuna's MaxTrialsCallback stops a worker only after its own trial finishes, so N workers
overshoot by up to N - 1 trials, and two workers may evaluate the same candidate at once.
Here a per-study lock (a PostgreSQL advisory lock, a file lock beside a SQLite file, a thread
lock in memory) is held from the budget check through Optuna's ask and the sampling of the
candidate, and released before the simulation: so every started trial is counted, and a
candidate another worker is evaluating right now is waited for instead of simulated twice.
A trial killed mid-run stays RUNNING until the heartbeat marks it stale; workers that find the
budget full of RUNNING trials wait, so a stale one is failed, retried (RetryHeartbeatStaleTrial-
Callback) and run, and the study still ends with exactly `target` results."""
from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import threading
import time
import zlib
from pathlib import Path
from typing import Iterator

import optuna
from optuna.trial import TrialState

from autotune.interrupt import STOP
from autotune.objective import RESULT_ATTR, Objective, candidate_from_params, canonical

DONE = (TrialState.COMPLETE, TrialState.PRUNED)  # trials that consume the budget (a FAIL is retried)
POLL_SECONDS = 0.2
WORKER_ATTR = "worker"
WORKER = f"{socket.gethostname()}:{os.getpid()}"


class StudyLock:
    """A mutual-exclusion lock shared by every process working on one study."""

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


@contextlib.contextmanager
def locked(study: optuna.Study, name: str) -> Iterator[None]:
    """Hold the study's lock (a no-op for in-memory storage): e.g. while enqueuing, so that
    workers starting together do not each enqueue the same baseline."""
    storage = getattr(study._storage, "_backend", study._storage)  # Optuna wraps an RDBStorage in a cache
    if not isinstance(storage, optuna.storages.RDBStorage):
        yield
        return
    lock = StudyLock(storage.engine.url.render_as_string(hide_password=False), name)
    lock.acquire()
    try:
        yield
    finally:
        lock.close()


class SharedObjective(Objective):
    """The tuner's objective, releasing the study lock once the candidate is sampled; a
    candidate that another worker is evaluating is waited for and answered from its result."""

    def __init__(self, problem, study: optuna.Study, objectives, lock: StudyLock) -> None:
        super().__init__(problem, study, objectives)
        self.study = study
        self.lock = lock
        self._learned: set[int] = set()

    def __call__(self, trial: optuna.Trial) -> float | tuple[float, ...]:
        try:
            trial.set_user_attr(WORKER_ATTR, WORKER)  # who holds a RUNNING trial (operations, tests)
            candidate = self.candidate(trial)
            key = candidate.key()
            twin = None if key in self.cache else self._refresh(key, trial.number)
        finally:
            self.lock.release()
        attrs = self._wait_for(twin) if twin is not None and key not in self.cache else None
        return self.record(trial, attrs if attrs is not None else self.result(candidate, trial.number))

    def _refresh(self, key: str, mine: int) -> optuna.trial.FrozenTrial | None:
        """Learn other workers' results; return a RUNNING trial evaluating the same candidate."""
        twin = None
        for other in self.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING)):
            if other.number == mine or other.number in self._learned or "family" not in other.params:
                continue
            other_key = self._key_of(other)
            if other_key is None:  # a trial stopped while it was being sampled
                continue
            if other.state == TrialState.COMPLETE:  # learned once: each scan only reads new trials
                self._learned.add(other.number)
                if RESULT_ATTR in other.user_attrs:
                    self.cache.setdefault(other_key, (dict(other.user_attrs[RESULT_ATTR]), other.number))
            elif other_key == key and twin is None:
                twin = other
        return twin

    def _key_of(self, trial: optuna.trial.FrozenTrial) -> str | None:
        try:
            return canonical(self.problem, candidate_from_params(self.problem, trial.params)).key()
        except KeyError:  # parameters not all sampled yet
            return None

    def _wait_for(self, twin: optuna.trial.FrozenTrial) -> dict[str, object] | None:
        """The twin's result once it completes (None if it failed: evaluate it ourselves)."""
        storage = self.study._storage
        while True:
            found = storage.get_trial(twin._trial_id)
            if found.state == TrialState.COMPLETE and RESULT_ATTR in found.user_attrs:
                attrs = dict(found.user_attrs[RESULT_ATTR])
                self.cache[self._key_of(found)] = (attrs, found.number)
                return {**attrs, "duplicate_of": found.number}
            if found.state.is_finished():
                return None
            time.sleep(POLL_SECONDS)
            # The twin's worker may have died. (fail_stale_trials does nothing without a heartbeat;
            # an isinstance(RDBStorage) test here never held: the storage is a _CachedStorage.)
            # Under the lock: the retry must be queued before anyone counts the budget again, or a
            # new trial takes the failed trial's place and the retry is never run.
            self.lock.acquire()
            try:
                optuna.storages.fail_stale_trials(self.study)
            finally:
                self.lock.release()


def fail_silent_trials(study: optuna.Study) -> list[int]:
    """Fail RUNNING trials that never sent a heartbeat and started longer than the grace period ago.

    A process killed between starting a trial and its first heartbeat leaves such a trial, and
    Optuna's stale check skips trials without a heartbeat: the budget would wait for it forever."""
    import datetime

    import sqlalchemy

    backend = getattr(study._storage, "_backend", study._storage)
    if not isinstance(backend, optuna.storages.RDBStorage) or backend.heartbeat_interval is None:
        return []
    grace = backend.grace_period if backend.grace_period is not None else 2 * backend.heartbeat_interval
    cutoff = datetime.datetime.now() - datetime.timedelta(seconds=grace)  # Optuna stamps starts with local now()
    with backend.engine.connect() as connection:
        rows = connection.execute(sqlalchemy.text(
            "SELECT t.trial_id FROM trials t LEFT JOIN trial_heartbeats h ON h.trial_id = t.trial_id "
            "WHERE t.study_id = :study AND t.state = 'RUNNING' AND h.trial_id IS NULL AND t.datetime_start < :cutoff"),
            {"study": study._study_id, "cutoff": cutoff}).fetchall()
    failed = []
    for (trial_id,) in rows:
        try:
            if study._storage.set_trial_state_values(trial_id, state=TrialState.FAIL):
                failed.append(trial_id)
        except optuna.exceptions.UpdateFinishedTrialError:
            pass  # it finished (or another worker failed it) meanwhile
    return failed


def run_budget(study: optuna.Study, objective: SharedObjective, target: int, timeout: float | None, progress: bool) -> None:
    """Run trials until the study holds exactly `target` done trials, or the timeout passes."""
    lock = objective.lock
    deadline = None if timeout is None else time.monotonic() + timeout
    # Not isinstance(RDBStorage): Optuna wraps an RDBStorage in a _CachedStorage, so that test was
    # always false, stale trials were never failed, and a resume after a kill waited forever.
    heartbeat = getattr(study._storage, "get_heartbeat_interval", lambda: None)() is not None
    bar = _bar(progress, target)
    try:
        while (deadline is None or time.monotonic() < deadline) and not STOP.requested:
            lock.acquire()
            try:
                if heartbeat:
                    optuna.storages.fail_stale_trials(study)
                    fail_silent_trials(study)
                trials = study.get_trials(deepcopy=False, states=DONE + (TrialState.RUNNING,))
                done = sum(t.state in DONE for t in trials)
                if bar is not None:
                    bar.n = done
                    bar.refresh()
                if done >= target:
                    return
                if len(trials) < target:  # a slot is free: ask (under the lock) and run
                    study.optimize(objective, n_trials=1, gc_after_trial=False)
                    continue
            finally:
                lock.release()
            time.sleep(POLL_SECONDS)  # the rest of the budget is RUNNING elsewhere; a dead one goes stale
    finally:
        if bar is not None:
            bar.close()


def _bar(progress: bool, target: int):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=target, unit="trial")
