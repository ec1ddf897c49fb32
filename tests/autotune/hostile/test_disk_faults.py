"""Disk and output faults: a full disk under the results folder during `tune` or a workload, a
full or closed standard output, a reader that leaves. One line naming the path, exit 2 (120 when
the reader left), no traceback, and every trial completed before the fault kept. The full disk
is injected into the journal's writes (after a number of them), the way a full device fails
them: os.write raising ENOSPC."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autotune.storage import finished_count, local_storage, read_study
from tests.autotune.hostile.conftest import one_error_line, run_cli

ROOT = Path(__file__).resolve().parents[3]
SHAPE = ["--shape", "16x16x16", "--space", "chapter"]


def _disk_fills_after(monkeypatch: pytest.MonkeyPatch, writes: int) -> None:
    import autotune.storage.journal as journal

    real, count = os.write, [0]

    def write(fd: int, data: bytes) -> int:
        count[0] += 1
        if count[0] > writes:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(journal.os, "write", write)


@pytest.mark.parametrize("writes", [3, 40])
def test_a_full_disk_during_tune_is_one_line_and_keeps_the_trials(
    world: Path, monkeypatch: pytest.MonkeyPatch, writes: int
) -> None:
    _disk_fills_after(monkeypatch, writes)
    result = run_cli([*SHAPE, "--trials", "200", "--study", "full"])
    monkeypatch.undo()
    assert result.code == 2, result.text
    line = one_error_line(result)
    assert "results/full/study.journal" in line and "No space left on device" in line
    address = local_storage(world / "results", "full")
    assert address is not None
    study = read_study(address, "full")
    assert study is not None and finished_count(study) < 200  # what was stored is readable


def test_a_full_disk_during_a_workload_is_one_line(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _disk_fills_after(monkeypatch, 60)
    result = run_cli(["--workload", "w.csv", "--space", "chapter", "--study", "wfull"])
    assert result.code == 2, result.text
    assert "Traceback" not in result.text
    last = result.err.strip().splitlines()[-1]  # after the lines of the GEMMs tuned before
    assert last.startswith("autotune: error: cannot write results/wfull-")
    assert "No space left on device" in last


def _python(args: list[str], cwd: Path, **streams: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autotune", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        text=True,
        **streams,  # type: ignore[call-overload]
    )


@pytest.mark.slow  # processes
def test_standard_output_full_closed_or_left(world: Path) -> None:
    board = ["leaderboard", "base"]
    with open("/dev/full", "w") as full:
        done = _python(board, world, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 2 and done.stderr.strip().endswith("No space left on device")
    assert "Traceback" not in done.stderr
    closed = _python([*board], world, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert closed.returncode == 0
    shut = subprocess.run(
        f"{sys.executable} -m autotune leaderboard base >&-",
        shell=True,
        cwd=world,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        text=True,
        stderr=subprocess.PIPE,
    )
    assert shut.returncode == 2 and "standard output is closed" in shut.stderr
    reader = subprocess.Popen(
        [sys.executable, "-m", "autotune", "leaderboard", "base", "--top", "10"],
        cwd=world,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.readline()
    reader.stdout.close()  # the reader leaves after one line
    code = reader.wait()
    assert "Traceback" not in reader.stderr.read()
    if code == 0:  # it wrote everything before the reader left: the pipe held it all
        whole = _python(["leaderboard", "base", "--top", "10"], world, stdout=subprocess.PIPE)
        assert len(whole.stdout.encode()) <= 65536
    else:
        assert code == 120
