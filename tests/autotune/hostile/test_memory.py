"""The tallest, widest and deepest products (one side up to 2^40 elements, the others small) through
every command that evaluates GA-1 schedules, and the Python API: each either completes within the
default --max-memory (1 GiB, the whole process: its peak resident memory, measured by the kernel
for each child) or is refused before any work, in one line naming the limit.

Each command runs in a child process of its own (os.wait4 gives that child's peak), one after the
other on the same results folder, as a user would run them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LIMIT_KB = 1 << 20  # the default --max-memory, 1 GiB, in the kilobytes ru_maxrss counts
ROOT = Path(__file__).resolve().parents[3]
HUGE = 1 << 40
# 300000000x16x16 is accepted and runs: memory linear in its rows would pass the limit many
# times over (the guard prices its time, a tenth of 3000000000x16x16's).
SHAPES = [f"{HUGE}x8x8", f"8x8x{HUGE}", f"8x{HUGE}x8", "300000000x16x16", "16000000x8x8"]
SPACES = "chapter,general,strips,delayed"  # every GA-1 family


# The peak is measured from a small launcher process, not from the test's own: a child forked
# from a large process (a test worker holding hundreds of MB) starts with the parent's resident
# pages counted in its peak, before it execs.
LAUNCH = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_pid, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as handle:
    handle.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def _run(args: list[str], cwd: Path) -> tuple[int, int, str]:
    """(exit status, peak resident kB, stderr) of one command in a child process."""
    peak = cwd / "peak-kb"
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, str(peak), sys.executable, *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    return done.returncode, int(peak.read_text()), done.stderr


def _within_or_refused(
    label: str,
    code: int,
    peak_kb: int,
    err: str,
    limits: tuple[str, ...] = ("--max-memory", "--max-products"),
) -> None:
    assert "Traceback" not in err, (label, err)
    if code == 2:  # refused before any work: one line naming the limits
        lines = err.strip().splitlines()
        assert len(lines) == 1 and all(limit in lines[0] for limit in limits), (label, err)
    else:
        assert code == 0, (label, code, err)
    assert peak_kb <= LIMIT_KB, (label, f"{peak_kb / 1024:.0f} MB")


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
def test_every_command_holds_the_memory_limit_or_refuses(shape: str, tmp_path: Path) -> None:
    results = str(tmp_path / "results")
    tune = ["-m", "autotune", "--shape", shape, "--trials", "4", "--space", SPACES]
    code, peak, err = _run([*tune, "--study", "big", "--results", results], tmp_path)
    _within_or_refused(f"tune {shape}", code, peak, err)
    readers = {
        "show": ["show", "big", "--rank", "1"],
        "export json": ["export", "big", "--format", "json", "--out", "e.json"],
        "export asm": ["export", "big", "--format", "asm", "--out", "e.asm"],
        "plot": ["plot", "big"],
    }
    commands = {
        **(
            {label: ["-m", "autotune", *args] for label, args in readers.items()}
            if code == 0
            else {}
        ),
        "baseline": ["-m", "autotune", "baseline", "--shape", shape],
    }
    for label, args in commands.items():
        code, peak, err = _run([*args, "--results", results], tmp_path)
        _within_or_refused(f"{label} {shape}", code, peak, err)
    code, peak, err = _run(["-c", API.format(shape=shape, results=results)], tmp_path)
    _within_or_refused(f"api {shape}", code, peak, err, ("max_memory", "max_products"))


# The API raises the package's errors, naming settings by their keywords.
API = """
import sys, autotune
from autotune.errors import AutotuneError
try:
    autotune.tune({shape!r}, trials=2, study="api", results={results!r})
except AutotuneError as exc:
    print(exc, file=sys.stderr)
    sys.exit(2)
"""
