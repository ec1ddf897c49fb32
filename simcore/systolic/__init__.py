"""The systolic-array oracle: designs, tiles and traffic (`model`), the closed-form schedule of
each dataflow (`closed_form`), the best mapping of a GEMM on an array (`mapping`), the cycle
models that check them (`cycle`: an event engine and a cycle-stepped reference engine per
dataflow), GA-1's matrix unit derived from an array (`tie`), and SCALE-Sim 3.0's memory system
reproduced (`scalesim_memory`, reading its .cfg files with `scalesim_config`).

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
    "scalesim_config": (
        "ScalesimConfig",
        "ScalesimConfigError",
        "parse_scalesim_config",
        "read_scalesim_config",
    ),
    "scalesim_layer": ("ScalesimLayer",),
    "scalesim_memory": ("ScalesimMemoryReport", "scalesim_memory_report"),
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
    "ScalesimConfig",
    "ScalesimConfigError",
    "parse_scalesim_config",
    "read_scalesim_config",
    "ScalesimLayer",
    "ScalesimMemoryReport",
    "scalesim_memory_report",
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
    from simcore.systolic.scalesim_config import (
        ScalesimConfig,
        ScalesimConfigError,
        parse_scalesim_config,
        read_scalesim_config,
    )
    from simcore.systolic.scalesim_layer import ScalesimLayer
    from simcore.systolic.scalesim_memory import ScalesimMemoryReport, scalesim_memory_report
else:
    __getattr__, __dir__ = exports(globals(), _MODULES)
