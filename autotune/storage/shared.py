"""One process's handle on a study that others may share: the study lock, the run record that
lets processes started on one study join one budget, the exact global budget, and waiting for
another worker's trial.

The budget: Optuna's MaxTrialsCallback stops a worker only after its own trial finishes, so N
workers overshoot by up to N - 1 trials, and two may evaluate one candidate at once. Here the
study lock is held from the budget check through Optuna's ask and the sampling of the
candidate, and released (by the objective, `SharedStudy.release`) before the simulation: every
started trial is counted, and a candidate another worker is evaluating is waited for instead
of simulated twice. A trial whose worker died stays RUNNING and holds its place in the budget
until workers that find the budget full of RUNNING trials fail it (`Store.fail_dead`), which
queues its retry; the study ends with exactly `target` finished trials.

The run record (a study system attribute): the target of the run in progress and its live
workers. A process that starts on a study while live workers are short of their target joins
that target instead of adding its own --trials (processes started together, or a few seconds
apart, end with the total they asked for); otherwise it starts a run of its own."""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Callable, Iterator, Sequence

import optuna
from optuna.study import MaxTrialsCallback
from optuna.trial import FrozenTrial, TrialState

from autotune.errors import StorageError
from autotune.interrupt import STOP
from autotune.storage.journal import WRITE_FAILURES, write_failure
from autotune.storage.locations import open_store
from autotune.storage.stores import OWNER_ATTR

HEARTBEAT_SECONDS = 5  # RDB heartbeat; a RUNNING trial silent past the grace is failed and retried
GRACE_SECONDS = 20
POLL_SECONDS = 0.2
DONE = (
    TrialState.COMPLETE,
    TrialState.PRUNED,
)  # trials that consume the budget (a FAIL is retried)
RUN_RECORD = "autotune:run"


