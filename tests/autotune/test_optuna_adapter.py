"""One test per Optuna behaviour that autotune.storage (and the pipeline) rely on. When an
Optuna release changes one of these, the failing test names what to adapt; pyproject pins the
major version these passed with."""

from __future__ import annotations

import datetime
import threading
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from autotune.errors import AutotuneError
from autotune.storage import (
    MEMORY,
    SharedStudy,
    finished_count,
    local_storages,
    read_study,
    study_names,
)
from tests.helpers.waiting import PATIENCE

# The two persistent kinds: the default journal file and an SQLite file (Optuna's RDB storage).
KINDS = ("journal", "sqlite")


def address(tmp_path: Path, kind: str) -> str:
    return (
        str(tmp_path / "study.journal")
        if kind == "journal"
        else f"sqlite:///{tmp_path / 'study.db'}"
    )


def shared(
    tmp_path: Path, name: str = "s", heartbeat: int = 1, kind: str = "sqlite"
) -> tuple[SharedStudy, optuna.Study]:
    handle = SharedStudy(address(tmp_path, kind), name, heartbeat, 2 * heartbeat)
    return handle, handle.open(optuna.samplers.RandomSampler(seed=0), ["minimize"])


@pytest.mark.parametrize("kind", KINDS)
def test_create_study_with_load_if_exists_resumes_the_same_study(tmp_path: Path, kind: str) -> None:
    handle, study = shared(tmp_path, kind=kind)
    study.optimize(lambda t: t.suggest_int("x", 0, 9), n_trials=3)
    again = SharedStudy(handle.url, "s").open(optuna.samplers.RandomSampler(seed=1), ["minimize"])
    assert [t.number for t in again.trials] == [0, 1, 2]
    assert [t.params for t in again.trials] == [t.params for t in study.trials]


@pytest.mark.parametrize("kind", KINDS)
def test_enqueued_trials_wait_with_fixed_params_and_run_first_in_order(
    tmp_path: Path, kind: str
) -> None:
    """The pipeline's seeding dedupes on system_attrs['fixed_params'] and relies on FIFO order."""
    _, study = shared(tmp_path, kind=kind)
    study.enqueue_trial({"x": 7}, user_attrs={"source": "baseline"})
    study.enqueue_trial({"x": 3}, user_attrs={"source": "grid"})
    waiting = study.get_trials(states=(TrialState.WAITING,))
    assert [t.system_attrs["fixed_params"] for t in waiting] == [{"x": 7}, {"x": 3}]
    study.optimize(lambda t: t.suggest_int("x", 0, 9), n_trials=2)
    assert [(t.params, t.user_attrs["source"]) for t in study.trials] == [
        ({"x": 7}, "baseline"),
        ({"x": 3}, "grid"),
    ]


def test_optimize_with_one_trial_asks_exactly_once(tmp_path: Path) -> None:
    """The budget loop asks under the lock, one trial per optimize call."""
    _, study = shared(tmp_path)
    for expected in (1, 2, 3):
        study.optimize(lambda t: t.suggest_int("x", 0, 9), n_trials=1)
        assert len(study.trials) == expected


def test_the_study_wraps_our_storage_so_we_keep_our_own_handle(tmp_path: Path) -> None:
    """Optuna wraps an RDBStorage in a cache: an isinstance test on the study's storage never
    holds (that bug once disabled stale-trial failing), so SharedStudy keeps the storage it built."""
    handle, study = shared(tmp_path)
    assert not isinstance(study._storage, optuna.storages.RDBStorage)
    assert isinstance(handle.storage, optuna.storages.RDBStorage) and handle.heartbeat


