"""The chapter's checker (tests/helpers/ga1_chapter_checker.py) passes on our simulator, check
by check."""

from __future__ import annotations

import pytest

import simcore
from tests.helpers.ga1_chapter_checker import (
    ALL_CHECKS,
    CHAPTER_SCHEDULES,
    CHAPTER_SHAPES,
    ENGINE_CHECKS,
    CheckReport,
    run_chapter_checks,
)
from tests.helpers.simcore_copies import engine_namespace, load_simcore_copy


@pytest.fixture(scope="module")
def report() -> CheckReport:
    return run_chapter_checks(simcore)


def test_every_check_ran(report: CheckReport) -> None:
    assert tuple(sorted(report)) == tuple(sorted(ALL_CHECKS))


@pytest.mark.parametrize(
    "name",
    [
        "results",
        "traffic",
        "hand_timed_84",
        "dma_bound_4x4",
        "bounds",
        "reuse_fewer_tiles",
        "double_buffering_helps",
        "model_within_12pct",
        "hazards",
        "replay_detects_planted",
        "hazard_programs",
        "vector_program",
    ],
)
def test_check_passes(report: CheckReport, name: str) -> None:
    assert report[name], report.details.get(name)


def test_seventy_combinations() -> None:
    # The chapter's count: 7 shapes x 5 schedules x 2 bufferings.
    assert len(CHAPTER_SHAPES) * len(CHAPTER_SCHEDULES) * 2 == 70


def test_a_fresh_unmutated_copy_passes_too() -> None:
    # The mutation tests run on copies; an unmutated copy must behave exactly like the package.
    copy = load_simcore_copy()
    assert copy is not simcore and copy.simulate is not simcore.ga1.simulate
    report = run_chapter_checks(copy)
    assert all(report.values()), report.summary()


def test_the_compiled_engine_passes_every_check() -> None:
    # The tuner's implementation: the engine's simulator, replay and generators, and every
    # schedule of the chapter's set timed and verified streamed, on the chapter's full shape set.
    import simcore.ga1.engine  # noqa: F401 - makes simcore.ga1.engine an attribute

    report = run_chapter_checks(engine_namespace(simcore))
    assert tuple(sorted(report)) == tuple(sorted(ALL_CHECKS + ENGINE_CHECKS))
    assert all(report.values()), report.summary()
