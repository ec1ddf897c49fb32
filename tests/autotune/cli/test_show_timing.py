"""`show --timing full`: an entry timed again by full simulation beside its recorded cycles, and
refused in one line past the limit of products simulated in full."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_error

from autotune.cli.main import main


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("show_timing")
    argv = ["--shape", "512x256x384", "--trials", "6", "--results", str(folder)]
    assert main([*argv, "--study", "s", "--verify-top", "1"]) == 0
    return folder


def test_both_figures_are_printed_and_equal(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    argv = ["show", "s", "--results", str(results), "--timing", "full", "--json"]
    assert main(argv) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["timing"] in ("periodic", "full")
    assert row["cycles_full"] == row["cycles"] > 0
    assert main(["show", "s", "--results", str(results), "--timing", "full"]) == 0
    assert "(timed in full: equal)" in capsys.readouterr().out


def test_past_the_limit_it_says_so(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    argv = ["show", "s", "--results", str(results), "--timing", "full", "--max-products", "100"]
    line = run_error(capsys, argv)
    assert "--timing full" in line and "(--max-products)" in line
