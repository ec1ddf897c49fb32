"""Ctrl-C, at any moment of a run, without a traceback and without losing a trial.

- The first Ctrl-C is a request: the trials in flight finish and are stored, then the run ranks,
  verifies and writes what is done. During verification (`STOP.urgently()`), where nothing is
  left to finish, the first Ctrl-C already interrupts.
- A second Ctrl-C interrupts at once (a KeyboardInterrupt where it lands: Optuna marks the trial
  in flight failed, the journal never keeps half a record); the run then writes the leaderboard
  of the stored trials unverified, marked so that the next reader verifies it.
- Further Ctrl-C while it leaves are ignored; a third one leaves at once without writing.
- SIGTERM (`timeout`, `kill`, a batch system) is handled as Ctrl-C; the run then exits with
  128 + the first signal's number (`STOP.exit_status`).

Worker processes ignore Ctrl-C (a terminal sends it to every process of the group, and a worker
still importing would die with a traceback); the parent passes the request on through a flag in
shared memory, and a second Ctrl-C terminates them (`leave_on_terminate`), a third kills them.
The flag takes no lock: a lock shared with the workers could be left held by a signal handler
that interrupts its holder, or by a worker killed while holding it, and every process would wait
for it forever. A worker whose parent is gone stops as if asked to. While the parent starts
them, Ctrl-C and SIGTERM are blocked, not ignored: one sent meanwhile waits and reaches the
parent once they are started."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Any, Callable, Iterator, NoReturn

_LEAVE_AT_ONCE = 3  # the Ctrl-C that exits without writing anything


class StopRequest:
    def __init__(self) -> None:
        self._requested = False
        self.forced = False  # a KeyboardInterrupt was raised: the run is leaving
        self.urgent = False  # the first Ctrl-C interrupts (nothing is left to finish)
        self.count = 0
        self.signum = signal.SIGINT  # the first signal that asked to stop
        # Set by a command that stopped with nothing left to write: the process may leave
        # without the interpreter's teardown (seconds, after a solver's or a compiler's state).
        self.leave_at_once = False
        self._shared: Any = None  # a flag in shared memory (`.value`) seen by worker processes
        self._parent: int | None = None  # in a worker: the run's process
        self._leave: Callable[[], None] | None = None  # what leaving at once must end first

    @property
    def requested(self) -> bool:
        return (
            self._requested
            or (self._shared is not None and bool(self._shared.value))
            or (self._parent is not None and os.getppid() != self._parent)  # orphaned
        )

    def request(self) -> None:
        self._requested = True
        if self._shared is not None:
            self._shared.value = True

    def reset(self) -> None:
        self._requested = self.forced = self.urgent = self.leave_at_once = False
        self.count = 0
        self.signum = signal.SIGINT

    @property
    def exit_status(self) -> int:
        """What an interrupted run exits with: 130 after Ctrl-C, 143 after SIGTERM."""
        return 128 + int(self.signum)

    def _handle(self, signum: int, _frame: object) -> None:
        if self.count == 0:
            self.signum = signal.Signals(signum)
        self.count += 1
        if self.forced:
            if self.count >= _LEAVE_AT_ONCE:
                if self._leave is not None:
                    self._leave()
                print("autotune: interrupted again: leaving at once", file=sys.stderr, flush=True)
                os._exit(self.exit_status)
            return
        if self.requested or self.urgent:
            self.forced = True
            if not self.requested:
                # Requested too: an interrupt raised where Python swallows it (a fork or
                # finaliser callback) still reaches the code that polls `requested`.
                self.request()
            raise KeyboardInterrupt
        self.request()

    @contextlib.contextmanager
    def urgently(self) -> Iterator[None]:
        """Within the block, the first Ctrl-C interrupts at once."""
        before, self.urgent = self.urgent, True
        try:
            yield
        finally:
            self.urgent = before

    @contextlib.contextmanager
    def shared_with(self, flag: Any, leave: Callable[[], None] | None = None) -> Iterator[None]:
        """Within the block, a stop request also sets `flag` (a shared `.value` worker processes
        read), and leaving at once calls `leave` first (it kills them)."""
        before = self._shared, self._leave
        self._shared, self._leave = flag, leave
        if self._requested:
            flag.value = True
        try:
            yield
        finally:
            self._shared, self._leave = before

    def follow(self, flag: Any, parent: int) -> None:
        """In a worker process: the parent's requests arrive through `flag`; the parent's end
        (process `parent` is no longer ours) is one too."""
        self._shared, self._parent = flag, parent


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

# Signal handlers are per process, so the request is too.
STOP = StopRequest()


@contextlib.contextmanager
def graceful_stop() -> Iterator[StopRequest]:
    """Within the block, Ctrl-C and SIGTERM follow the rules above."""
    STOP.reset()
    if threading.current_thread() is not threading.main_thread():
        yield STOP
        return
    previous = {sig: signal.signal(sig, STOP._handle) for sig in _STOP_SIGNALS}
    try:
        yield STOP
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def children_ignore_ctrl_c() -> Iterator[None]:
    """Processes started within the block begin with Ctrl-C and SIGTERM blocked (a signal mask
    survives fork and exec), and each calls `ignore_ctrl_c` and `leave_on_terminate` first
    thing. A signal sent to this process meanwhile is held pending and handled when the block
    ends: ignoring it would lose it, and handling it mid-start would leave a child half started."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if not hasattr(signal, "pthread_sigmask"):  # no signal masks (Windows): ignore for the block
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, set(_STOP_SIGNALS))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def ignore_ctrl_c() -> None:
    """In a process started by `children_ignore_ctrl_c`: ignore Ctrl-C from now on. One that
    arrived while it started is dropped with it (its parent holds the request)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def leave_on_terminate() -> None:
    """In a worker: SIGTERM (the parent's second Ctrl-C) interrupts once, like a second Ctrl-C,
    and not at all once `STOP.forced` says the worker is leaving. One that arrived while it
    started interrupts here, at once."""

    def leave(_signum: int, _frame: object) -> None:
        if STOP.forced:  # leaving already (interrupted, or past its work)
            return
        STOP.forced = True
        raise KeyboardInterrupt

    # Raised inside a callback from C (numba compiling), the interrupt cannot propagate: Python
    # prints it as "Exception ignored", a traceback. The worker is leaving anyway (the stop is
    # requested, and the parent kills it after its wait): it is dropped without a word.
    hook = sys.unraisablehook

    def drop_interrupts(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            hook(unraisable)

    sys.unraisablehook = drop_interrupts
    signal.signal(signal.SIGTERM, leave)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


class _Once:
    pressed = False  # the process took its Ctrl-C, or is leaving: later ones are ignored


_ONCE = _Once()


def _interrupt_once(_signum: int, _frame: object) -> None:
    if not _ONCE.pressed:
        _ONCE.pressed = True
        raise KeyboardInterrupt


def run_as_process(command: Callable[[], int]) -> NoReturn:
    """Run a process's command (the command line) and exit with its status. Outside a run (whose
    `graceful_stop` takes over), the first Ctrl-C interrupts it (status 130, no traceback) and
    later ones are ignored; once it has returned, every Ctrl-C is: the process is leaving, and
    one pressed while the interpreter exits must neither print a traceback nor kill it by SIGINT."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _interrupt_once)
    code = 130
    try:
        code = command()
    except KeyboardInterrupt:  # before the command could take it (while it was imported)
        print("autotune: interrupted", file=sys.stderr)
    finally:
        _ONCE.pressed = True  # an attribute store: no handler can run between here and the next
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    leave(code)


def leave(status: int) -> NoReturn:
    """End the process with `status`: at once (streams flushed, no teardown) when an interrupted
    command has nothing left to write, else as usual."""
    if STOP.leave_at_once:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)
    sys.exit(status)
