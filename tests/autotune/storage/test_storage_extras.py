"""A PostgreSQL storage without its driver (the `postgres` extra not installed): one line that
says which extra to install, exit status 2, and nothing created."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from autotune.cli.main import main
from autotune.errors import StorageError
from autotune.storage import locations

URL = "postgresql://tuner:secret@127.0.0.1:9/autotune"


@pytest.fixture
def no_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("psycopg2", "psycopg") else real(name, *a),
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["tune", "--shape", "32x32x32", "--trials", "3", "--storage", URL],
        ["studies", "--storage", URL],
        ["leaderboard", "some-study", "--storage", URL],
    ],
)
def test_the_missing_extra_is_named_in_one_line(
    no_driver: None,
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]
    assert err[0].endswith("pip install 'autotune[postgres]'") and "--storage" in err[0]
    assert "secret" not in err[0]
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.journal"))


def test_each_driver_of_the_url_is_checked(no_driver: None) -> None:
    with pytest.raises(StorageError, match="psycopg driver"):
        locations.check_driver("postgresql+psycopg://u@h/db")
    with pytest.raises(StorageError, match="psycopg2 driver"):
        locations.check_driver("postgresql://u@h/db")
    locations.check_driver("sqlite:///x.db")  # SQLite comes with Python
    locations.check_driver("results/x/study.journal")
