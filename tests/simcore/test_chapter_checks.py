"""The chapter's checker (tests/simcore/checks.py) passes on our simulator, check by check."""
from __future__ import annotations

from types import ModuleType

import pytest

import simcore


@pytest.fixture(scope="module")
def report(chapter_checks: ModuleType) -> dict[str, bool]:
    return chapter_checks.run_chapter_checks(simcore)


def test_every_check_ran(report: dict[str, bool], chapter_checks: ModuleType) -> None:
    assert tuple(sorted(report)) == tuple(sorted(chapter_checks.ALL_CHECKS))


@pytest.mark.parametrize("name", [
    "results", "traffic", "hand_timed_84", "dma_bound_4x4", "bounds", "reuse_fewer_tiles",
    "double_buffering_helps", "model_within_12pct", "hazards",
    "replay_detects_planted", "hazard_programs", "vector_program",
])
def test_check_passes(report: dict[str, bool], name: str) -> None:
    assert report[name], report.details.get(name)  # type: ignore[attr-defined]


def test_seventy_combinations(chapter_checks: ModuleType) -> None:
    # The chapter's count: 7 shapes x 5 schedules x 2 bufferings.
    assert len(chapter_checks.CHAPTER_SHAPES) * len(chapter_checks.CHAPTER_SCHEDULES) * 2 == 70


def test_a_fresh_unmutated_copy_passes_too(chapter_checks: ModuleType) -> None:
    # The mutation tests run on copies; an unmutated copy must behave exactly like the package.
    copy = chapter_checks.load_simcore_copy()
    assert copy is not simcore and copy.simulate is not simcore.ga1.simulate
    report = chapter_checks.run_chapter_checks(copy)
    assert all(report.values()), report.summary()


def test_the_compiled_engine_passes_every_check(chapter_checks: ModuleType) -> None:
    # The tuner's implementation: the engine's simulator, replay and generators, and every
    # schedule of the chapter's set timed and verified streamed, on the chapter's full shape set.
    import simcore.ga1.engine  # noqa: F401 - makes simcore.ga1.engine an attribute

    report = chapter_checks.run_chapter_checks(chapter_checks.engine_namespace(simcore))
    assert tuple(sorted(report)) == tuple(sorted(chapter_checks.ALL_CHECKS + chapter_checks.ENGINE_CHECKS))
    assert all(report.values()), report.summary()
