"""`autotune optimum`: the exact solver's schedule summarised, verified and written; put into a
study (new or existing) where the leaderboard, show, export and a resumed `tune` treat it like
any other entry; bad input refused in one line. Small instances and CP-SAT work limits keep it
fast and reproducible."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from autotune.cli.main import main
from simcore.ga1.asm import from_text
from simcore.ga1.machine import Machine
from simcore.ga1.verify import verify_matmul
from simcore.shape import Shape

needs_ortools = pytest.mark.skipif(
    importlib.util.find_spec("ortools") is None,
    reason="the exact solver needs OR-Tools (pip install 'autotune[exact]')",
)
# 2x2x2 tiles on 8 slots: proven at the DMA bound at once.
PROVEN = ["--shape", "16x16x16", "--slots", "8", "--work-limit", "1"]
# 2x2x3 tiles on 6 slots: a bracket, the solver improving on its start (no exhaustive search).
BRACKET = [
    *("--shape", "16x16x24", "--slots", "6", "--work-limit", "0.2", "--workers", "4"),
    *("--search-nodes", "0"),
]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_ok(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, (code, captured.out, captured.err)
    return captured.out, captured.err


def run_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The CLI must fail with status 2 and one `autotune: error:` line, no traceback."""
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2, (code, captured.out, captured.err)
    assert "Traceback" not in captured.err + captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("autotune: error: "), captured.err
    return lines[0]


def leaderboard(capsys: pytest.CaptureFixture[str], study: str) -> list[dict]:
    out, _ = run_ok(capsys, ["leaderboard", study, "--json"])
    return [json.loads(line) for line in out.splitlines()]


@needs_ortools
def test_the_summary_and_the_file_of_a_proven_optimum(capsys, in_tmp: Path) -> None:
    out, err = run_ok(capsys, ["optimum", *PROVEN, "--out", "opt.json"])
    assert "solving 16x16x16 (2x2x2 tiles) on slots=8 exactly" in err
    assert "time limit 60 s, work limit 1" in err and " start " in err
    assert "status     optimal: proven" in out
    assert "cycles     240\n" in out and "bound      240" in out and "gap        0.0%" in out
    assert "  verified   result equals numpy's product, hazard replay clean" in out
    data = json.loads((in_tmp / "opt.json").read_text())
    assert data["format"] == "autotune-optimum" and data["version"] == 1
    assert (data["status"], data["cycles"], data["bound"], data["proven"]) == (
        "optimal",
        240,
        240,
        True,
    )
    assert data["verified"] is True and data["engine_cycles"] == 240
    # The file's program runs as it says, on an independent run of the reference simulator.
    machine = Machine(**data["machine"])
    verification, _ = verify_matmul(machine, from_text(data["program"]), Shape(16, 16, 16), seed=7)
    assert verification.ok and verification.cycles == data["cycles"]


@pytest.mark.slow  # CP-SAT's proof questions
@needs_ortools
def test_proof_questions_are_announced_and_never_pass_a_schedule(capsys, in_tmp: Path) -> None:
    out, err = run_ok(capsys, ["optimum", *BRACKET, "--proof-limit", "0.2", "--json"])
    assert "proof limit 0.2 per question" in err
    data = json.loads(out)
    assert data["options"]["proof_limit"] == 0.2
    assert data["bound"] <= data["cycles"] <= data["start_cycles"] and data["verified"] is True
    assert data["proven"] == (data["status"] == "optimal")


@needs_ortools
def test_the_exhaustive_search_proves_what_cp_sat_leaves_open(capsys, in_tmp: Path) -> None:
    argv = ["optimum", "--shape", "16x16x8", "--slots", "4", "--work-limit", "0.01", "--json"]
    out, err = run_ok(capsys, argv)
    assert "then an exhaustive search of at most 20,000,000 states" in err
    data = json.loads(out)
    assert (data["status"], data["cycles"], data["bound"], data["proven"]) == (
        "optimal",
        176,
        176,
        True,
    )
    assert data["verified"] is True and data["options"]["search_nodes"] == 20_000_000
    out, err = run_ok(capsys, [*argv, "--search-nodes", "0", "--force"])
    assert "exhaustive" not in err and json.loads(out)["proven"] is False


