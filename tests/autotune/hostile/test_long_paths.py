"""Paths the file system cannot hold: a name past its limit (255 bytes) or a whole path past its
limit (4096 bytes). Each is refused in one line naming the path, cut in the middle, and nothing
is created."""

from __future__ import annotations

import pytest

import autotune
from autotune.errors import AutotuneError
from tests.autotune.hostile.conftest import Hostile

TUNE = ["--shape", "16x16x16", "--space", "chapter", "--trials", "2", "--study", "fresh"]
LONG_NAME = "a" * 300
DEEP = "/".join(["b" * 200] * 25)  # each name fits, the whole does not


@pytest.mark.parametrize(
    ("results", "why"),
    [
        (LONG_NAME, "a name of 300 bytes"),
        (f"fresh/{LONG_NAME}/x", "a name of 300 bytes"),
        (DEEP, "in all"),
    ],
    ids=["name", "inner-name", "path"],
)
@pytest.mark.parametrize(
    "command", [TUNE, ["studies"], ["leaderboard", "base"]], ids=["tune", "studies", "leaderboard"]
)
def test_results_too_long_for_the_file_system(
    hostile: Hostile, results: str, why: str, command: list[str]
) -> None:
    line = hostile.refuses([*command, "--results", results], "--results", "too long", why)
    assert len(line) < 300


def test_an_output_too_long_is_named(hostile: Hostile) -> None:
    line = hostile.refuses(["export", "base", "--out", f"{DEEP}/x.json"], "too long", "bbbb")
    assert len(line) < 300


def test_the_api_refuses_results_too_long(tmp_path: object) -> None:
    with pytest.raises(AutotuneError, match="a name of 300 bytes"):
        autotune.tune("16x16x16", trials=2, results=f"/tmp/{LONG_NAME}")
