"""Locks between processes, none of which leaves a file behind after a clean exit.

- `FileLock`: an flock on a small file beside an SQLite storage (SQLite's own locks are POSIX
  locks on the database file, which an flock on that file must not disturb), deleted by the
  last process to let go of it.
- `AdvisoryLock`: a PostgreSQL session advisory lock; the server drops it if the process dies.
- `Lease`: a worker's claim that it is alive, an flock it holds on its own file for as long as
  it works on a journal. The kernel drops the flock when the process dies, however it dies, so
  another worker knows at once (no heartbeat, no grace period) that a RUNNING trial's owner is
  gone. A clean exit deletes the file; a killed worker's is deleted by the next worker that
  finds it unlocked."""

from __future__ import annotations

import fcntl
import os
import secrets
import threading
import zlib
from pathlib import Path


class ThreadLock:
    """Mutual exclusion within one process only (an in-memory study, an RDB we cannot lock)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def acquire(self) -> None:
        self._lock.acquire()

    def release(self) -> None:
        self._lock.release()

    def close(self) -> None:
        pass


class FileLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread = threading.Lock()
        self._fd: int | None = None

    def acquire(self) -> None:
        self._thread.acquire()
        try:
            while True:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
                fcntl.flock(fd, fcntl.LOCK_EX)
                if _same_file(fd, self.path):
                    self._fd = fd
                    return
                os.close(fd)  # the holder deleted it as we waited: lock the new one
        except BaseException:
            self._thread.release()
            raise

    def release(self) -> None:
        assert self._fd is not None
        fd, self._fd = self._fd, None
        os.close(fd)  # closing drops the flock
        self._thread.release()

    def close(self) -> None:
        """Delete the lock file unless another process holds it or waits for it (that one deletes
        it in turn); a process that opened it just before is sent to a new file by `acquire`."""
        try:
            fd = os.open(self.path, os.O_RDWR)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _same_file(fd, self.path):
                self.path.unlink()
        except OSError:
            pass  # held elsewhere, or the folder is read-only
        finally:
            os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


class AdvisoryLock:
    def __init__(self, url: str, study_name: str) -> None:
        import sqlalchemy
        from sqlalchemy.pool import NullPool

        self._text = sqlalchemy.text
        # Session-level advisory locks need a connection of their own, outside transactions.
        engine = sqlalchemy.create_engine(url, poolclass=NullPool)
        self._conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        self._key = zlib.crc32(f"autotune:{study_name}".encode())
        self._thread = threading.Lock()

    def acquire(self) -> None:
        self._thread.acquire()
        try:
            self._conn.execute(self._text("SELECT pg_advisory_lock(:k)"), {"k": self._key})
        except BaseException:
            self._thread.release()
            raise

    def release(self) -> None:
        self._conn.execute(self._text("SELECT pg_advisory_unlock(:k)"), {"k": self._key})
        self._thread.release()

    def close(self) -> None:
        self._conn.close()


LEASE_MARK = ".worker-"


class Lease:
    """This process's lease on the journal `storage`: the file <storage>.worker-<token>."""

    def __init__(self, storage: Path) -> None:
        reap(storage)
        self.token = secrets.token_hex(6)
        self.path = lease_path(storage, self.token)
        fresh = self.path.with_name(self.path.name + ".new")
        fd = os.open(fresh, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(fresh, self.path)  # never seen unlocked under its final name
        self._fd: int | None = fd

    def close(self) -> None:
        if self._fd is not None:
            self.path.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None


def lease_path(storage: Path, token: str) -> Path:
    return storage.with_name(f"{storage.name}{LEASE_MARK}{token}")


def alive(storage: Path, token: str) -> bool:
    """Whether the worker holding lease `token` on `storage` is alive (deletes a dead one's file)."""
    path = lease_path(storage, token)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    path.unlink(missing_ok=True)
    return False


def reap(storage: Path) -> None:
    """Delete the lease files of dead workers on `storage` (those nobody holds)."""
    for path in storage.parent.glob(f"{storage.name}{LEASE_MARK}*"):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            path.unlink(missing_ok=True)
        except OSError:
            pass
        finally:
            os.close(fd)
