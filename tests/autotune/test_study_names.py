"""How a workload's studies are named, its GEMMs counted and printed, and its file found.

Automatic names (a run's, each GEMM's study and folder) are always valid names: a long one is cut
and ends in a digest of the whole, so distinct inputs keep distinct names and a rerun resumes its
studies; a name the user gives is checked strictly. `gemms` counts entries and distinct shapes;
weights print exactly, and table columns never run together. A folder is not a workload file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_error

from autotune.cli.main import main
from autotune.errors import PlanError
from autotune.run.resolve import plan_of
from autotune.storage.names import (
    NAME_MAX_BYTES,
    automatic_name,
    member_name,
    member_prefix,
    name_problem,
)

STEM = "w" * 120
LONG = "g" * 128  # a TOML GEMM name may be 128 characters
TWIN = "g" * 127 + "h"  # the same first 127 characters


def _toml(*gemms: tuple[str, str, int]) -> str:
    return "\n".join(
        f'[[gemm]]\nname = "{name}"\nshape = "{shape}"\nweight = {weight}\n'
        for name, shape, weight in gemms
    )


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _size(name: str) -> int:
    return len(name.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(
    "text", ["workload-short-s64-0123abcd", "w" * 300, "é" * 200, "x" * 255, "a b" * 100]
)
def test_an_automatic_name_fits_and_is_the_same_every_time(text: str) -> None:
    name = automatic_name(text)
    assert name == automatic_name(text) and _size(name) <= NAME_MAX_BYTES
    if _size(text) <= NAME_MAX_BYTES:
        assert name == text  # a name that fits is kept: earlier studies resume under it
    assert name_problem(name) is None


@pytest.mark.parametrize("text", ["a\nb" * 100, "." + "x" * 300, "a/b" * 100, "\udc80" * 90])
def test_a_text_that_is_no_name_is_left_to_be_refused(text: str) -> None:
    assert automatic_name(text) == text and name_problem(text) is not None


def test_automatic_names_keep_distinct_texts_distinct() -> None:
    texts = ["w" * 300, "w" * 299 + "v", "w" * 301, "é" * 200, "é" * 199 + "e"]
    assert len({automatic_name(t) for t in texts}) == len(texts)


@pytest.mark.parametrize("run", ["r", "workload-x-s64-0123abcd", "r" * 200, "r" * 246, "é" * 127])
def test_member_names_are_valid_distinct_and_start_with_the_prefix(run: str) -> None:
    assert name_problem(run) is None
    names = [member_name(run, part) for part in (LONG, TWIN, "a", "a.b-c")]
    assert len(set(names)) == len(names)
    for name in names:
        assert name_problem(name) is None and _size(name) <= NAME_MAX_BYTES
        assert name.startswith(member_prefix(run))
    if _size(run) + 1 + len("a") <= NAME_MAX_BYTES:
        assert member_name(run, "a") == f"{run}-a"  # a name that fits is unchanged


def test_a_long_workload_is_tuned_resumed_and_read_back(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    (in_tmp / f"{STEM}.toml").write_text(_toml((LONG, "8x8x8", 1), (TWIN, "16x8x8", 2)))
    argv = ["--workload", f"{STEM}.toml", "--trials", "3", "--slots", "16", "--space", "chapter"]
    assert main(argv) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    folders = sorted(p.name for p in (in_tmp / "results").iterdir())
    assert len(folders) == 3  # the run's summary and two GEMM studies
    assert all(name_problem(f) is None for f in folders)
    assert all(f.startswith("workload-" + STEM) for f in folders)
    assert err.count("tuning ") == 2
    assert main(argv) == 0  # the same names: both studies are found and reused
    assert capsys.readouterr().err.count("reusing ") == 2
    run = min(folders, key=len)
    (in_tmp / "results" / run / "workload.parquet").unlink()
    assert main(["leaderboard", run]) == 0  # rebuilt from the GEMM studies, found by name
    captured = capsys.readouterr()
    assert "rebuilt" in captured.err + captured.out


def test_a_given_study_name_is_checked_strictly(capsys: pytest.CaptureFixture[str]) -> None:
    (Path.cwd() / "w.toml").write_text(_toml(("a", "8x8x8", 1)))
    line = run_error(capsys, ["--workload", "w.toml", "--study", "s" * 256, "--trials", "2"])
    assert "longer than 255 bytes" in line


@pytest.mark.parametrize("oracle", ["ga1", "systolic"])
def test_the_plan_names_every_study_validly(oracle: str) -> None:
    (Path.cwd() / f"{'é' * 120}.toml").write_text(_toml((LONG, "8x8x8", 1), (TWIN, "8x8x16", 1)))
    plan = plan_of(workload=f"{'é' * 120}.toml", oracle=oracle)
    run = plan.run_name(None)
    names = [plan.study_name(run, g) for g in plan.workload.gemms]
    assert all(name_problem(n) is None for n in [run, *names]) and len(set(names)) == 2
    assert run == plan_of(workload=f"{'é' * 120}.toml", oracle=oracle).run_name(None)


def test_gemms_counts_entries_and_distinct_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    Path("two.csv").write_text("name,shape,weight\nq,1x2x3,1\nr,1x2x3,1\n")
    assert main(["gemms", "two.csv"]) == 0
    assert "total: 2 entries (1 distinct shape), 2 GEMMs" in capsys.readouterr().out
    Path("one.csv").write_text("name,shape,weight\nq,1x2x3,1\n")
    assert main(["gemms", "one.csv"]) == 0
    assert "total: 1 distinct shape, 1 GEMMs" in capsys.readouterr().out


def test_weights_print_exactly_in_gemms(capsys: pytest.CaptureFixture[str]) -> None:
    Path("w.csv").write_text("name,shape,weight\nes_hadamard,1x1x1,1048576\nhalf,2x2x2,0.5\n")
    assert main(["gemms", "w.csv"]) == 0
    out = capsys.readouterr().out
    assert "1.04858e+06" not in out
    row = next(line for line in out.splitlines() if line.startswith("es_hadamard"))
    assert row.split()[1:6] == ["1", "1", "1", "1,048,576", "1,048,576"]
    assert "total: 2 distinct shapes, 1,048,576.5 GEMMs" in out
    assert main(["gemms", "w.csv", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gemms"][0]["weight"] == 1048576


def test_weights_print_exactly_in_the_tune_table(capsys: pytest.CaptureFixture[str]) -> None:
    Path("had.toml").write_text(_toml(("es_hadamard", "1x1x1", 1048576), ("b", "8x8x8", 3)))
    argv = ["--workload", "had.toml", "--trials", "2", "--slots", "16", "--space", "chapter"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "1.04858e+06" not in captured.out + captured.err
    row = next(line for line in captured.out.splitlines() if line.startswith("es_hadamard"))
    assert row.split()[1:3] == ["1x1x1", "1,048,576"]  # separate columns, the weight exact
    assert "(1,048,579 runs)" in captured.out
    assert "es_hadamard (1x1x1 x1,048,576)" in captured.err


def test_a_folder_named_like_a_bundled_network_is_that_network(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    (in_tmp / "resnet50").mkdir()
    assert main(["gemms", "resnet50"]) == 0
    assert "total: 21 distinct shapes" in capsys.readouterr().out
    assert len(plan_of(workload="resnet50").workload.gemms) == 21


@pytest.mark.parametrize(
    "argv",
    [["gemms", "other"], ["gemms", "./resnet50"], ["--workload", "other", "--trials", "2"]],
)
def test_any_other_folder_is_not_a_workload_file(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, argv: list[str]
) -> None:
    (in_tmp / "other").mkdir()
    (in_tmp / "resnet50").mkdir()
    line = run_error(capsys, argv)
    assert "is a directory, not a workload file" in line
    with pytest.raises(PlanError, match="is a directory, not a workload file"):
        plan_of(workload="other")


def test_two_workloads_of_one_file_name_are_told_apart_by_a_given_name(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    for folder, shape in (("a", "16x16x16"), ("b", "32x16x16")):
        (in_tmp / folder).mkdir()
        (in_tmp / folder / "model.toml").write_text(_toml(("x", shape, 1)))
    assert main(["--workload", "a/model.toml", "--trials", "3"]) == 0
    line = run_error(capsys, ["--workload", "b/model.toml", "--trials", "3"])
    assert line.startswith("autotune: error: study 'workload-model-") and "now 32x16x16" in line
    assert line.endswith("name another with --study NAME")
    assert main(["--workload", "b/model.toml", "--trials", "3", "--study", "other"]) == 0
