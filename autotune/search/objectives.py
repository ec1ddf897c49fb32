"""Objectives: the oracle's measures (autotune.oracles.measures) a search optimises, in their
declared directions, and how a trial's values are read from its record."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from autotune.oracles.measures import BUDGETED, CYCLES, EDP, Measure, find
from autotune.record import Evaluation

if TYPE_CHECKING:
    from autotune.oracles.base import Oracle

# What an infeasible trial reports as its value: finite, and worse than any schedule.
INFEASIBLE_VALUE = 1e15
# What a results file names without its oracle at hand: the measures every oracle may share.
SHARED: tuple[Measure, ...] = (CYCLES, *BUDGETED, EDP)


def measures_of(oracle: Oracle | None, names: Iterable[str]) -> tuple[Measure, ...]:
    """The declarations of the named objectives: the oracle's, else a shared one, else a plain
    minimised measure of that name (a results file of an oracle not installed here)."""
    declared = tuple(oracle.measures) if oracle is not None else ()
    return tuple(find(declared, name) or find(SHARED, name) or Measure(name) for name in names)


def directions(objectives: Sequence[Measure]) -> list[str]:
    return [measure.direction for measure in objectives]


def worst(measure: Measure) -> float:
    return -INFEASIBLE_VALUE if measure.maximized else INFEASIBLE_VALUE


def evaluation_source(evaluation: Evaluation) -> dict[str, object]:
    """An evaluation as `Measure.value` reads it: the metrics and the machine."""
    return {**evaluation.metrics, "machine": dict(evaluation.machine)}


def objective_values(
    evaluation: Evaluation, objectives: Sequence[Measure]
) -> float | tuple[float, ...]:
    """Optuna's values; an infeasible candidate gets a finite value worse than any real one."""
    source = evaluation_source(evaluation)
    values = [m.value(source) if evaluation.feasible else worst(m) for m in objectives]
    return values[0] if len(values) == 1 else tuple(values)


def overshoot(value: float, budget: float) -> float:
    """How far over a budget, relative (0 when within it): a constraint graded like the others."""
    return max(0.0, value / budget - 1)
