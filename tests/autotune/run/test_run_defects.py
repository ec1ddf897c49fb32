"""Runs that go wrong part way: refused sizes and samplers, resume hints that name the setting
that differs, interrupted workloads, SIGTERM, an empty check reference and an interrupted
`optimum`."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import run_error

from autotune.cli.main import main
from autotune.interrupt import STOP
from autotune.run import pipeline
from tests.helpers.waiting import PATIENCE, wait_until

ROOT = Path(__file__).resolve().parents[3]
SMALL = ["--shape", "64x64x64", "--trials", "3"]
TWO_GEMMS = (
    '[[gemm]]\nname = "a"\nshape = "32x32x32"\nweight = 2\n'
    '[[gemm]]\nname = "b"\nshape = "32x64x32"\nweight = 1\n'
)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ok(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, (captured.out, captured.err)
    return captured.out


def test_export_asm_refuses_a_program_too_large_to_write(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ok(capsys, ["--shape", "100000x100000x100000", "--trials", "2", "--study", "big"])
    line = run_error(capsys, ["export", "big", "--format", "asm", "--out", "big.asm"])
    assert "--max-products" in line and "--max-memory" in line
    assert not (tmp_path / "big.asm").exists()
    assert json.loads(ok(capsys, ["export", "big", "--format", "json"]))["rank"] == 1


def test_export_asm_of_a_small_study_still_works(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ok(capsys, [*SMALL, "--study", "small"])
    ok(capsys, ["export", "small", "--format", "asm", "--out", "small.asm"])
    assert (tmp_path / "small.asm").read_text().startswith("# autotune")


def test_a_refused_grid_run_leaves_no_study(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = run_error(capsys, [*SMALL, "--study", "g", "--sampler", "grid"])
    assert "feasible points" in line
    assert not (tmp_path / "results" / "g").exists()
    ok(capsys, [*SMALL, "--study", "g"])  # the name is free


def test_resume_hint_names_the_space_and_following_it_works(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ok(capsys, [*SMALL, "--study", "x"])
    line = run_error(capsys, [*SMALL, "--study", "x", "--space", "chapter"])
    assert "different spaces" in line and "--space chapter,delayed" in line
    assert "--sampler" not in line
    ok(capsys, [*SMALL, "--study", "x", "--space", "chapter,delayed"])

    ok(capsys, [*SMALL, "--study", "y", "--space", "chapter"])
    line = run_error(capsys, [*SMALL, "--study", "y"])
    assert "--space chapter " in line and "--sampler" not in line
    ok(capsys, [*SMALL, "--study", "y", "--space", "chapter"])


def test_resume_hint_names_the_oracle(capsys: pytest.CaptureFixture[str]) -> None:
    ok(capsys, [*SMALL, "--study", "o"])
    line = run_error(capsys, [*SMALL, "--study", "o", "--oracle", "systolic"])
    assert "different oracle" in line and "--oracle ga1" in line
    assert "encoding" not in line


def test_resume_hint_names_the_sampler_when_only_the_encoding_differs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ok(capsys, [*SMALL, "--study", "t", "--sampler", "tpe"])
    line = run_error(capsys, [*SMALL, "--study", "t"])
    assert "--sampler tpe" in line
    ok(capsys, [*SMALL, "--study", "t", "--sampler", "tpe"])
    ok(capsys, [*SMALL, "--study", "x2"])
    line = run_error(capsys, [*SMALL, "--study", "x2", "--sampler", "tpe"])
    assert "--sampler guided" in line


def test_an_interrupted_workload_totals_the_gemms_it_tuned(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "two.toml").write_text(TWO_GEMMS)
    tune_one = pipeline.tune_study

    def then_stop(*args: object, **kwargs: object) -> None:
        tune_one(*args, **kwargs)  # type: ignore[arg-type]
        STOP.request()  # as a Ctrl-C after the first GEMM

    monkeypatch.setattr(pipeline, "tune_study", then_stop)
    assert main(["--workload", "two.toml", "--slots", "16", "--trials", "5", "--study", "w"]) == 130
    out = capsys.readouterr().out
    assert "1 of 2 GEMMs tuned; the totals are over those" in out
    assert not (tmp_path / "results" / "w-b" / "leaderboard.parquet").exists()
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    out = ok(capsys, ["leaderboard", "w"])
    assert "1 of 2 GEMMs tuned" in out and "not tuned" in out
    ratio = float(out.split("the bounds' ")[1].split(": ")[1].split("x")[0])
    assert ratio >= 1.0
    assert not (tmp_path / "results" / "w-b" / "leaderboard.parquet").exists()


def _python(*argv: str, cwd: Path, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "autotune", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,  # type: ignore[call-overload]
    )


@pytest.mark.slow  # a tuning process
def test_sigterm_stops_like_ctrl_c(tmp_path: Path) -> None:
    process = _python("--shape", "64x64x64", "--trials", "100000", "--study", "t", cwd=tmp_path)
    journal = tmp_path / "results" / "t" / "study.journal"
    wait_until(
        lambda: journal.exists() and journal.read_text().count('"state":1') >= 10,
        "10 finished trials",
        process,
    )
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    assert "interrupted; kept study 't'" in out
    assert (tmp_path / "results" / "t" / "leaderboard.parquet").is_file()
    assert not list((tmp_path / "results" / "t").glob("study.journal.worker-*"))


def test_check_against_an_empty_reference_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "empty.json").write_text(json.dumps({"schema": 2, "records": []}))
    line = run_error(capsys, ["check", "--reference", "empty.json"])
    assert "holds no records" in line and "nothing to compare" in line


@pytest.mark.slow  # CP-SAT in a process
@pytest.mark.skipif(importlib.util.find_spec("ortools") is None, reason="needs OR-Tools")
def test_ctrl_c_during_optimum_writes_nothing(tmp_path: Path) -> None:
    argv = ["optimum", "--shape", "32x32x32", "--slots", "16", "--time-limit", "30"]
    process = _python(
        *argv, "--search-nodes", "0", "--out", "o.json", cwd=tmp_path, start_new_session=True
    )
    assert process.stderr is not None
    for line in process.stderr:
        if " start " in line:  # the solver runs: a Ctrl-C reaches the whole group, as a terminal's
            break
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted: the solver was stopped, nothing written" in err
    assert not (tmp_path / "o.json").exists()
