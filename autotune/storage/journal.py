"""The default local storage: Optuna's journal (one JSON operation per line, the format of
`optuna.storages.journal.JournalFileBackend`, which optuna-dashboard and Optuna's own tools
read), written by a backend of our own.

Why our own backend: Optuna's file backend takes a lock by creating and deleting a `.lock`
symlink and fsyncs on every operation, about eighteen times per trial (5.5 ms of CPU and 28 ms
of wall time per trial, against 0.9 and 4 here). Here one `flock` on the journal file itself
serves both as the append lock and as the study lock of autotune.storage (re-entrant
within one handle, so a worker asking for a trial under the study lock appends without taking
it twice), and no lock file ever exists. Each record reaches the file with one write(), so
other workers and a resume after `kill -9` see every finished operation; like the SQLite
storage before it (WAL, synchronous=NORMAL), it leaves flushing to the OS and fsyncs only when
a study is created and when the handle closes (an fsync per trial would cost 2.5 ms of wall
time on this machine's disk).

A record cut short (a writer killed in the middle of a large write, a full disk) is a tail
without its newline: readers ignore it and the next writer truncates it. A complete line that
is not a record means the file was damaged: `JournalCorrupt`, reported in one line."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from optuna.storages.journal import BaseJournalBackend

from autotune.errors import StorageError

_CREATE_STUDY = 0  # Optuna's JournalOperation code: fsynced at once
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode  # Optuna's own record format
_TORN_TAIL_WAIT = 0.05  # a foreign writer (optuna-dashboard, without our flock) may be mid-write


class JournalCorrupt(StorageError):
    """A complete line of the journal is not an Optuna journal record (or what follows the last
    line cannot be the start of one): reported in one line wherever it is found. `reason` says
    what is wrong without the file's name."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"the storage {path} is damaged: {reason}")
        self.reason = reason


# Journals whose append failed (a full disk), by path: Optuna turns the error into its own
# failures while it marks the trial, so the run asks here what really happened.
WRITE_FAILURES: dict[str, OSError] = {}


def write_failure() -> tuple[str, OSError] | None:
    """The last journal append that failed in this process, as (path, error)."""
    if not WRITE_FAILURES:
        return None
    path = next(reversed(WRITE_FAILURES))
    return path, WRITE_FAILURES[path]


class JournalFile(BaseJournalBackend):
    """Optuna's journal format in one file, appended under an flock on the file itself."""

    def __init__(self, path: Path, writable: bool = True) -> None:
        self.path = path
        self._fd = os.open(
            path,
            (os.O_RDWR | os.O_CREAT | os.O_APPEND if writable else os.O_RDONLY) | os.O_NONBLOCK,
            0o666,
        )
        if not stat.S_ISREG(os.fstat(self._fd).st_mode):  # a device or FIFO: no journal
            os.close(self._fd)
            raise StorageError(f"the storage {path} is not a regular file")
        os.set_blocking(self._fd, True)
        self._thread = threading.RLock()
        self._depth = 0
        self._offsets: dict[int, int] = {0: 0}  # log number -> byte offset where that log starts
        self._dirty = False
        self._end = -1  # the file's size after our last write (it then ends with a whole record)

    # --- the lock: study lock and append lock in one -------------------------------------------

    def acquire(self) -> None:
        self._thread.acquire()
        if self._depth == 0:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except BaseException:
                self._thread.release()
                raise
        self._depth += 1

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._thread.release()

    def close(self) -> None:
        if self._dirty:
            os.fsync(self._fd)
        os.close(self._fd)

    # --- Optuna's backend interface ------------------------------------------------------------

    def read_logs(self, log_number_from: int) -> Iterator[dict[str, Any]]:
        number = max(n for n in self._offsets if n <= log_number_from)
        offset = self._offsets[number]
        data = _read_from(self._fd, offset)
        end = data.rfind(b"\n") + 1  # what follows the last newline is not complete yet
        position = 0
        while position < end:
            stop = data.index(b"\n", position) + 1
            record = self._record(data[position:stop], number, offset + position)
            number += 1
            position = stop
            # The start of the next read (reads only move forward; 0 is kept for a fresh replay).
            self._offsets = {0: 0, number: offset + stop}
            if number > log_number_from:
                yield record

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        data = b"".join(_ENCODE(log).encode() + b"\n" for log in logs)
        self.acquire()
        try:
            size = self._complete_size()
            try:
                written = 0
                while written < len(data):
                    written += os.write(self._fd, data[written:])
                self._end = size + written
                self._dirty = True
                if any(log.get("op_code") == _CREATE_STUDY for log in logs):
                    os.fsync(self._fd)
            except BaseException as exc:
                os.ftruncate(self._fd, size)  # never leave half a record behind
                if isinstance(exc, OSError):  # a full disk: Optuna's own handling then fails
                    exc.filename = exc.filename or str(self.path)
                    WRITE_FAILURES[str(self.path)] = exc
                raise
        finally:
            self.release()

    # --- helpers -------------------------------------------------------------------------------

    def _record(self, line: bytes, number: int, offset: int) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict) or "op_code" not in record:
            raise JournalCorrupt(
                self.path, f"record {number + 1} (byte {offset}) is not a journal record"
            )
        return record

    def _complete_size(self) -> int:
        """The file's size once a torn last record (a writer that died mid-write) is cut off."""
        size = os.fstat(self._fd).st_size
        if size in (0, self._end) or os.pread(self._fd, 1, size - 1) == b"\n":
            return size
        time.sleep(_TORN_TAIL_WAIT)  # a writer without our lock may still be finishing its line
        size = os.fstat(self._fd).st_size
        if os.pread(self._fd, 1, size - 1) == b"\n":
            return size
        keep = self._torn_tail_start(size)
        os.ftruncate(self._fd, keep)
        return keep

    def check_tail(self) -> None:
        """Refuse a file whose end cannot be a record cut short (before anything is appended)."""
        size = os.fstat(self._fd).st_size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            self._torn_tail_start(size)

    def _torn_tail_start(self, size: int) -> int:
        keep = _last_newline_end(self._fd, size)
        if keep == 0:
            # No complete record before it: a file of another program (a one-line JSON file),
            # not a journal whose writer died, so nothing is cut.
            raise JournalCorrupt(
                self.path, "it holds no journal record: not an autotune journal (nothing was cut)"
            )
        if (
            os.pread(self._fd, 1, keep) != b"{"
        ):  # a record cut short starts like one; anything else is not ours
            raise JournalCorrupt(
                self.path,
                f"it ends with {size - keep} bytes that are not a journal record (nothing was cut)",
            )
        return keep


def _read_from(fd: int, offset: int, block: int = 1 << 20) -> bytes:
    chunks = []
    while True:
        chunk = os.pread(fd, block, offset)
        chunks.append(chunk)
        if len(chunk) < block:  # the end of the file (for now)
            return b"".join(chunks)
        offset += len(chunk)


def _last_newline_end(fd: int, size: int) -> int:
    """The offset just past the last newline before `size` (0 when there is none)."""
    end = size
    while end > 0:
        start = max(0, end - 65536)
        found = os.pread(fd, end - start, start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def is_sqlite_file(path: Path) -> bool:
    """An SQLite database (an older study's storage), told by its header as optuna-dashboard does.
    Only a regular file is read: opening a FIFO would wait for a writer."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False
