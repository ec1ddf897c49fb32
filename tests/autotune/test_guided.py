"""The guided search: the conditional encoding, neighbourhoods, the guided sampler (every
proposal fresh, fitting and recorded; deterministic; resumable; the constant liar), the
encoding in a study's identity, and transfer from earlier studies."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from optuna.trial import TrialState

from autotune.cli.main import main
from autotune.oracles.ga1 import ORACLE as GA1
from autotune.record import Provenance
from autotune.run import pipeline
from autotune.run.objective import Objective
from autotune.run.pipeline import RunOptions, provenance, seed_study, settings_for
from autotune.run.plan import RunPlan
from autotune.search.guided import GuidedSampler, suggest_from
from autotune.search.objectives import directions
from autotune.search.problem import Candidate, Problem
from autotune.storage import MEMORY, SharedStudy, local_storage, read_study
from search_spaces.domains import Choice, IntRange, Param
from search_spaces.registry import DEFAULT_SPACES, families
from simcore.ga1.machine import Machine
from simcore.shape import Shape
from tests.helpers.meeting import meeting

SHAPE = Shape(64, 96, 80)
SPACES = DEFAULT_SPACES  # the spaces the studies of run_guided search


def problem(encoding: str = "conditional", slots: int = 24, shape: Shape = SHAPE) -> Problem:
    return Problem(shape, Machine(slots=slots), families(list(SPACES)), GA1, encoding=encoding)


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


def stored(root: Path, name: str) -> optuna.Study:
    """A study the command line made under root/results (its default storage)."""
    address = local_storage(root / "results", name)
    study = read_study(address, name) if address else None
    assert study is not None, f"no study {name!r}"
    return study


# --- the encoding --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
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


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_flat_encoding_asks_for_every_parameter(data: st.DataObject) -> None:
    search, asked, candidate = drawn(data, "flat")
    assert asked == ["family", *(p.name for p in search.family(candidate.family).params(SHAPE, 8))]


@settings(max_examples=80, deadline=None)
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
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    legacy = [
        "--shape",
        "32x32x32",
        "--slots",
        "16",
        "--sampler",
        "tpe",
        "--space",
        "chapter,general",
    ]
    assert main([*legacy, "--trials", "22"]) == 0
    capsys.readouterr()
    name = "ga1-32x32x32-s16"  # the name an older tuner gave it
    assert local_storage(tmp_path / "results", name) is not None
    assert main(["--shape", "32x32x32", "--slots", "16", "--study", name, "--trials", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.count("\n") == 0
        and "flat encoding" in err
        and "resume it with --sampler tpe --space chapter,general" in err
    )
    assert main([*legacy, "--trials", "3"]) == 0  # resumed under its old name
    study = stored(tmp_path, name)
    assert len(study.get_trials(states=(TrialState.COMPLETE,))) == 25
    assert "encoding" not in study.user_attrs["identity"]
    # The default run shares the name: it is refused (one line) rather than mixing encodings.
    assert main(["--shape", "32x32x32", "--slots", "16", "--trials", "21"]) == 2
    assert "resume it with" in capsys.readouterr().err
    assert main(["--shape", "32x32x32", "--slots", "16", "--trials", "21", "--study", "new"]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "--shape",
                "32x32x32",
                "--slots",
                "16",
                "--sampler",
                "tpe",
                "--study",
                "new",
                "--trials",
                "1",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "resume it with --sampler guided" in err


# --- neighbourhoods ------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
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


# --- the guided sampler --------------------------------------------------------------------


def run_guided(
    trials: int, seed: int = 0, study: optuna.Study | None = None, slots: int = 24
) -> optuna.Study:
    spec = RunPlan.of_shape(SHAPE, Machine(slots=slots))
    options = RunOptions(trials=trials, seed=seed, storage=MEMORY, write=False)
    ((_, search),) = spec.searches()
    shared = SharedStudy(MEMORY, "g")
    if study is None:
        study = shared.open(GuidedSampler(search, seed), directions(spec.objectives))
        seed_study(shared, study, search, options)
    objective = Objective(search, study, provenance(settings_for(spec, options, "g")), shared)
    shared.optimize(
        study, objective, len(study.get_trials(states=(TrialState.COMPLETE,))) + trials, None, False
    )
    return study


def test_every_proposal_is_fresh_fits_and_says_where_it_came_from() -> None:
    study = run_guided(80)
    search = problem()
    keys = [search.key_of(t.params) for t in study.trials]
    assert len(set(keys)) == len(keys)  # nothing evaluated twice
    assert all(
        t.user_attrs["result"]["feasible"]
        for t in study.trials
        if t.user_attrs.get("source") != "baseline"
    )
    sources = [t.user_attrs["source"] for t in study.trials]
    assert set(sources) <= {"baseline", "refine", "explore", "random"} and "refine" in sources
    best = min(t.value for t in study.trials if t.user_attrs["source"] == "baseline")
    assert min(t.value for t in study.trials) < best  # refinement improved on the seeds


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_small_space_is_refined_to_exhaustion_without_a_repeat(seed: int) -> None:
    """On 16x24x16 (2 x 3 x 2 tiles) moves run into the ends of every range and the
    neighbourhoods run out: every proposal still fits, and none repeats while fresh ones remain."""
    shape = Shape(16, 24, 16)
    spec = RunPlan.of_shape(shape, Machine(slots=12))
    ((_, search),) = spec.searches()
    shared = SharedStudy(MEMORY, "small")
    study = shared.open(GuidedSampler(search, seed), directions(spec.objectives))
    seed_study(shared, study, search, RunOptions(trials=1, seed=seed, storage=MEMORY, write=False))
    shared.optimize(study, Objective(search, study, Provenance(), shared), 150, None, False)
    proposed = [t for t in study.trials if t.user_attrs.get("source") != "baseline"]
    assert proposed and all(t.user_attrs["result"]["feasible"] for t in proposed)
    keys = [search.key_of(t.params) for t in study.trials]
    assert len(set(keys)) == len(keys)


def test_the_same_seed_gives_the_same_study_and_a_resume_carries_on() -> None:
    first, second = run_guided(50, seed=3), run_guided(50, seed=3)
    assert [t.params for t in first.trials] == [t.params for t in second.trials]
    resumed = run_guided(20, seed=3, study=run_guided(30, seed=3))
    search = problem()
    keys = [search.key_of(t.params) for t in resumed.trials]
    assert len(resumed.trials) == 50 and len(set(keys)) == 50
    assert min(t.value for t in resumed.trials) <= min(t.value for t in first.trials[:30])


def test_a_pending_candidate_is_taken_the_constant_liar() -> None:
    """A candidate another worker is running (or that waits in the queue) is never proposed."""
    study = run_guided(40)
    sampler = study.sampler
    assert isinstance(sampler, GuidedSampler)
    search = problem()
    proposal, _ = sampler.propose(len(study.trials))
    study.enqueue_trial(proposal.params())
    sampler._history.update(study.get_trials(deepcopy=False), len(study.trials) + 1)
    again, _ = sampler.propose(len(study.trials) + 1)
    assert search.key_of(again.params()) != search.key_of(proposal.params())


def test_several_objectives_fall_back_to_tpe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            [
                "--shape",
                "32x32x32",
                "--search-machine",
                "--objectives",
                "cycles,scratchpad_words",
                "--trials",
                "24",
                "--study",
                "mo",
            ]
        )
        == 0
    )
    study = stored(tmp_path, "mo")
    assert not any(t.user_attrs.get("source") in ("refine", "explore") for t in study.trials)


def test_suggest_from_answers_the_proposal_and_draws_the_rest() -> None:
    import random

    rng = random.Random(0)
    ask = suggest_from({"a": 3, "b": "zz"}, rng)
    assert ask(Param("a", IntRange(0, 5))) == 3
    assert ask(Param("b", Choice(("x", "y")))) in ("x", "y")  # outside the domain: drawn
    assert all(1 <= ask(Param("c", IntRange(1, 64, log=True))) <= 64 for _ in range(50))  # type: ignore[operator]


# --- transfer ------------------------------------------------------------------------------


def test_transfer_seeds_from_a_nearby_study_and_records_where_from(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--shape", "64x64x64", "--slots", "24", "--trials", "40", "--study", "donor"]) == 0
    assert (
        main(["--shape", "64x64x64", "--oracle", "systolic", "--trials", "3", "--study", "other"])
        == 0
    )
    assert (
        main(
            [
                "--shape",
                "64x80x64",
                "--slots",
                "24",
                "--trials",
                "30",
                "--study",
                "new",
                "--transfer",
            ]
        )
        == 0
    )
    capsys.readouterr()
    study = stored(tmp_path, "new")
    moved = [t for t in study.trials if t.user_attrs.get("source") == "transfer"]
    assert moved and all(t.user_attrs["transfer"]["study"] == "donor" for t in moved)
    origin = moved[0].user_attrs["transfer"]
    assert (
        origin["shape"] == "64x64x64"
        and origin["machine"] == Machine(slots=24).key()
        and origin["trial"] >= 0
    )
    donor = stored(tmp_path, "donor")
    assert origin["cycles"] == min(t.value for t in donor.trials)  # the donor's best comes first
    assert moved[0].number < min(
        t.number for t in study.trials if t.user_attrs.get("source") == "baseline"
    )
    # Without --transfer nothing is taken from other studies.
    assert main(["--shape", "64x80x64", "--slots", "24", "--trials", "20", "--study", "plain"]) == 0
    plain = stored(tmp_path, "plain")
    assert not any(t.user_attrs.get("source") == "transfer" for t in plain.trials)


def test_adopt_keeps_a_whole_dimension_whole_and_refuses_what_does_not_fit() -> None:
    small, large = Shape(64, 64, 64), Shape(128, 64, 96)
    here = Problem(large, Machine(slots=128), families(["chapter"]), GA1)
    adopted = here.adopt(
        {"family": "blocked", "bi": 8, "bj": 3, "buffers": 2, "order": "row"},
        small,
        Machine(slots=64),
    )
    assert adopted is not None and adopted.point["bi"] == 16 and adopted.point["bj"] == 3
    tight = Problem(large, Machine(slots=8), families(["chapter"]), GA1)
    assert (
        tight.adopt(
            {"family": "blocked", "bi": 4, "bj": 4, "buffers": 2, "order": "row"},
            small,
            Machine(slots=64),
        )
        is None
    )
    assert (
        here.adopt({"family": "strips", "reserve": 2}, small, Machine(slots=64)) is None
    )  # not searched here


def test_two_workers_never_evaluate_one_candidate_twice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker proposes under the study lock and counts the other's RUNNING trial as taken."""
    monkeypatch.chdir(tmp_path)
    # The workers meet before their first evaluation, so both run trials however loaded the
    # machine is: each proposes while the other holds a running trial.
    run_workers = pipeline.run_workers
    monkeypatch.setattr(
        pipeline,
        "run_workers",
        lambda study_settings, search, *rest: run_workers(
            study_settings, meeting(search, tmp_path / "meeting"), *rest
        ),
    )
    assert (
        main(
            [
                "--shape",
                "64x96x80",
                "--slots",
                "24",
                "--workers",
                "2",
                "--trials",
                "60",
                "--study",
                "pair",
            ]
        )
        == 0
    )
    study = stored(tmp_path, "pair")
    search = problem()
    keys = [search.key_of(t.params) for t in study.trials if t.state == TrialState.COMPLETE]
    assert len(keys) == 60 and len(set(keys)) == 60
    assert not any("duplicate_of" in t.user_attrs["result"] for t in study.trials)
    assert len({t.user_attrs["run"]["worker"] for t in study.trials}) == 2 and "refine" in {
        t.user_attrs["source"] for t in study.trials
    }
