"""The Python API speaks Python: every argument checked by type and range before any work,
raising the package's errors (SettingTypeError is a TypeError, SettingValueError a ValueError)
with the command line's messages; nothing is created."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import autotune
from autotune.errors import AutotuneError

SHAPE = "16x16x16"
TUNE_CASES: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"trials": "10"}, TypeError, "trials expected an integer, got '10'"),
    ({"trials": 1.5}, TypeError, "trials expected an integer"),
    ({"trials": True}, TypeError, "trials expected an integer"),
    ({"trials": 10**20}, ValueError, "trials must be at most 100000000"),
    ({"trials": 0}, ValueError, "trials must be at least 1"),
    ({"machine": 5}, TypeError, "machine must be KEY=VALUE text"),
    ({"results": 5}, TypeError, "results must be a folder's path"),
    ({"seed": 2**70}, ValueError, "seed must be between 0 and 4294967295"),
    ({"workers": 0}, ValueError, "workers must be at least 1"),
]


@pytest.mark.parametrize(("keywords", "kind", "message"), TUNE_CASES, ids=str)
def test_tune_refuses_before_any_work(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    keywords: dict[str, Any],
    kind: type[Exception],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    arguments = {"trials": 2, "results": str(tmp_path / "results"), **keywords}
    with pytest.raises(kind, match=message) as caught:
        autotune.tune(SHAPE, **arguments)
    assert isinstance(caught.value, AutotuneError)
    assert "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argument", "keywords", "message"),
    [
        (None, {}, "load\\(\\) takes a leaderboard file"),
        (5, {}, "got int"),
        ("base", {"results": 5}, "results must be a folder's path"),
        ("base", {"storage": 5}, "storage must be a storage address"),
    ],
    ids=str,
)
def test_load_refuses_what_it_cannot_read(
    argument: Any, keywords: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError, match=message) as caught:
        autotune.load(argument, **keywords)
    assert isinstance(caught.value, AutotuneError)


def test_the_cli_says_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.cli import run_error

    line = run_error(capsys, ["--shape", SHAPE, "--trials", str(10**20)])
    assert "must be at most 100000000" in line
