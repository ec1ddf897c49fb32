"""`autotune check`: the regression check passes on the tuner as it is, records its bests with
--update, and fails (non-zero, with a message) against a record it cannot reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autotune.cli.commands.check import CHAPTER_BEST, reference_key
from autotune.cli.main import main
from simcore.ga1.machine import Machine
from simcore.shape import Shape


def test_check_passes_updates_and_catches_a_regression(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    reference = tmp_path / "ref" / "best.json"
    code = main(["check", "--trials", "20", "--reference", str(reference), "--update"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "check passed" in captured.out and f"updated {reference}" in captured.out
    assert "64 slots: best" in captured.out and "16 slots: best" in captured.out
    assert not (tmp_path / "results").exists()  # the check's studies live in memory

    records = json.loads(reference.read_text())
    assert records["schema"] == 1
    by_slots = {r["slots"]: r for r in records["records"]}
    assert set(by_slots) == {64, 16}
    for slots, record in by_slots.items():
        assert record["key"] == reference_key(Shape(128, 128, 128), Machine(slots=slots))
        assert record["shape"] == "128x128x128"
        assert 0 < record["cycles"] <= CHAPTER_BEST[slots][0]
        assert json.loads(record["params"])["family"] == record["family"]
        assert f"{slots} slots: best {record['cycles']} cycles" in captured.out

    impossible = {"schema": 1, "records": [dict(r, cycles=1) for r in records["records"]]}
    reference.write_text(json.dumps(impossible))
    code = main(["check", "--trials", "20", "--reference", str(reference), "--update"])
    captured = capsys.readouterr()
    assert code == 1
    assert "check passed" not in captured.out
    failures = [
        line for line in captured.err.splitlines() if line.startswith("autotune: check failed: ")
    ]
    assert len(failures) == 2
    assert all("is worse than the reference record 1" in line for line in failures)
    assert "Traceback" not in captured.err
    assert json.loads(reference.read_text()) == impossible  # a worse run never rewrites the record


def test_the_committed_reference_record_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The regression gate itself: the default check against results/reference/best.json, found
    from another folder through --results."""
    results = Path(__file__).resolve().parents[3] / "results"
    assert (results / "reference" / "best.json").is_file(), (
        "results/reference/best.json is committed with the project"
    )
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--results", str(results)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "check passed" in captured.out
