"""Ctrl-C while worker processes start: held for the parent, never lost; the children ignore it
(autotune.interrupt); the stop they share never blocks."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from autotune.interrupt import StopRequest, children_ignore_ctrl_c, graceful_stop
from tests.helpers.waiting import PATIENCE, no_hang

ROOT = Path(__file__).resolve().parents[2]
needs_masks = pytest.mark.skipif(
    not hasattr(signal, "pthread_sigmask"), reason="no signal masks on this platform"
)


@needs_masks
def test_a_ctrl_c_while_children_start_reaches_the_parent_afterwards() -> None:
    with graceful_stop() as stop:
        with children_ignore_ctrl_c():
            # A Ctrl-C while the workers start, sent to this thread (a signal sent to the process
            # may be taken by another of its threads, whose handler then runs here at once).
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # type: ignore[arg-type]
            assert not stop.requested  # held, not handled yet
        assert stop.requested and stop.exit_status == 130


@needs_masks
def test_the_block_leaves_ctrl_c_as_it_found_it() -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    with graceful_stop() as stop, children_ignore_ctrl_c():
        pass
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before
    assert not stop.requested


@needs_masks
def test_a_child_started_in_the_block_survives_a_ctrl_c_before_it_ignores_it() -> None:
    """The child is hit while it starts (here: at once, by itself), before `ignore_ctrl_c`:
    the signal waits, then is dropped; the child runs on and exits normally."""
    code = (
        "import os, signal; os.kill(os.getpid(), signal.SIGINT); "
        "from autotune.interrupt import ignore_ctrl_c; ignore_ctrl_c(); "
        "os.kill(os.getpid(), signal.SIGINT); print('still here')"
    )
    with children_ignore_ctrl_c():
        child = subprocess.Popen(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    out, err = child.communicate(timeout=PATIENCE)
    assert child.returncode == 0 and out.strip() == "still here", err


# --- the stop flag shared with worker processes ----------------------------------------------


def _follow_until_stopped(flag: Any, parent: int, ready: Any) -> None:
    """A worker's loop: read the stop as often as it can until it is requested."""
    from autotune.interrupt import STOP

    STOP.follow(flag, parent)
    ready.send(True)
    while not STOP.requested:
        pass


@pytest.mark.slow  # spawns a process per moment
def test_a_worker_killed_while_reading_the_stop_never_blocks_the_run() -> None:
    """Workers read the stop all the time; one killed at any moment of a read must leave nothing
    held (a lock in the flag would stay held by the dead worker, and the run's next request, or
    the next worker's read, would wait for it forever)."""
    context = multiprocessing.get_context("spawn")
    flag = context.RawValue(ctypes.c_bool, False)
    for _ in range(5):
        receive, send = context.Pipe(duplex=False)
        worker = context.Process(target=_follow_until_stopped, args=(flag, os.getpid(), send))
        worker.start()
        assert receive.poll(PATIENCE), "the worker did not start"
        worker.kill()  # somewhere in its reads
        worker.join()
    with no_hang("a stop request after a worker was killed", patience=120):
        with graceful_stop() as stop, stop.shared_with(flag):
            stop.request()
            assert stop.requested
        receive, send = context.Pipe(duplex=False)
        last = context.Process(target=_follow_until_stopped, args=(flag, os.getpid(), send))
        last.start()
        last.join()  # it sees the request and leaves
    assert last.exitcode == 0


def test_a_worker_whose_parent_is_gone_is_asked_to_stop() -> None:
    """A worker orphaned (its run killed) stops after its trial in flight: none outlives the run."""
    flag = multiprocessing.get_context("spawn").RawValue(ctypes.c_bool, False)
    ours, orphan = StopRequest(), StopRequest()
    ours.follow(flag, os.getppid())
    orphan.follow(flag, os.getppid() + 1)  # a parent other than the one we have: gone
    assert not ours.requested and orphan.requested


def test_a_ctrl_c_while_the_stop_is_being_passed_on_interrupts_at_once() -> None:
    """The second Ctrl-C's handler may run inside the first one, as it sets the shared flag: it
    must not wait for anything the first one holds, and interrupts."""

    class Flag:
        def __init__(self) -> None:
            self._value = False

        @property
        def value(self) -> bool:
            return self._value

        @value.setter
        def value(self, value: bool) -> None:
            self._value = value
            signal.raise_signal(signal.SIGINT)  # the second Ctrl-C, handled right here

    with no_hang("a Ctrl-C inside the handler of the one before", patience=120):
        with graceful_stop() as stop, stop.shared_with(Flag()):
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGINT)
            assert stop.forced and stop.requested


# --- the command line's process: one Ctrl-C interrupts, the rest are ignored ------------------

_PROCESS = (
    "import atexit, os, signal\n"
    "from autotune.interrupt import run_as_process\n"
    "def press():\n"
    "    os.kill(os.getpid(), signal.SIGINT)\n"
    "atexit.register(press)  # a Ctrl-C while the interpreter exits\n"
    "def command():\n"
    "    {body}\n"
    "run_as_process(command)\n"
)


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ("return 0", 0, ""),  # pressed only as it exits: ignored
        ("press(); return 0", 130, "autotune: interrupted"),  # while it imports: interrupted
        (  # pressed again once the command took the first: ignored
            "try:\n        press()\n    except KeyboardInterrupt:\n        press()\n"
            "        return 130",
            130,
            "",
        ),
    ],
    ids=["while-exiting", "while-importing", "again-after-the-first"],
)
def test_ctrl_c_outside_a_run_interrupts_once_and_never_kills_the_exit(
    body: str, status: int, said: str
) -> None:
    """The command line's process: a Ctrl-C outside a run (its imports) interrupts it with
    status 130 and one line; any later one, or one pressed while the interpreter exits, is
    ignored (no traceback, no death by SIGINT)."""
    child = subprocess.run(
        [sys.executable, "-c", _PROCESS.format(body=body)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert child.returncode == status, child.stderr
    assert child.stderr.strip() == said


def test_an_urgent_ctrl_c_is_also_a_request_should_its_interrupt_be_swallowed() -> None:
    stop = StopRequest()
    with stop.urgently(), pytest.raises(KeyboardInterrupt):
        stop._handle(signal.SIGINT, None)
    assert stop.requested and stop.forced
