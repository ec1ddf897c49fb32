"""Objectives: what a search may optimise, in which direction, and how a trial's value for each
is read from its record or a leaderboard row."""

from __future__ import annotations

from typing import Mapping, Sequence

from autotune.record import Evaluation

# What an infeasible trial reports as its value: finite, and worse than any schedule.
INFEASIBLE_VALUE = 1e15
# Every objective a search may name, and its direction. mxu_cycles is maximised: a slower matrix
# unit is the cheaper one, so it trades against cycles.
DIRECTIONS: dict[str, str] = {
    "cycles": "minimize",
    "tiles_moved": "minimize",
    "scratchpad_words": "minimize",
    "dma_words_per_cycle": "minimize",
    "mxu_cycles": "maximize",
    "words_per_mac": "minimize",
    "pes": "minimize",
    "energy": "minimize",
    "edp": "minimize",
    "area": "minimize",
}
# The metric an objective reads, where the names differ (energy in pJ, EDP in pJ x cycles, area in mm2).
COLUMNS: dict[str, str] = {"energy": "energy_pj", "area": "area_mm2"}


def directions(objectives: Sequence[str]) -> list[str]:
    return [DIRECTIONS[name] for name in objectives]


def worst(name: str) -> float:
    return -INFEASIBLE_VALUE if DIRECTIONS[name] == "maximize" else INFEASIBLE_VALUE


def objective_value(source: Mapping[str, object], name: str) -> float:
    """An objective from a trial's record or a leaderboard row: a measured metric, or a
    parameter of the machine the result was measured on."""
    machine = source.get("machine")
    if not isinstance(machine, Mapping):
        machine = source
    column = COLUMNS.get(name, name)
    if column in source and source[column] is not None:
        return float(source[column])  # type: ignore[arg-type]
    if name == "scratchpad_words":
        return float(int(machine["slots"]) * int(machine["T"]) ** 2)  # type: ignore[call-overload]
    return float(machine[name])  # type: ignore[arg-type]


def evaluation_source(evaluation: Evaluation) -> dict[str, object]:
    """An evaluation as `objective_value` reads it: the metrics and the machine."""
    return {**evaluation.metrics, "machine": dict(evaluation.machine)}


def objective_values(
    evaluation: Evaluation, objectives: Sequence[str]
) -> float | tuple[float, ...]:
    """Optuna's values; an infeasible candidate gets a finite value worse than any real one."""
    source = evaluation_source(evaluation)
    values = [
        objective_value(source, name) if evaluation.feasible else worst(name) for name in objectives
    ]
    return values[0] if len(values) == 1 else tuple(values)


def overshoot(value: float, budget: float) -> float:
    """How far over a budget, relative (0 when within it): a constraint graded like the others."""
    return max(0.0, value / budget - 1)
