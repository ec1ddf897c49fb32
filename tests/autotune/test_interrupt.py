"""Ctrl-C while worker processes start: held for the parent, never lost; the children ignore it
(autotune.interrupt)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autotune.interrupt import children_ignore_ctrl_c, graceful_stop
from tests.helpers.waiting import PATIENCE

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
