"""A study journal written before the typed trial record and the oracle plug-ins is still read:
its leaderboard rebuilds to the same ranking, and the study resumes under its own name.

The fixture (tests/autotune/data/journal_v1/study.journal) is the study of
`python -m autotune --shape 64x64x96 --trials 25 --study legacy-main`, written by the tuner whose
records carried no schema version (schema 1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autotune.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "journal_v1" / "study.journal"
# The 25 entries as that tuner ranked them.
CYCLES = [
    7248,
    7248,
    7248,
    7320,
    7480,
    7480,
    8300,
    8464,
    9600,
    10240,
    10896,
    11448,
    12160,
    13440,
    14176,
    15120,
    17280,
    18560,
    18624,
    19008,
    34176,
    39552,
    71808,
    71808,
    71808,
]
BEST = (
    '{"family":"strips","first_reverse":false,"flip":true,"lookahead":16,"partition":"balanced","protect":8,'
    '"reserve":1,"split":2,"store_first":false,"strip_axis":"row","strip_order":"narrow","tail":2}'
)


@pytest.fixture
def legacy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "results" / "legacy-main"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURE, folder / "study.journal")
    monkeypatch.chdir(tmp_path)
    return folder


def rows(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[dict]:  # type: ignore[type-arg]
    assert main(argv) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_an_old_journal_rebuilds_the_same_leaderboard(
    legacy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = rows(capsys, ["leaderboard", "legacy-main", "--json", "--top", "30"])
    assert [r["cycles"] for r in found] == CYCLES and found[0]["params_json"] == BEST
    assert all(
        r["timing"] == "full" for r in found if r["feasible"]
    )  # schema 1 records were simulated in full
    assert {r["origin"] for r in found} >= {"baseline"}


def test_an_old_study_resumes_under_its_own_name(
    legacy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its spaces were the default then; naming them resumes it.
    resume = ["--study", "legacy-main", "--space", "chapter,general,strips", "--trials", "5"]
    found = rows(capsys, ["--shape", "64x64x96", *resume, "--json"])
    assert found[0]["cycles"] <= CYCLES[0]
    assert main(["studies", "--json"]) == 0
    (study,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert study["study"] == "legacy-main" and study["trials"] == 30
