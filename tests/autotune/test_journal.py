"""The journal backend and the locks of autotune.storage: Optuna's own journal format
(Optuna and optuna-dashboard read what we write, we read what they write), torn and damaged
records, the one flock that is both the append lock and the study lock, worker leases that die
with their process, and lock files that go away."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from autotune.storage import locks
from autotune.storage.journal import JournalCorrupt, JournalFile
from tests.helpers.waiting import PATIENCE

ROOT = Path(__file__).resolve().parents[2]


def study_on(path: Path, name: str = "s") -> optuna.Study:
    return optuna.create_study(
        storage=JournalStorage(JournalFile(path)), study_name=name, load_if_exists=True
    )


def fill(study: optuna.Study, trials: int) -> None:
    study.optimize(lambda t: t.suggest_int("x", 0, 9) + t.suggest_float("y", 0, 1), n_trials=trials)


def params(study: optuna.Study) -> list[dict]:
    return [t.params for t in study.get_trials()]


def test_optuna_reads_what_we_write_and_we_read_what_optuna_writes(tmp_path: Path) -> None:
    ours = study_on(tmp_path / "a.journal")
    fill(ours, 5)
    theirs = optuna.load_study(
        study_name="s", storage=JournalStorage(JournalFileBackend(str(tmp_path / "a.journal")))
    )
    assert params(theirs) == params(ours)
    fill(theirs, 3)  # Optuna's own writer appends to our file
    assert len(study_on(tmp_path / "a.journal").trials) == 8


def test_optuna_dashboard_opens_the_journal_by_path(tmp_path: Path) -> None:
    """optuna-dashboard's own app, given the journal's path as `optuna-dashboard PATH` is, answers
    GET /api/studies with the study (its public `wsgi`; no server or port needed)."""
    import json
    from wsgiref.util import setup_testing_defaults

    optuna_dashboard = pytest.importorskip("optuna_dashboard")
    fill(study_on(tmp_path / "study.journal", "dash"), 2)
    app = optuna_dashboard.wsgi(str(tmp_path / "study.journal"))
    environ: dict[str, object] = {"PATH_INFO": "/api/studies", "REQUEST_METHOD": "GET"}
    setup_testing_defaults(environ)
    statuses: list[str] = []
    body = b"".join(app(environ, lambda status, headers, *rest: statuses.append(status)))
    assert statuses == ["200 OK"]
    summaries = json.loads(body)["study_summaries"]
    assert [(s["study_name"], s["directions"]) for s in summaries] == [("dash", ["minimize"])]


def test_a_torn_last_record_is_ignored_by_readers_and_cut_by_the_next_writer(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.journal"
    fill(study_on(path), 3)
    whole = path.read_bytes()
    with open(path, "ab") as handle:
        handle.write(
            b'{"op_code":4,"worker_id":"dead","study_id":0,"datetime_st'
        )  # a writer killed mid-record
    assert params(study_on(path)) == params(study_on(path))  # read twice, the torn tail ignored
    study = study_on(path)
    assert len(study.trials) == 3
    fill(study, 1)
    text = path.read_bytes()
    assert text.startswith(whole) and b"datetime_st{" not in text and text.endswith(b"\n")
    assert len(study_on(path).trials) == 4


def test_a_damaged_record_is_reported_with_its_place(tmp_path: Path) -> None:
    path = tmp_path / "d.journal"
    fill(study_on(path), 3)
    lines = path.read_bytes().split(b"\n")
    lines[4] = b"\x00garbage" * 3
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalCorrupt, match="record 5 .* is not a journal record"):
        JournalStorage(JournalFile(path))


def test_a_read_only_handle_never_creates_or_writes(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        JournalFile(tmp_path / "missing.journal", writable=False)
    assert not (tmp_path / "missing.journal").exists()
    path = tmp_path / "r.journal"
    fill(study_on(path), 2)
    path.chmod(0o444)
    try:
        reader = JournalStorage(JournalFile(path, writable=False))
        assert len(optuna.load_study(study_name="s", storage=reader).trials) == 2
    finally:
        path.chmod(0o644)


def test_the_lock_is_one_flock_on_the_file_reentrant_within_a_handle(tmp_path: Path) -> None:
    path = tmp_path / "l.journal"
    first, second = JournalFile(path), JournalFile(path)
    first.acquire()
    first.append_logs(
        [{"op_code": 0, "worker_id": "w", "study_name": "a", "directions": [1]}]
    )  # nested: no deadlock
    probe = os.open(path, os.O_RDONLY)
    with pytest.raises(BlockingIOError):
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held against any other open file
    appended = threading.Event()
    writer = threading.Thread(
        target=lambda: (
            second.append_logs(
                [{"op_code": 0, "worker_id": "v", "study_name": "b", "directions": [1]}]
            ),
            appended.set(),
        )
    )
    writer.start()
    assert not appended.wait(0.3)  # the other handle waits for the lock
    first.release()
    writer.join(10)
    assert appended.is_set()
    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(probe)
    assert [s.study_name for s in JournalStorage(JournalFile(path)).get_all_studies()] == ["a", "b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.journal"]  # no lock file, ever


def test_a_lease_lives_with_its_process(tmp_path: Path) -> None:
    storage = tmp_path / "study.journal"
    mine = locks.Lease(storage)
    assert locks.alive(storage, mine.token) and mine.path.is_file()
    mine.close()
    assert not locks.alive(storage, mine.token) and not mine.path.exists()
    # Another process holds a lease, then dies by SIGKILL: its lease is free at once.
    code = (
        "import sys; from pathlib import Path; from autotune.storage import locks; "
        f"lease = locks.Lease(Path({str(storage)!r})); print(lease.token, flush=True); "
        "sys.stdin.read()"  # holds the lease until killed
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert holder.stdout is not None
    token = holder.stdout.readline().strip()
    assert locks.alive(storage, token)
    holder.send_signal(signal.SIGKILL)
    holder.wait(PATIENCE)
    assert not locks.alive(storage, token)
    assert not locks.lease_path(storage, token).exists()  # the dead worker's file is cleaned up


def test_leases_of_dead_workers_are_reaped_when_a_worker_starts(tmp_path: Path) -> None:
    storage = tmp_path / "study.journal"
    stale = locks.lease_path(storage, "0123456789ab")
    stale.write_text("")  # what a killed worker leaves
    fresh = locks.Lease(storage)
    assert not stale.exists() and fresh.path.exists()
    fresh.close()


def test_a_file_lock_excludes_and_its_file_goes_with_the_last_user(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    first, second = locks.FileLock(path), locks.FileLock(path)
    first.acquire()
    got = threading.Event()
    waiter = threading.Thread(target=lambda: (second.acquire(), got.set()))
    waiter.start()
    assert not got.wait(0.3)
    first.release()
    first.close()  # the waiter holds it now: the file stays
    waiter.join(10)
    assert got.is_set() and path.exists()
    second.release()
    second.close()
    assert not path.exists()
    first.acquire()  # a lock whose file was deleted makes a new one
    assert path.exists()
    first.release()
    first.close()
    assert not path.exists()


def test_a_waiter_on_a_deleted_lock_file_moves_to_the_new_one(tmp_path: Path) -> None:
    """The race of deleting lock files: a process that opened the file before its holder deleted
    it must not lock the deleted file (it would exclude no one)."""
    path = tmp_path / "race.lock"
    holder = locks.FileLock(path)
    holder.acquire()
    early = os.open(path, os.O_RDWR)  # a waiter that opened the old file
    holder.release()
    holder.close()  # deleted: nobody held it
    assert not path.exists()
    fresh = locks.FileLock(path)
    fresh.acquire()  # creates a new file and locks it
    fcntl.flock(
        early, fcntl.LOCK_EX | fcntl.LOCK_NB
    )  # the old inode is free, but no longer the lock
    assert os.fstat(early).st_ino != os.stat(path).st_ino
    os.close(early)
    fresh.release()
    fresh.close()


def test_a_writer_killed_mid_record_loses_only_that_record(tmp_path: Path) -> None:
    """A record larger than a page, its writer killed while writing: what survives is whole
    records, and the journal stays readable and writable."""
    path = tmp_path / "k.journal"
    fill(study_on(path), 2)
    code = (
        "import os, sys; from pathlib import Path; from autotune.storage.journal import JournalFile; "
        f"j = JournalFile(Path({str(path)!r})); os.write(j._fd, b'{{\"op_code\":2,' + b'x' * 100000); os.kill(os.getpid(), 9)"
    )
    subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False
    )
    study = study_on(path)
    assert len(study.trials) == 2
    fill(study, 1)
    assert len(study_on(path).trials) == 3
