"""A third-party oracle, installed as a package would be, tunes through the ordinary command
line: examples/toy_oracle registers in the entry-point group and touches no file of autotune."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "toy_oracle"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return target


def autotune(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "autotune", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_the_example_oracle_tunes_through_the_cli(installed: Path, tmp_path: Path) -> None:
    done = autotune(
        installed, tmp_path, "--oracle", "toy", "--shape", "256x256x256", "--trials", "30", "--json"
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert rows and rows[0]["family"] == "toy_blocks" and rows[0]["verification"] == "model"
    assert rows == sorted(rows, key=lambda r: r["cycles"])
    assert (tmp_path / "results" / "toy-256x256x256" / "leaderboard.parquet").is_file()
    shown = autotune(installed, tmp_path, "leaderboard", "toy-256x256x256", "--json", "--top", "1")
    assert shown.returncode == 0 and json.loads(shown.stdout)["cycles"] == rows[0]["cycles"]


def test_the_example_oracle_refuses_a_bad_machine_in_one_line(
    installed: Path, tmp_path: Path
) -> None:
    done = autotune(
        installed, tmp_path, "--oracle", "toy", "--shape", "64x64x64", "--machine", "speed=3"
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "--machine" in done.stderr


def test_an_oracle_that_is_not_installed_is_named(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "autotune", "--oracle", "nosuch", "--shape", "64x64x64"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert (
        done.returncode == 2
        and "unknown oracle 'nosuch'" in done.stderr
        and "Traceback" not in done.stderr
    )
