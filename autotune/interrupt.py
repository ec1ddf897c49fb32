"""Ctrl-C as a request: the trial in flight finishes and is stored, then the run stops and
reports. A second Ctrl-C interrupts at once (Optuna then marks the trial in flight failed)."""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator


class StopRequest:
    def __init__(self) -> None:
        self.requested = False

    def _handle(self, _signum: int, _frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True


# Signal handlers are per process, so the request is too.
STOP = StopRequest()


@contextlib.contextmanager
def graceful_stop() -> Iterator[StopRequest]:
    """Within the block, the first SIGINT only sets STOP.requested."""
    STOP.requested = False
    if threading.current_thread() is not threading.main_thread():
        yield STOP
        return
    previous = signal.signal(signal.SIGINT, STOP._handle)
    try:
        yield STOP
    finally:
        signal.signal(signal.SIGINT, previous)