@needs_ortools
def test_a_bracket_in_json(capsys, in_tmp: Path) -> None:
    out, _ = run_ok(capsys, ["optimum", *BRACKET, "--json"])
    data = json.loads(out)
    assert "program" not in data and data["enqueued"] is None
    assert data["bound"] <= data["cycles"] <= data["start_cycles"]
    assert data["status"] in ("feasible", "start", "optimal") and data["verified"] is True
    written = Path(data["out"])
    assert written.parent == Path("results") / "optimum" and written.name.startswith("16x16x24-s6-")
    assert json.loads(written.read_text())["cycles"] == data["cycles"]


@needs_ortools
def test_an_earlier_result_is_replaced_only_with_force(capsys, in_tmp: Path) -> None:
    run_ok(capsys, ["optimum", *PROVEN])
    (path,) = (in_tmp / "results" / "optimum").iterdir()
    before = path.read_text()
    line = run_error(capsys, ["optimum", *PROVEN])
    assert "holds an earlier result" in line and "--force" in line
    assert path.read_text() == before
    run_ok(capsys, ["optimum", *PROVEN, "--force"])
    run_ok(capsys, ["optimum", *PROVEN, "--out", "x.json"])
    assert "replacing it needs --force" in run_error(
        capsys, ["optimum", *PROVEN, "--out", "x.json"]
    )


@needs_ortools
def test_enqueued_it_is_an_entry_like_any_other_and_tune_resumes(capsys, in_tmp: Path) -> None:
    out, _ = run_ok(capsys, ["optimum", *BRACKET, "--enqueue", "exact", "--out", "o.json"])
    solved = json.loads((in_tmp / "o.json").read_text())
    assert "put into study 'exact' as trial 0: rank 1 of 1" in out and "verified by" in out
    program = in_tmp / "results" / "exact" / "programs" / f"{solved['program_digest']}.asm"
    assert program.read_text() == solved["program"]
    (row,) = leaderboard(capsys, "exact")
    assert (row["family"], row["program"], row["cycles"]) == (
        "stored",
        solved["program_digest"],
        solved["cycles"],
    )
    assert row["verified"] is True and row["verification"] == "exact"
    assert (row["origin"], row["sampler"], row["timing"]) == ("optimum", "cp-sat", "full")
    shown, _ = run_ok(capsys, ["show", "exact"])
    assert f"{solved['cycles']} cycles" in shown and "family                   stored" in shown
    asm, _ = run_ok(capsys, ["export", "exact", "--format", "asm"])
    assert (
        "\n".join(line for line in asm.splitlines() if not line.startswith("#")) + "\n"
        == (solved["program"])
    )
    # The tuner resumes the study around it, and ranks and verifies it with its own trials.
    tune = ["tune", "--shape", "16x16x24", "--slots", "6", "--study", "exact", "--trials", "40"]
    run_ok(capsys, tune)
    rows = leaderboard(capsys, "exact")
    stored = [r for r in rows if r["family"] == "stored"]
    assert len(stored) == 1 and stored[0]["trial"] == 0
    # Verified like the others: when among the top ten the tuner verifies.
    assert stored[0]["verified"] is (True if stored[0]["rank"] <= 10 else None)
    assert {"baseline", "refine", "explore"} <= {r["origin"] for r in rows}
    assert rows[0]["cycles"] <= solved["cycles"]
    # Enqueued again, the same schedule is found, not added twice.
    again, _ = run_ok(
        capsys, ["optimum", *BRACKET, "--enqueue", "exact", "--out", "o.json", "--force"]
    )
    assert "already in study 'exact' as trial 0" in again


@needs_ortools
def test_into_an_existing_study_of_another_sampler(capsys, in_tmp: Path) -> None:
    tune = ["tune", *PROVEN[:4], "--study", "flat", "--sampler", "tpe", "--seed", "3"]
    run_ok(capsys, [*tune, "--trials", "4"])
    before = len(leaderboard(capsys, "flat"))
    out, _ = run_ok(capsys, ["optimum", *PROVEN, "--enqueue", "flat"])
    assert "put into study 'flat'" in out
    rows = leaderboard(capsys, "flat")
    assert len(rows) == before + 1 and any(r["family"] == "stored" for r in rows)
    run_ok(capsys, [*tune, "--trials", "4"])  # the study's own sampler and seed still resume it


