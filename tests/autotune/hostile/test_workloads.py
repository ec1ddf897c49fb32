"""Workloads too large for one run, and a run stopped while it opens its studies: refused in
one line before anything is created, or stopped at once with nothing tuned and a clean resume."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from helpers.cli import run_error

from autotune.cli.main import main
from autotune.run import study
from autotune.run.sizes import MAX_SHAPES


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def workload(path: Path, shapes: int) -> Path:
    rows = "".join(f"g{i},{8 + i}x8x8,1\n" for i in range(shapes))
    path.write_text("name,shape,weight\n" + rows)
    return path


def test_a_workload_of_too_many_shapes_is_refused_before_anything(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    many = workload(in_tmp / "many.csv", MAX_SHAPES + 1)
    line = run_error(capsys, ["tune", "--workload", str(many), "--trials", "2"])
    assert f"{MAX_SHAPES + 1:,} distinct GEMM shapes" in line and "--workload" in line
    assert not (in_tmp / "results").exists()


def test_a_stop_while_the_studies_open_stops_at_once(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    three = workload(in_tmp / "three.csv", 3)
    argv = ["tune", "--workload", str(three), "--trials", "2", "--space", "chapter"]
    opened = []
    real = study.open_study

    def open_then_stop(*args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(real(*args, **kwargs))
        if len(opened) == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return opened[-1]

    monkeypatch.setattr(study, "open_study", open_then_stop)
    assert main(argv) == 128 + signal.SIGTERM
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "tuning" not in captured.err
    assert captured.err.strip().splitlines()[-1] == "autotune: interrupted"
    assert len(opened) == 2  # the third study was never opened
    monkeypatch.setattr(study, "open_study", real)
    assert main(argv) == 0  # the resume tunes every shape
    assert capsys.readouterr().err.count("tuning g") == 3
