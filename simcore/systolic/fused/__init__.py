"""Fused groups on the systolic array with its memory system and a vector unit: one event
schedule per group, timed by a reference engine and a fast one held equal, counted, verified on
numbers and held to a lower bound (docs/fusion.md)."""

from simcore.systolic.fused.evaluate import (
    FusedRun,
    InfeasibleFused,
    evaluate_fused,
    evaluate_unfused,
)
from simcore.systolic.fused.schedule import GemmSchedule, MlpSchedule

__all__ = [
    "FusedRun",
    "GemmSchedule",
    "InfeasibleFused",
    "MlpSchedule",
    "evaluate_fused",
    "evaluate_unfused",
]