class SharedStudy:
    """One process's connection to a study: the store it opened (storage, lock, dead workers)
    and what the budget and the objective need from it."""

    def __init__(
        self,
        url: str,
        name: str,
        heartbeat_seconds: int = HEARTBEAT_SECONDS,
        grace_seconds: int = GRACE_SECONDS,
    ) -> None:
        self.url, self.name = url, name
        self.store = open_store(url, name, heartbeat_seconds, grace_seconds)
        self.storage = self.store.storage
        self.shared, self.heartbeat, self.token = (
            self.store.shared,
            self.store.heartbeat,
            self.store.token,
        )
        self._refresh_seconds = heartbeat_seconds
        self._held = False
        self._registered = False
        self._seen_at = 0.0

    def open(self, sampler: optuna.samplers.BaseSampler, directions: Sequence[str]) -> optuna.Study:
        """The study, created if new, with the sampler as given."""
        with (
            self.locked()
        ):  # several processes creating one study at once: one creates, the others load
            return optuna.create_study(
                storage=self.storage,
                study_name=self.name,
                sampler=sampler,
                directions=[optuna.study.StudyDirection[d.upper()] for d in directions],
                load_if_exists=True,
            )

    # --- the study lock ----------------------------------------------------------------------

    def acquire(self) -> None:
        self.store.acquire()
        self._held = True

    def release(self) -> None:
        """Let go of the lock if held (the objective releases it once it has sampled its candidate)."""
        if self._held:
            self._held = False
            self.store.release()

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the study's lock: e.g. while enqueuing, so that workers starting together do not
        each enqueue the same baseline."""
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def close(self, study: optuna.Study | None = None) -> None:
        if study is not None and self._registered:
            try:
                with self.locked():
                    self._write_record(study, None, leaving=True)
            except Exception:  # a storage that went away: the record's liveness test covers us
                pass
        self.release()
        self.store.close()

    # --- the run record ----------------------------------------------------------------------

    def begin(self, study: optuna.Study, trials: int) -> int:
        """The target of this run: the live run's, if one is short of its target, else `trials`
        more finished trials than the study holds."""
        with self.locked():
            done = finished_count(study)
            record = self._record(study)
            live = self._live(record)
            target = (
                int(record["target"])
                if live and int(record.get("target", 0)) > done
                else done + trials
            )
            self._write_record(study, target)
            return target

    def join(self, study: optuna.Study, target: int) -> None:
        """Register as a worker of a run whose target another process set (--workers)."""
        with self.locked():
            self._write_record(study, target)

    def _record(self, study: optuna.Study) -> dict:
        return dict(self.storage.get_study_system_attrs(study._study_id).get(RUN_RECORD) or {})

    def _live(self, record: dict) -> dict[str, float]:
        return {
            token: seen
            for token, seen in (record.get("workers") or {}).items()
            if token != self.token and self.store.alive(token, float(seen))
        }

    def _write_record(self, study: optuna.Study, target: int | None, leaving: bool = False) -> None:
        record = self._record(study)
        workers = self._live(record)
        if not leaving:
            workers[self.token] = time.time()
        self.storage.set_study_system_attr(
            study._study_id,
            RUN_RECORD,
            {"target": record.get("target") if target is None else target, "workers": workers},
        )
        self._registered, self._seen_at = not leaving, time.monotonic()

    def _still_here(self, study: optuna.Study) -> None:
        """Tell joiners this worker lives (RDB workers are judged by the time they were last seen)."""
        if time.monotonic() - self._seen_at > self._refresh_seconds:
            self._write_record(study, None)

    # --- trials of other workers -------------------------------------------------------------

    def trial(self, study: optuna.Study, number: int) -> FrozenTrial:
        """Trial `number` as the storage holds it now (another worker may be running it)."""
        return self.storage.get_trial(
            self.storage.get_trial_id_from_study_id_trial_number(study._study_id, number)
        )

    def fail_stale(self, study: optuna.Study) -> None:
        """Fail (and retry) the trials of dead workers (call under the lock)."""
        self.store.fail_dead(study)

    def wait_until_finished(self, study: optuna.Study, number: int) -> FrozenTrial:
        """Trial `number` once it has finished. Its worker may have died: dead workers' trials are
        failed meanwhile, under the lock, so that the retry is queued before anyone counts the
        budget again (or a new trial takes the failed trial's place and the retry never runs)."""
        while True:
            found = self.trial(study, number)
            if found.state.is_finished():
                return found
            time.sleep(POLL_SECONDS)
            with self.locked():
                self.fail_stale(study)

    # --- the budget ----------------------------------------------------------------------------

    def optimize(
        self,
        study: optuna.Study,
        objective: Callable[[optuna.Trial], float | Sequence[float]],
        target: int,
        timeout: float | None,
        progress: bool,
        enough: Callable[[optuna.Study], bool] | None = None,
    ) -> None:
        """Run trials until the study holds `target` finished trials (a budget shared by every
        worker), the timeout passes or `enough(study)` holds after a trial (its best cannot
        improve); Ctrl-C (STOP) ends it after the trial in flight."""
        if finished_count(study) >= target or (enough is not None and enough(study)):
            return
        with _storage_faults():
            self._optimize(study, objective, target, timeout, progress, enough)

    def _optimize(
        self,
        study: optuna.Study,
        objective: Callable[[optuna.Trial], float | Sequence[float]],
        target: int,
        timeout: float | None,
        progress: bool,
        enough: Callable[[optuna.Study], bool] | None,
    ) -> None:
        if self.shared:
            self._run_budget(study, objective, target, timeout, progress, enough)
            return
        study.optimize(
            objective,
            n_trials=target - finished_count(study),
            timeout=timeout,  # type: ignore[arg-type]
            callbacks=[
                MaxTrialsCallback(
                    target, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
                ),
                _stop_if_requested,
                *([_stop_when(enough)] if enough is not None else []),
            ],
            show_progress_bar=progress,
            gc_after_trial=False,
        )

    def _run_budget(
        self,
        study: optuna.Study,
        objective: Callable[[optuna.Trial], float | Sequence[float]],
        target: int,
        timeout: float | None,
        progress: bool,
        enough: Callable[[optuna.Study], bool] | None = None,
    ) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        bar = _bar(progress, target)
        try:
            while (deadline is None or time.monotonic() < deadline) and not STOP.requested:
                with self.locked():
                    self._still_here(study)
                    trials = study.get_trials(deepcopy=False, states=DONE + (TrialState.RUNNING,))
                    done = sum(t.state in DONE for t in trials)
                    if bar is not None:
                        bar.n = done
                        bar.refresh()
                    if done >= target or (enough is not None and enough(study)):
                        return
                    if len(trials) < target:  # a slot is free: ask (under the lock) and run
                        study.optimize(self._owned(objective), n_trials=1, gc_after_trial=False)
                        continue
                    # The rest of the budget is RUNNING: a dead worker's trial may be among them.
                    self.fail_stale(study)
                time.sleep(POLL_SECONDS)
        finally:
            if bar is not None:
                bar.close()

    def _owned(
        self, objective: Callable[[optuna.Trial], float | Sequence[float]]
    ) -> Callable[[optuna.Trial], float | Sequence[float]]:
        """The objective, once the trial is marked as this worker's (still under the lock)."""

        def run(trial: optuna.Trial) -> float | Sequence[float]:
            self.storage.set_trial_system_attr(trial._trial_id, OWNER_ATTR, self.token)
            return objective(trial)

        return run


def finished_count(study: optuna.Study) -> int:
    # A FAILed trial (a worker died; the heartbeat retries it) does not consume the budget.
    return len(study.get_trials(deepcopy=False, states=DONE))


@contextlib.contextmanager
def _storage_faults() -> Iterator[None]:
    """A journal that could not be written (a full disk) as one line naming it: Optuna, marking
    the trial failed on the same disk, ends in an error of its own. The trials completed before
    stay in the journal (a failed append is cut back to the last whole record)."""
    WRITE_FAILURES.clear()
    try:
        yield
    except Exception:
        failed = write_failure()
        if failed is None:
            raise
        path, error = failed
        raise StorageError(
            f"cannot write {path}: {error.strerror or error}; the trials completed before are kept"
        ) from None


def _stop_if_requested(study: optuna.Study, _trial: FrozenTrial) -> None:
    if STOP.requested:
        study.stop()


def _stop_when(
    enough: Callable[[optuna.Study], bool],
) -> Callable[[optuna.Study, FrozenTrial], None]:
    def stop(study: optuna.Study, _trial: FrozenTrial) -> None:
        if enough(study):
            study.stop()

    return stop


def _bar(progress: bool, target: int):  # type: ignore[no-untyped-def]
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=target, unit="trial", file=sys.stderr)


def set_trial_user_attr(study: optuna.Study, trial: FrozenTrial, key: str, value: object) -> None:
    """A user attribute on a trial a sampler holds as a FrozenTrial (before it runs): the
    storage call Optuna's own samplers make for their system attributes."""
    study._storage.set_trial_user_attr(trial._trial_id, key, value)
