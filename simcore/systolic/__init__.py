"""The systolic-array oracle: designs, tiles and traffic (`model`), the closed-form schedule of
each dataflow (`schedule`), the best mapping of a GEMM on an array (`mapping`), the cycle
models that check them (`cycle`: an event engine and a cycle-stepped reference engine per
dataflow), and GA-1's matrix unit derived from an array (`tie`)."""
from __future__ import annotations

from simcore.systolic.cycle import SystolicResult, SystolicTimingError, simulate_systolic, simulate_systolic_reference
from simcore.systolic.model import (
    DATAFLOWS, DEFAULT_ASSUMPTIONS, PRESETS, SCALESIM, Assumptions, HbmLink, Mapping, SystolicArray, SystolicDesign,
    Traffic, compulsory_words, design_traffic, tiles, traffic,
)
from simcore.systolic.schedule import Schedule, cycles, schedule

__all__ = [
    "DATAFLOWS", "DEFAULT_ASSUMPTIONS", "PRESETS", "SCALESIM", "Assumptions", "HbmLink", "Mapping", "SystolicArray",
    "SystolicDesign", "Traffic", "compulsory_words", "design_traffic", "tiles", "traffic",
    "Schedule", "cycles", "schedule",
    "SystolicResult", "SystolicTimingError", "simulate_systolic", "simulate_systolic_reference",
]
