"""The systolic-array oracle: designs, tiles and traffic (`model`), the closed-form schedule of
each dataflow (`closed_form`), the best mapping of a GEMM on an array (`mapping`), the cycle
models that check them (`cycle`: an event engine and a cycle-stepped reference engine per
dataflow), and GA-1's matrix unit derived from an array (`tie`).

`report(design, shape)` gives one GEMM's cycles, tiles, MAC utilization and traffic on a design
(`schedule(design, shape)` its tile-by-tile timings). The names below are imported on first use
(simcore.lazy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.lazy import exports

_MODULES = {
    "cycle": (
        "SystolicResult",
        "SystolicTimingError",
        "simulate_systolic",
        "simulate_systolic_reference",
    ),
    "model": (
        "DATAFLOWS",
        "DEFAULT_ASSUMPTIONS",
        "PRESETS",
        "SCALESIM",
        "Assumptions",
        "HbmLink",
        "Mapping",
        "SystolicArray",
        "SystolicDesign",
        "Traffic",
        "compulsory_words",
        "design_traffic",
        "tiles",
        "traffic",
    ),
    "closed_form": ("Schedule", "cycles", "schedule"),
    "reports": ("SystolicReport", "report"),
}

__all__ = [
    "DATAFLOWS",
    "DEFAULT_ASSUMPTIONS",
    "PRESETS",
    "SCALESIM",
    "Assumptions",
    "HbmLink",
    "Mapping",
    "SystolicArray",
    "SystolicDesign",
    "Traffic",
    "compulsory_words",
    "design_traffic",
    "tiles",
    "traffic",
    "Schedule",
    "cycles",
    "schedule",
    "SystolicReport",
    "report",
    "SystolicResult",
    "SystolicTimingError",
    "simulate_systolic",
    "simulate_systolic_reference",
]

if TYPE_CHECKING:
    from simcore.systolic.closed_form import Schedule, cycles, schedule
    from simcore.systolic.cycle import (
        SystolicResult,
        SystolicTimingError,
        simulate_systolic,
        simulate_systolic_reference,
    )
    from simcore.systolic.model import (
        DATAFLOWS,
        DEFAULT_ASSUMPTIONS,
        PRESETS,
        SCALESIM,
        Assumptions,
        HbmLink,
        Mapping,
        SystolicArray,
        SystolicDesign,
        Traffic,
        compulsory_words,
        design_traffic,
        tiles,
        traffic,
    )
    from simcore.systolic.reports import SystolicReport, report
else:
    __getattr__, __dir__ = exports(globals(), _MODULES)
