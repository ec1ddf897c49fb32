"""The Python API: its documented examples run, it makes the plan the command line makes from
the same settings, its results are the files it wrote, and its errors name the setting."""

from __future__ import annotations

import doctest
from pathlib import Path

import pandas as pd
import pytest

import autotune
import autotune.api
from autotune import oracles
from autotune.cli.commands.tune import build_plan
from autotune.cli.main import build_parser
from autotune.errors import AutotuneError, PlanError
from autotune.record import TrialRecord
from autotune.run.resolve import DEFAULT_TRIALS, SHORT_TRIALS, machine_of, options_of, plan_of
from autotune.storage import finished_count

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_documented_examples_run() -> None:
    failures, tried = doctest.testmod(autotune.api, optionflags=doctest.ELLIPSIS)
    assert tried >= 5 and failures == 0


def test_the_package_exports_the_api() -> None:
    assert set(autotune.api.__all__) <= set(autotune.__all__)
    for name in autotune.api.__all__:
        assert getattr(autotune, name) is getattr(autotune.api, name)
    with pytest.raises(AttributeError):
        autotune.no_such_name  # noqa: B018


def test_the_leaderboard_is_the_file_written_and_best_is_its_first_row(in_tmp: Path) -> None:
    result = autotune.tune("64x64x64", trials=12, results=in_tmp / "r")
    written = autotune.load(result.paths[0])
    pd.testing.assert_frame_equal(result.leaderboard, written)
    first = result.leaderboard.iloc[0]
    assert result.best is not None and result.best.rank == 1
    assert result.best.cycles == int(first["cycles"]) and result.best.family == first["family"]
    assert result.best.verified is True and result.best.verification == "exact"
    assert isinstance(result.best.record, TrialRecord)
    assert (
        result.best.record.number == result.best.trial
        and result.best.record.cycles == result.best.cycles
    )
    assert result.study.study_name == first["study"]
    assert finished_count(result.study) == 12
    # Read back by study name, by folder, and from the Optuna study itself.
    for source in (result.study.study_name, in_tmp / "r" / result.study.study_name):
        pd.testing.assert_frame_equal(autotune.load(source, results=in_tmp / "r"), written)
    assert autotune.load(result.study)["cycles"].tolist() == written["cycles"].tolist()


def test_a_study_in_memory_is_returned_and_resumes_nothing(in_tmp: Path) -> None:
    result = autotune.tune(
        "64x64x64", trials=5, storage=":memory:", results=in_tmp / "r", verify_top=1
    )
    assert finished_count(result.study) == 5
    assert result.leaderboard["verified"].iloc[0] == True  # noqa: E712


def test_the_command_line_and_the_api_make_one_plan() -> None:
    parser = build_parser()
    argv = [
        "tune",
        "--shape",
        "128x64x32",
        "--slots",
        "16",
        "--machine",
        "dma_setup=8",
        "--space",
        "chapter,general",
        "--objectives",
        "cycles,scratchpad_words",
        "--search-machine",
        "--machine-range",
        "slots=8:32",
    ]
    from_flags = build_plan(parser.parse_args(argv))
    from_keywords = plan_of(
        "128x64x32",
        machine={"slots": 16, "dma_setup": 8},
        spaces=["chapter", "general"],
        objectives=("cycles", "scratchpad_words"),
        search_machine=True,
        machine_range="slots=8:32",
    )
    assert from_flags == from_keywords
    systolic = build_plan(
        parser.parse_args(
            ["tune", "--oracle", "systolic", "--shape", "64x64x64", "--pe-budget", "1024"]
        )
    )
    assert systolic == plan_of("64x64x64", oracle="systolic", pe_budget=1024)
    assert systolic.machine.pe_budget == 1024


def test_default_trials_follow_the_plan() -> None:
    single = plan_of("64x64x64")
    assert options_of(single).trials == DEFAULT_TRIALS
    assert options_of(single, trials=7, results="elsewhere").results == Path("elsewhere")
    workload = plan_of(workload=ROOT / "workloads" / "networks" / "chapter.toml")
    assert not workload.single and options_of(workload).trials == SHORT_TRIALS


@pytest.mark.parametrize(
    ("call", "setting", "text"),
    [
        (lambda: plan_of("12x12"), "shape", "malformed shape"),
        (lambda: plan_of(), "shape", "give a shape"),
        (lambda: plan_of("8x8x8", machine="foo=1"), "machine", "unknown machine parameter 'foo'"),
        (lambda: plan_of("8x8x8", objectives=""), "objectives", "objectives is empty"),
        (lambda: plan_of("8x8x8", spaces=" , "), "spaces", "spaces is empty"),
        (lambda: plan_of("8x8x8", oracle="nosuch"), "oracle", "unknown oracle 'nosuch'"),
        (
            lambda: autotune.tune("8x8x8", trials=0, storage=":memory:"),
            "trials",
            "trials must be at least 1",
        ),
        (
            lambda: autotune.tune("8x8x8", spaces="nosuch", storage=":memory:"),
            "spaces",
            "unknown search space",
        ),
        (
            lambda: autotune.tune("8x8x8", objectives="cycles,area", storage=":memory:"),
            "objectives",
            "area is the same for every schedule on a fixed machine",
        ),
    ],
)
def test_bad_settings_raise_domain_errors_naming_the_setting(call, setting: str, text: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AutotuneError) as caught:
        call()
    assert caught.value.setting == setting and text in str(caught.value)
    assert "--" not in str(caught.value)  # no flag text in the library


def test_an_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unknown setting"):
        autotune.tune("8x8x8", spaec="chapter")
    with pytest.raises(TypeError, match="unknown option"):
        options_of(plan_of("8x8x8"), trails=3)


def test_machine_of_takes_text_mappings_and_machines() -> None:
    ga1 = oracles.get("ga1")
    machine = machine_of(ga1, "slots=16")
    assert machine_of(ga1, {"slots": 16}) == machine == machine_of(ga1, machine)
    assert machine_of(ga1, None, slots=16) == machine
    with pytest.raises(PlanError, match="disagree"):
        machine_of(ga1, "slots=16", slots=32)
    with pytest.raises(PlanError, match="disagree"):
        machine_of(ga1, machine, slots=32)


def test_the_api_page_examples_run() -> None:
    """Every ```pycon block of docs/reference/api.md, run in order in one namespace (in a
    temporary folder: the tuning example writes results/)."""
    import re

    page = ROOT / "docs" / "reference" / "api.md"
    blocks = re.findall(r"```pycon\n(.*?)```", page.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 2
    parser, runner, namespace = doctest.DocTestParser(), doctest.DocTestRunner(), {}
    for index, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, namespace, f"api.md block {index + 1}", str(page), 0))
    assert runner.failures == 0 and runner.tries > 10
