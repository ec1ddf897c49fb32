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
import threading
import time
import zlib
from pathlib import Path
from typing import Iterator

import optuna
from optuna.trial import TrialState

from search_spaces.base import canonical_json

from autotune.objective import CONSTRAINT_NAME, RESULT_ATTR, Objective, objective_values, sample_candidate
from autotune.problem import evaluate

DONE = (TrialState.COMPLETE, TrialState.PRUNED)  # trials that consume the budget (a FAIL is retried)
POLL_SECONDS = 0.2


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
    storage = study._storage
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

    def __call__(self, trial: optuna.Trial) -> float | tuple[float, ...]:
        try:
            candidate = sample_candidate(trial, self.problem)
            key = candidate.key()
            twin = None if key in self.cache else self._refresh(key, trial.number)
        finally:
            self.lock.release()
        if key in self.cache:
            attrs, source = self.cache[key]
            attrs = {**attrs, "duplicate_of": source}
        else:
            attrs = self._wait_for(twin) if twin is not None else None
            if attrs is None:
                attrs = evaluate(self.problem, candidate)
                self.cache[key] = (attrs, trial.number)
        trial.set_user_attr(RESULT_ATTR, attrs)
        trial.set_constraint(CONSTRAINT_NAME, float(attrs["violation"]))  # type: ignore[arg-type]
        return objective_values(attrs, self.objectives)

    def _refresh(self, key: str, mine: int) -> optuna.trial.FrozenTrial | None:
        """Learn other workers' results; return a RUNNING trial evaluating the same candidate."""
        twin = None
        for other in self.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING)):
            if other.number == mine or "family" not in other.params or canonical_json(other.params) != key:
                continue
            if other.state == TrialState.COMPLETE and RESULT_ATTR in other.user_attrs:
                self.cache.setdefault(key, (dict(other.user_attrs[RESULT_ATTR]), other.number))
            elif other.state == TrialState.RUNNING and twin is None:
                twin = other
        return twin

    def _wait_for(self, twin: optuna.trial.FrozenTrial) -> dict[str, object] | None:
        """The twin's result once it completes (None if it failed: evaluate it ourselves)."""
        storage = self.study._storage
        while True:
            found = storage.get_trial(twin._trial_id)
            if found.state == TrialState.COMPLETE and RESULT_ATTR in found.user_attrs:
                attrs = dict(found.user_attrs[RESULT_ATTR])
                self.cache[canonical_json(found.params)] = (attrs, found.number)
                return {**attrs, "duplicate_of": found.number}
            if found.state.is_finished():
                return None
            time.sleep(POLL_SECONDS)
            if isinstance(storage, optuna.storages.RDBStorage):  # the twin's worker may have died
                optuna.storages.fail_stale_trials(self.study)


def run_budget(study: optuna.Study, objective: SharedObjective, target: int, timeout: float | None, progress: bool) -> None:
    """Run trials until the study holds exactly `target` done trials, or the timeout passes."""
    lock = objective.lock
    deadline = None if timeout is None else time.monotonic() + timeout
    heartbeat = isinstance(study._storage, optuna.storages.RDBStorage) and study._storage.get_heartbeat_interval() is not None
    bar = _bar(progress, target)
    try:
        while deadline is None or time.monotonic() < deadline:
            lock.acquire()
            try:
                if heartbeat:
                    optuna.storages.fail_stale_trials(study)
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
