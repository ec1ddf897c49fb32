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


def test_the_core_example_is_small_and_the_guide_shows_it() -> None:
    """The toy oracle is the core alone, under 80 lines; the guide includes it whole (a pymdownx
    snippet, kept out of the formatter's reach)."""
    source = EXAMPLE / "src" / "toy_oracle" / "__init__.py"
    assert len(source.read_text().splitlines()) < 80
    guide = (EXAMPLE.parents[1] / "docs" / "extending" / "oracle.md").read_text()
    assert '--8<-- "examples/toy_oracle/src/toy_oracle/__init__.py"' in guide
    assert '--8<-- "examples/toy_oracle/src/toy_oracle/guarded.py"' in guide
    assert "--8 <" not in guide


def test_an_oracle_with_a_size_guard_refuses_past_the_limits(
    installed: Path, tmp_path: Path
) -> None:
    """The capability example: its guard refuses a shape past --max-products in one line naming
    the flag, before any study exists; within the limits it tunes like the core oracle."""
    big = autotune(
        installed, tmp_path, "--oracle", "toy_guarded", "--shape", "4096x4096x4096",
        "--max-products", "1000",
    )  # fmt: skip
    assert big.returncode == 2 and big.stderr.count("\n") == 1, big.stderr
    assert "needs 1.34e+08 tile products" in big.stderr and "--max-products" in big.stderr
    assert not (tmp_path / "results").exists()
    small = autotune(
        installed, tmp_path, "--oracle", "toy_guarded", "--shape", "256x256x256", "--trials", "20",
    )  # fmt: skip
    assert small.returncode == 0, small.stderr


def test_the_python_api_gets_the_same_size_guard(installed: Path, tmp_path: Path) -> None:
    code = (
        "import autotune\n"
        "from autotune.errors import WorkError\n"
        "try:\n"
        "    autotune.tune('4096x4096x4096', oracle='toy_guarded', max_products=1000,"
        " storage=':memory:')\n"
        "except WorkError as exc:\n"
        "    print(exc.setting, exc.work.products)\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(installed), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["max_products", str(512**3)]
