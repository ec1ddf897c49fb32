"""The guided sampler: every proposal fresh, fitting and recorded; deterministic; resumable;
the constant liar; several objectives handed to TPE; transfer from earlier studies; two workers
never evaluating one candidate twice."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import optuna
import pytest
from optuna.trial import TrialState

from autotune.cli.main import main
from autotune.oracles.ga1 import ORACLE as GA1
from autotune.record import Provenance
from autotune.run import optimise as optimising
from autotune.run.objective import Objective
from autotune.run.options import RunOptions
from autotune.run.plan import RunPlan
from autotune.run.seed import seed_study
from autotune.run.study import provenance, settings_for
from autotune.search.guided import GuidedSampler, suggest_from
from autotune.search.objectives import directions
from autotune.search.problem import Problem
from autotune.storage import MEMORY, SharedStudy
from search_spaces.domains import Choice, IntRange, Param
from search_spaces.registry import DEFAULT_SPACES, families
from simcore.ga1.machine import Machine
from simcore.shape import Shape
from tests.helpers.meeting import meeting

SHAPE = Shape(64, 96, 80)
SPACES = DEFAULT_SPACES  # the spaces the studies of run_guided search


def problem(encoding: str = "conditional", slots: int = 24, shape: Shape = SHAPE) -> Problem:
    return Problem(shape, Machine(slots=slots), families(list(SPACES)), GA1, encoding=encoding)


# --- the guided sampler --------------------------------------------------------------------


def run_guided(
    trials: int, seed: int = 0, study: optuna.Study | None = None, slots: int = 24
) -> optuna.Study:
    spec = RunPlan.of_shape(SHAPE, Machine(slots=slots))
    options = RunOptions(trials=trials, seed=seed, storage=MEMORY, write=False)
    ((_, search),) = spec.searches()
    shared = SharedStudy(MEMORY, "g")
    if study is None:
        study = shared.open(GuidedSampler(search, seed), directions(spec.objective_measures()))
        seed_study(shared, study, search)
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
    study = shared.open(GuidedSampler(search, seed), directions(spec.objective_measures()))
    seed_study(shared, study, search)
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
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stored: Callable[[Path, str], optuna.Study],
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
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stored: Callable[[Path, str], optuna.Study],
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
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stored: Callable[[Path, str], optuna.Study],
) -> None:
    """Each worker proposes under the study lock and counts the other's RUNNING trial as taken."""
    monkeypatch.chdir(tmp_path)
    # The workers meet before their first evaluation, so both run trials however loaded the
    # machine is: each proposes while the other holds a running trial.
    run_workers = optimising.run_workers
    monkeypatch.setattr(
        optimising,
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
