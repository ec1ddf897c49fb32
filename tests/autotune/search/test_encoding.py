"""The encodings of a search: the conditional one suggests only what matters, the flat one asks
for every parameter, an unused parameter takes its canonical value, a study keeps the encoding
it was made with; and the neighbourhoods the guided sampler moves in."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import optuna
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from optuna.trial import TrialState

from autotune.cli.main import main
from autotune.oracles.ga1 import ORACLE as GA1
from autotune.search.problem import Candidate, Problem
from autotune.storage import local_storage
from search_spaces.domains import Choice, IntRange, Param
from search_spaces.registry import DEFAULT_SPACES, families
from simcore.ga1.machine import Machine
from simcore.shape import Shape
from tests.helpers.examples import examples

SHAPE = Shape(64, 96, 80)


def problem(encoding: str = "conditional", slots: int = 24, shape: Shape = SHAPE) -> Problem:
    return Problem(
        shape, Machine(slots=slots), families(list(DEFAULT_SPACES)), GA1, encoding=encoding
    )


def recorder(draws: st.DataObject) -> tuple[list[str], object]:
    asked: list[str] = []

    def suggest(param: Param) -> object:
        asked.append(param.name)
        domain = param.domain
        return draws.draw(
            st.sampled_from(domain.options)
            if isinstance(domain, Choice)
            else st.integers(domain.low, domain.high)
        )

    return asked, suggest


def drawn(
    data: st.DataObject, encoding: str = "conditional"
) -> tuple[Problem, list[str], Candidate]:
    """A candidate sampled with hypothesis's draws, its search, and the parameters it asked for."""
    search = problem(encoding)
    asked, ask = recorder(data)
    return search, asked, search.sample(ask)  # type: ignore[arg-type]


# --- the encoding --------------------------------------------------------------------------


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_the_conditional_encoding_suggests_only_what_matters(data: st.DataObject) -> None:
    search, asked, candidate = drawn(data)
    point = candidate.point
    if candidate.family.startswith("general"):  # general or general_delayed
        assert ("ramp" in asked) == (point["structure"] == "rotate")
        assert all(
            (name in asked) == (point["structure"] == "blocks")
            for name in ("tail", "k_direction", "inner")
        )
        assert asked.index("structure") < min(
            asked.index(n) for n in asked if n not in ("family", "structure")
        )
    if candidate.family.startswith("strips"):
        assert ("protect" in asked) == (point["lookahead"] != 0)
    # Every parameter is in the candidate, and the recorded ones rebuild it under either encoding.
    recorded = {name: candidate.params()[name] for name in asked}
    assert search.key_of(recorded) == candidate.key() == problem("flat").key_of(candidate.params())


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_the_flat_encoding_asks_for_every_parameter(data: st.DataObject) -> None:
    search, asked, candidate = drawn(data, "flat")
    assert asked == ["family", *(p.name for p in search.family(candidate.family).params(SHAPE, 8))]


@settings(max_examples=examples(80), deadline=None)
@given(st.data())
def test_a_parameter_that_does_not_matter_takes_the_value_canonical_gives_it(
    data: st.DataObject,
) -> None:
    """The fixed value of an unused parameter and the family's canonical form agree, so the two
    encodings key every schedule alike."""
    search, _, candidate = drawn(data, "flat")
    for param in search.family(candidate.family).params(SHAPE, 8):
        if not param.used(candidate.point):
            assert candidate.point[param.name] == param.unless.fixed  # type: ignore[union-attr]


def test_a_study_of_the_flat_encoding_resumes_with_tpe_and_is_refused_otherwise(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stored: Callable[[Path, str], optuna.Study],
) -> None:
    monkeypatch.chdir(tmp_path)
    here = ["--shape", "32x32x32", "--slots", "16"]
    legacy = [*here, "--sampler", "tpe", "--space", "chapter,general"]
    assert main([*legacy, "--trials", "22"]) == 0
    capsys.readouterr()
    name = "ga1-32x32x32-s16"  # the name an older tuner gave it
    assert local_storage(tmp_path / "results", name) is not None
    assert main([*here, "--study", name, "--trials", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.count("\n") == 0
        and "flat encoding" in err
        and "resume it with --sampler tpe --space chapter,general" in err
    )
    assert main([*legacy, "--more-trials", "3"]) == 0  # resumed under its old name
    study = stored(tmp_path, name)
    assert len(study.get_trials(states=(TrialState.COMPLETE,))) == 25
    assert "encoding" not in study.user_attrs["identity"]
    # The default run shares the name: it is refused (one line) rather than mixing encodings.
    assert main([*here, "--trials", "21"]) == 2
    assert "resume it with" in capsys.readouterr().err
    assert main([*here, "--trials", "21", "--study", "new"]) == 0
    capsys.readouterr()
    assert main([*here, "--sampler", "tpe", "--study", "new", "--trials", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "resume it with --sampler guided" in err


# --- neighbourhoods ------------------------------------------------------------------------


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_neighbours_are_distinct_canonical_points_of_the_space(data: st.DataObject) -> None:
    search, _, centre = drawn(data)
    found = search.neighbours(centre)
    keys = [c.key() for _, c in found]
    assert len(set(keys)) == len(keys) and centre.key() not in keys
    for scale, moved in found:
        assert scale >= 1 and search.why_not(moved) is None and search.canonical(moved) == moved
        assert moved.family == centre.family


def test_nearby_values_double_their_reach() -> None:
    """Reach doubles; the distance class is relative to the range: class 1 covers an eighth of it
    (at least 2 steps), each class beyond doubles that."""
    assert IntRange(0, 64).nearby(32)[:4] == [(1, 31), (1, 33), (1, 30), (1, 34)]
    assert [scale for scale, v in IntRange(0, 64).nearby(32) if v > 32] == [1, 1, 1, 1, 2, 3]
    assert IntRange(0, 8).nearby(0) == [(1, 1), (1, 2), (2, 4), (3, 8)]
    assert [v for _, v in IntRange(0, 64).nearby(0)] == [1, 2, 4, 8, 16, 32, 64]
    assert IntRange(1, 64, log=True).nearby(8)[:2] == [(1, 4), (1, 16)]
    assert Choice(("a", "b", "c")).nearby("b") == [(1, "a"), (1, "c")]
