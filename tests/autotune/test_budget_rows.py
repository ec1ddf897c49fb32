"""A candidate over a budget keeps what was computed for it, in its trial record and its
leaderboard row: the area graded before it would run, or everything a run over the energy
budget measured. The row stays infeasible: ranked after every feasible one, off the front, and
printed as over its limit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd
import pytest

from autotune import oracles
from autotune.oracles.measures import CYCLES, ENERGY
from autotune.record import RESULT, Evaluation
from autotune.results import leaderboard as board
from autotune.results import tables
from autotune.search.codesign import Codesign
from autotune.search.problem import Candidate, Problem
from search_spaces.machine import MachineSpace
from simcore.ga1.machine import Machine
from simcore.shape import Shape
from workloads import Gemm, Workload

SHAPE = Shape(32, 24, 40)
BASE = Machine(slots=16)
OBJECTIVES = ("cycles", "energy")
MEASURES = (CYCLES, ENERGY)
SMALL = Candidate(
    "blocked",
    {"bi": 1, "bj": 1, "buffers": 1, "order": "row"},
    {"slots": 8, "dma_setup": 16, "dma_words_per_cycle": 8, "mxu_cycles": 8},
)
BIG = Candidate("blocked", SMALL.point, {**SMALL.machine_point, "dma_words_per_cycle": 64})


@dataclass
class Trial:
    """What the leaderboard reads of a completed Optuna trial."""

    number: int
    params: dict[str, Any]
    user_attrs: dict[str, Any]
    values: tuple[float, ...] | None = None
    datetime_complete: None = None


class Study:
    def __init__(self, trials: list[Trial]) -> None:
        self.trials = trials

    def get_trials(self, deepcopy: bool = False, states: Any = None) -> list[Trial]:
        return self.trials


def board_of(search: Problem | Codesign, evaluations: Sequence[Evaluation]) -> pd.DataFrame:
    """The leaderboard of a study that recorded `evaluations`, one trial each."""
    trials = [Trial(n, dict(e.point), {RESULT: e.to_attr()}) for n, e in enumerate(evaluations)]
    ranked = board.records(Study(trials), search)  # type: ignore[arg-type]
    info = board.RunInfo("s", "guided", 0, SHAPE, BASE, oracles.get("ga1"), search.objectives)
    return board.to_frame(board.rows_of(ranked, info, search.families))


def problem(area: float | None = None, energy: float | None = None) -> Problem:
    oracle = oracles.get("ga1")
    space = MachineSpace.create(BASE, None, 128 * 64)
    families = oracle.families(("chapter",), BASE)
    return Problem(SHAPE, BASE, families, oracle, space, OBJECTIVES, None, "flat", area, energy)


def test_a_candidate_over_the_area_budget_keeps_its_area() -> None:
    search = problem(area=0.05)
    area = float(search.oracle.machine_area_mm2(search.machine_for(BIG)))  # type: ignore[arg-type]
    assert area > 0.05 and search.fits(SMALL)
    over = search.evaluate(BIG)
    assert not over.feasible and over.timing is None and over.cycles is None  # never simulated
    assert over.metrics["area_mm2"] == pytest.approx(area)
    frame = board_of(search, [over, search.evaluate(SMALL)])
    assert frame["feasible"].tolist() == [True, False] and frame["pareto"].tolist() == [True, False]
    row = frame.iloc[1]
    assert row["area_mm2"] == pytest.approx(area) and pd.isna(row["cycles"])
    assert pd.isna(row["timing"]) and '"area_over"' in row["constraints_json"]
    assert "infeasible (over the area limit by" in tables.format_rows(frame, 10, MEASURES)


def test_a_candidate_over_the_energy_budget_keeps_what_its_run_measured() -> None:
    free = problem()
    energies = {
        float(found.metrics["energy_pj"]): candidate  # type: ignore[arg-type]
        for candidate in free.seeds()
        if (found := free.evaluate(candidate)).feasible
    }
    low, high = min(energies), max(energies)
    search = problem(energy=(low + high) / 2)
    within, over = search.evaluate(energies[low]), search.evaluate(energies[high])
    assert within.feasible and not over.feasible and over.timing in ("full", "periodic")
    measured = free.evaluate(energies[high]).metrics
    assert {k: over.metrics[k] for k in measured} == measured  # all of it, nothing lost
    frame = board_of(search, [over, within])
    assert frame["feasible"].tolist() == [True, False] and not frame["pareto"].iloc[1]
    row = frame.iloc[1]
    assert row["energy_pj"] == pytest.approx(high) and row["cycles"] == measured["cycles"]
    assert row["area_mm2"] == pytest.approx(float(measured["area_mm2"]))  # type: ignore[arg-type]
    assert row["verification"] == "none" and pd.isna(row["verified"])
    printed = tables.format_rows(frame, 10, MEASURES).splitlines()
    assert printed[2].startswith("   2  infeasible (over the energy limit by")


def codesign(area: float | None = None, energy: float | None = None) -> Codesign:
    oracle = oracles.get("ga1")
    workload = Workload("w", (Gemm("a", Shape(16, 32, 24), 2.0), Gemm("b", Shape(8, 8, 40), 1.0)))
    space = MachineSpace.create(BASE, None, None)
    families = oracle.families(("chapter",), BASE)
    return Codesign(workload, BASE, families, space, OBJECTIVES, oracle, None, None, area, energy)


def test_a_machine_over_the_area_budget_keeps_its_area_on_every_row() -> None:
    seed = codesign().seeds()[0]
    wide = Candidate("", {}, {**seed.machine_point, "dma_words_per_cycle": 64})
    base_area = float(oracles.get("ga1").machine_area_mm2(BASE))  # type: ignore[arg-type]
    search = codesign(area=base_area * 1.01)
    area = float(search.oracle.machine_area_mm2(search.machine(wide.machine_point)))  # type: ignore[arg-type]
    over = search.evaluate(wide)
    assert not over.feasible and "shapes" not in over.metrics  # never simulated
    frame = board_of(search, [over, search.evaluate(seed)])
    infeasible = frame[~frame["feasible"]]
    assert infeasible["area_mm2"].tolist() == [pytest.approx(area)] * 2  # one row per GEMM
    assert infeasible["cycles"].isna().all() and not infeasible["pareto"].any()


def test_a_machine_over_the_energy_budget_keeps_its_totals_and_stays_off_the_front() -> None:
    free = codesign()
    seed = free.seeds()[0]
    ran = free.evaluate(seed)
    search = codesign(energy=float(ran.metrics["energy_pj"]) / 2)
    over = search.evaluate(seed)
    assert not over.feasible and over.violation == pytest.approx(1.0)
    assert over.metrics["shapes"] == ran.metrics["shapes"]
    frame = board_of(search, [over])
    assert not frame["feasible"].any() and not frame["pareto"].any()
    assert frame["total_energy_pj"].tolist() == [pytest.approx(ran.metrics["energy_pj"])] * 2
    assert frame["energy_pj"].notna().all() and frame["area_mm2"].notna().all()
    text = tables.format_front(frame, {"objectives": list(OBJECTIVES), "workload": "w"})
    assert text.splitlines()[-1].startswith("no feasible machine: all 1 tried are over a limit")
    assert "over the energy limit by 1" in text