def test_a_stale_heartbeat_fails_the_trial_and_the_callback_enqueues_its_retry(
    tmp_path: Path,
) -> None:
    handle, study = shared(tmp_path, heartbeat=1)
    trial = study.ask({"x": optuna.distributions.IntDistribution(0, 9)})
    handle.storage.record_heartbeat(trial._trial_id)  # what Optuna's heartbeat thread does
    import sqlalchemy

    long_ago = datetime.datetime(2000, 1, 1)  # whatever the time zone: past the grace period
    with handle.storage.engine.begin() as connection:
        connection.execute(
            sqlalchemy.text("UPDATE trial_heartbeats SET heartbeat = :t"), {"t": long_ago}
        )
    handle.fail_stale(study)  # what a worker waiting on a full budget does
    trials = study.get_trials()
    assert trials[0].state == TrialState.FAIL
    retry = trials[1]
    assert retry.state == TrialState.WAITING
    # The retry carries the failed trial's parameters as its own (not as fixed_params): seeding
    # dedupes on system_attrs.get("fixed_params", params) for that reason.
    assert retry.system_attrs["failed_trial"] == 0 and retry.params == trials[0].params
    assert "fixed_params" not in retry.system_attrs


def test_optuna_skips_a_trial_without_heartbeat_and_fail_silent_catches_it(tmp_path: Path) -> None:
    """A process killed between the ask and its first heartbeat leaves a RUNNING trial that
    Optuna's stale check never fails; fail_silent's SQL (on Optuna's trials and
    trial_heartbeats tables) fails it once it is older than the grace period."""
    handle, study = shared(tmp_path, heartbeat=1)
    study.ask()
    old = datetime.datetime.now() - datetime.timedelta(seconds=60)
    import sqlalchemy

    with handle.storage.engine.begin() as connection:  # the trial started a minute ago
        connection.execute(sqlalchemy.text("UPDATE trials SET datetime_start = :t"), {"t": old})
    optuna.storages.fail_stale_trials(study)
    assert study.get_trials()[0].state == TrialState.RUNNING  # Optuna alone leaves it
    assert len(handle.store.fail_silent(study)) == 1  # type: ignore[attr-defined]
    assert study.get_trials()[0].state == TrialState.FAIL


@pytest.mark.parametrize("kind", KINDS)
def test_another_handle_reads_a_running_trial_by_number(tmp_path: Path, kind: str) -> None:
    """SharedStudy.trial: the public storage calls that find a trial by study name and number."""
    handle, study = shared(tmp_path, kind=kind)
    trial = study.ask()
    trial.set_user_attr("note", "running")
    other = SharedStudy(handle.url, "s")
    found = other.trial(other.open(optuna.samplers.RandomSampler(), ["minimize"]), 0)
    assert found.state == TrialState.RUNNING and found.user_attrs == {"note": "running"}
    study.tell(trial, 1.0)
    assert other.wait_until_finished(study, 0).state == TrialState.COMPLETE


@pytest.mark.parametrize("kind", KINDS)
def test_two_handles_share_one_exact_budget(tmp_path: Path, kind: str) -> None:
    """Two workers (threads here, each with its own handle; processes in test_workers_resume) on
    one study stop at exactly the target, because the ask happens under the study lock."""
    url = address(tmp_path, kind)
    SharedStudy(url, "b").open(optuna.samplers.RandomSampler(seed=0), ["minimize"])

    meeting = threading.Barrier(2, timeout=PATIENCE)  # both hold a trial in flight at once

    def work(seed: int) -> None:
        handle = SharedStudy(url, "b", 5, 10)
        study = handle.open(optuna.samplers.RandomSampler(seed=seed), ["minimize"])
        met = [False]

        def objective(trial: optuna.Trial) -> float:
            trial.suggest_int("x", 0, 99)
            handle.release()  # sampled: let the other worker ask
            if not met[0]:
                met[0] = True
                meeting.wait()
            return 1.0

        handle.optimize(study, objective, 17, None, False)
        handle.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    study = read_study(url, "b")
    assert study is not None and finished_count(study) == 17 and len(study.trials) == 17


