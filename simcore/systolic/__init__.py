"""The systolic-array oracle: weight tiles and their closed-form schedule and traffic
(`model`), the cycle-by-cycle model that checks them (`cycle`), and GA-1's matrix unit derived
from an array (`tie`)."""
from __future__ import annotations

from simcore.systolic.cycle import SystolicResult, SystolicTimingError, simulate_systolic
from simcore.systolic.model import Schedule, SystolicArray, TileTiming, Traffic, WeightFetch, stream_schedule, traffic, weight_tiles

__all__ = [
    "Schedule", "SystolicArray", "TileTiming", "Traffic", "WeightFetch", "stream_schedule", "traffic", "weight_tiles",
    "SystolicResult", "SystolicTimingError", "simulate_systolic",
]
