"""Studies written before a family named its limit still resume, rank and rebuild identically.

Those studies recorded every family's feasibility limit as the constraint `slots_over`: GA-1's
scratchpad slots, but also a systolic design's processing elements over its PE budget. A study's
constraints are read as they are stored (autotune.results.tables reads any `NAME_over`), so an
old study's rows keep saying `slots`; a candidate evaluated now records its family's own limit
(`Family.limit`: GA-1 `slots`, systolic `pe`). Without budgets a record stores no limits, and
its one constraint is named by its family when it is read (`Problem.constraints`).

The fixtures (tests/autotune/data/limits_v2/) are the studies, and the leaderboards, of

    python -m autotune --oracle systolic --shape 32x48x32 --trials 20 --area-budget 0.3 --study systolic-v2
    python -m autotune --shape 32x32x32 --search-machine --machine-range slots=3:8 \\
        --area-budget 0.06 --trials 20 --study ga1-v2

written by the tuner before limits were named by their family (autotune 0.1.0)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autotune.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data" / "limits_v2"
STUDIES = ("systolic-v2", "ga1-v2")


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for study in STUDIES:
        (tmp_path / "results" / study).mkdir(parents=True)
        shutil.copy(DATA / study / "study.journal", tmp_path / "results" / study)
    return tmp_path / "results"


@pytest.mark.parametrize("study", STUDIES)
def test_an_old_study_rebuilds_its_leaderboard_identically(
    results: Path, study: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["leaderboard", study, "--top", "100"]) == 0
    out = capsys.readouterr().out
    assert out == (DATA / f"{study}.leaderboard.txt").read_text()
    assert "slots limit" in out  # the old name, read as it was stored


def test_an_old_systolic_study_resumes_and_names_the_pe_limit_of_new_trials(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (DATA / "systolic-v2.leaderboard.txt").read_text().splitlines()[2:]
    argv = ["--oracle", "systolic", "--shape", "32x48x32", "--area-budget", "0.3"]
    assert main([*argv, "--trials", "60", "--study", "systolic-v2", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 10 and all(row["study"] == "systolic-v2" for row in rows)
    assert main(["leaderboard", "systolic-v2", "--top", "200", "--json"]) == 0
    ranked = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    old = {r["trial"]: r for r in ranked if r["trial"] < 20}
    new = [r for r in ranked if r["trial"] >= 20 and not r["feasible"]]
    assert len(old) == len(before)  # every old entry is still ranked
    for row in old.values():
        names = json.loads(row["constraints_json"])
        assert "pe_over" not in names  # stored as it was written
    for row in new:
        assert set(json.loads(row["constraints_json"])) == {"pe_over", "area_over"}