@needs_ortools
def test_a_missing_program_is_not_verified(capsys, in_tmp: Path) -> None:
    run_ok(capsys, ["optimum", *PROVEN, "--enqueue", "lost"])
    for path in (in_tmp / "results" / "lost" / "programs").iterdir():
        path.unlink()
    (in_tmp / "results" / "lost" / "leaderboard.parquet").unlink()
    capsys.readouterr()
    (row,) = leaderboard(capsys, "lost")
    assert row["verified"] is False and "is missing" in row["verification_detail"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--shape", "128x128x128"], "4096 tile products: the exact model takes at most 512"),
        (["--shape", "16x16x16", "--time-limit", "0"], "--time-limit: must be a positive number"),
        (["--shape", "16x16x16", "--time-limit", "-5"], "--time-limit: must be a positive number"),
        (["--shape", "16x16x16", "--work-limit", "nan"], "--work-limit: must be a positive number"),
        (["--shape", "16x16x16", "--proof-limit", "0"], "--proof-limit: must be a positive number"),
        (["--shape", "16x16x16", "--search-nodes", "-1"], "--search-nodes: must not be negative"),
        (["--shape", "16x16x16", "--slots", "2"], "2 slots is too small for any schedule"),
        (["--shape", "16x16x16", "--machine", "foo=1"], "unknown machine parameter 'foo'"),
        (["--shape", "16x16x16", "--storage", "x.db"], "give --enqueue STUDY"),
        (["--shape", "16x16x16", "--warm-start"], "give --enqueue STUDY"),
        (["--shape", "16x16x16", "--enqueue", "a/b"], "--enqueue: study name 'a/b' is a path"),
        (["--shape", "16x16"], "malformed shape"),
    ],
)
def test_bad_input_is_one_line(capsys, argv: list[str], expected: str) -> None:
    assert expected in run_error(capsys, ["optimum", *argv])
    assert not Path("results").exists()


@needs_ortools
def test_a_study_of_another_product_is_refused(capsys, in_tmp: Path) -> None:
    run_ok(capsys, ["optimum", *PROVEN, "--enqueue", "s8"])
    for other in (["--shape", "16x16x24", "--slots", "8"], ["--shape", "16x16x16", "--slots", "6"]):
        line = run_error(capsys, ["optimum", *other, "--enqueue", "s8", "--force"])
        assert "--enqueue: study 's8' tunes 16x16x16 on slots=8" in line
        assert "choose another study" in line
    assert len(list((in_tmp / "results" / "optimum").iterdir())) == 1


def test_without_or_tools_it_says_which_extra(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ortools", None)  # import ortools now fails
    monkeypatch.setitem(sys.modules, "ortools.sat.python.cp_model", None)
    line = run_error(capsys, ["optimum", "--shape", "16x16x16"])
    assert "needs OR-Tools: pip install 'autotune[exact]'" in line


@needs_ortools
def test_a_stored_program_is_no_starting_point_elsewhere(capsys, in_tmp: Path) -> None:
    run_ok(capsys, ["optimum", *PROVEN, "--enqueue", "donor"])
    run_ok(capsys, ["export", "donor", "--out", "stored.json"])
    tune = ["tune", "--shape", "16x16x16", "--slots", "8", "--study", "other", "--trials", "3"]
    assert main([*tune, "--enqueue", "stored.json"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "family 'stored' is not searched here" in err
    # A nearby study's transfer takes the donor's searched schedules, never its stored program.
    out, _ = run_ok(
        capsys, ["tune", "--shape", "16x16x24", "--slots", "8", "--transfer"] + ["--trials", "3"]
    )
    assert "stored" not in out


@needs_ortools
def test_a_warm_start_is_never_slower_than_the_study(capsys, in_tmp: Path) -> None:
    tune = ["tune", "--shape", "16x16x24", "--slots", "6", "--study", "warm", "--trials", "30"]
    run_ok(capsys, tune)
    best = leaderboard(capsys, "warm")[0]
    out, err = run_ok(capsys, ["optimum", *BRACKET, "--enqueue", "warm", "--warm-start", "--json"])
    data = json.loads(out)
    assert f"from rank 1 of study 'warm', {best['family']}" in err
    assert data["start_cycles"] == best["cycles"] and data["cycles"] <= best["cycles"]
    assert data["start"].startswith("rank 1 of study 'warm'") and data["enqueued"]["verified"]
    run_ok(capsys, [*tune[:-1], "5"])


def test_a_scratchpad_too_large_to_verify_is_refused_before_solving(capsys) -> None:
    line = run_error(capsys, ["optimum", "--shape", "64x64x64", "--slots", "1000000000"])
    assert "1000000000 slots" in line and "--max-memory" in line
    assert not Path("results").exists()