def test_in_memory_optimize_stops_at_the_target() -> None:
    handle = SharedStudy(MEMORY, "m")
    study = handle.open(optuna.samplers.RandomSampler(seed=0), ["minimize"])
    study.enqueue_trial({"x": 1})
    handle.optimize(study, lambda t: t.suggest_int("x", 0, 9), 5, None, False)
    assert finished_count(study) == 5
    handle.optimize(
        study, lambda t: t.suggest_int("x", 0, 9), 5, None, False
    )  # the target is met: nothing runs
    assert len(study.trials) == 5


def test_constraints_are_stored_with_the_trial(tmp_path: Path) -> None:
    _, study = shared(tmp_path)

    def objective(trial: optuna.Trial) -> float:
        trial.set_constraint("slots_over", 2.0)
        return 1.0

    study.optimize(objective, n_trials=1)
    assert study.trials[0].constraints == {"slots_over": 2.0}


@pytest.mark.parametrize("kind", KINDS)
def test_study_names_and_reading_back(tmp_path: Path, kind: str) -> None:
    for name in ("b", "a"):
        shared(tmp_path, name, kind=kind)[0].close()
    url = address(tmp_path, kind)
    assert study_names(url) == ["a", "b"]
    assert read_study(url, "a") is not None and read_study(url, "missing") is None
    source = tmp_path / ("study.journal" if kind == "journal" else "study.db")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / source.name).write_bytes(source.read_bytes())
    # One storage per results/<study>/: the journal, or the SQLite file of a study begun before it.
    assert local_storages(tmp_path) == [
        str(tmp_path / "x" / "study.journal")
        if kind == "journal"
        else f"sqlite:///{tmp_path / 'x' / 'study.db'}"
    ]


@pytest.mark.parametrize("name", ["bad.db", "bad.journal"])
def test_an_unreadable_storage_is_a_usage_error(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(b"not a database\n" * 100)
    with pytest.raises(AutotuneError, match="cannot"):
        study_names(
            str(tmp_path / name) if name.endswith("journal") else f"sqlite:///{tmp_path / name}"
        )


@pytest.mark.parametrize("kind", KINDS)
def test_a_process_starting_on_a_run_in_progress_joins_its_target(
    tmp_path: Path, kind: str
) -> None:
    """The run record: a live worker short of its target is joined; once it has left, a new
    process starts a run of its own (a resume adds its trials)."""
    first, study = shared(tmp_path, "r", kind=kind)
    assert first.begin(study, 10) == 10
    study.optimize(lambda t: t.suggest_int("x", 0, 9), n_trials=3)
    second, again = shared(tmp_path, "r", kind=kind)
    assert second.begin(again, 50) == 10  # joined: the first is alive and short of 10
    first.close(study)
    second.close(again)
    third, later = shared(tmp_path, "r", kind=kind)
    assert third.begin(later, 5) == 8  # nobody left: 3 done + 5
    third.close(later)


def test_a_dead_workers_trial_on_the_journal_is_failed_and_retried(tmp_path: Path) -> None:
    """The journal has no heartbeat: a RUNNING trial belongs to a dead worker when its owner's
    lease is free (the kernel frees it when the process dies, however it dies)."""
    from autotune.storage.stores import OWNER_ATTR

    owner, study = shared(tmp_path, kind="journal")
    trial = study.ask({"x": optuna.distributions.IntDistribution(0, 9)})
    owner.storage.set_trial_system_attr(
        trial._trial_id, OWNER_ATTR, owner.token
    )  # what the budget loop marks
    other, seen = shared(tmp_path, kind="journal")
    other.fail_stale(seen)
    assert seen.get_trials()[0].state == TrialState.RUNNING  # its owner lives
    owner.store.lease.close()  # the owner dies (test_journal kills a real process holding one)
    other.fail_stale(seen)
    failed, retry = seen.get_trials()
    assert failed.state == TrialState.FAIL and retry.state == TrialState.WAITING
    assert retry.params == failed.params and retry.system_attrs["failed_trial"] == 0
    other.close(seen)
