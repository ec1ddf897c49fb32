"""Waiting for another process without sleeping a fixed time: poll for an event (a file, a
journal record, a process state) with a generous deadline. The deadline only turns a hang into
a failure; no test asserts how fast the event came."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

PATIENCE = 600.0  # seconds: generous on a loaded machine; reaching it is a failure, not a verdict
POLL = 0.05


def wait_until(
    condition: Callable[[], bool],
    what: str,
    process: subprocess.Popen[str] | None = None,
    patience: float = PATIENCE,
) -> None:
    """Return once `condition()` holds; fail if `process` exits first or the patience runs out."""
    deadline = time.monotonic() + patience
    while not condition():
        if process is not None and process.poll() is not None and not condition():
            out, err = process.communicate()
            raise AssertionError(f"the process exited ({process.returncode}) before {what}: {err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for {what} after {patience:.0f} s")
        time.sleep(POLL)


def _status_masks(pid: int) -> dict[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    masks = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("SigPnd", "ShdPnd"):
            masks[key] = int(value.strip(), 16)
    return masks


def signal_taken(pid: int, signum: signal.Signals = signal.SIGINT) -> bool:
    """Whether `signum` is no longer pending in process `pid` (delivered, or the process is gone)."""
    masks = _status_masks(pid)
    if masks is None:
        return True
    bit = 1 << (int(signum) - 1)
    return not (masks.get("SigPnd", 0) | masks.get("ShdPnd", 0)) & bit


def waiting_for_a_lock(pids: set[int]) -> set[int]:
    """Which of `pids` wait in the kernel for a file lock (flock or fcntl), from /proc/locks."""
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return set()
    waiting = set()
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "->" and int(fields[5]) in pids:
            waiting.add(int(fields[5]))
    return waiting


@contextlib.contextmanager
def no_hang(what: str, patience: float = PATIENCE) -> Iterator[None]:
    """Fail, instead of hanging the suite, if the block still runs after `patience` seconds (a
    guard against waiting forever, not a verdict on speed)."""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise AssertionError(f"{what}: still running after {patience:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(int(patience))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
