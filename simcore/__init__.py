"""simcore: autotune's cost oracles. Pure functions over frozen dataclasses, on numpy, with
numba compiling the GA-1 engine's hot loops.

One sub-package per oracle: `simcore.ga1` (the GA-1 cycle simulator, its schedules, generator
and bounds), `simcore.systolic` (the systolic array) and `simcore.tile_model` (the analytic tile
model). Shapes (`simcore.shape`) are shared. The names below stay importable from `simcore`;
each is imported on first use (simcore.lazy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.lazy import exports

_MODULES = {
    "ga1": (
        "MACHINE_KEYS",
        "ChapterSchedule",
        "Hazard",
        "Machine",
        "MachineError",
        "Program",
        "ProgramBuilder",
        "ProgramError",
        "ScheduleError",
        "SimpleBounds",
        "SimResult",
        "Verification",
        "blocked",
        "chapter_sweep",
        "expected_blocked_traffic",
        "expected_kouter_traffic",
        "kouter",
        "lower_bound",
        "machine_from",
        "matmul_inputs",
        "parse_overrides",
        "parse_schedule",
        "predicted_double_buffered_cycles",
        "replay",
        "simple_bounds",
        "simulate",
        "timeline",
        "verify_matmul",
    ),
    "shape": ("Shape", "ShapeError", "parse_shape"),
    "systolic": (
        "Assumptions",
        "HbmLink",
        "Mapping",
        "SystolicArray",
        "SystolicDesign",
        "SystolicTimingError",
        "schedule",
        "simulate_systolic",
        "traffic",
    ),
    "tile_model": ("MatmulTile",),
}

__all__ = [
    "MACHINE_KEYS",
    "Machine",
    "MachineError",
    "machine_from",
    "parse_overrides",
    "Program",
    "ProgramBuilder",
    "ProgramError",
    "Shape",
    "ShapeError",
    "parse_shape",
    "SimResult",
    "simulate",
    "matmul_inputs",
    "Hazard",
    "replay",
    "timeline",
    "ChapterSchedule",
    "ScheduleError",
    "blocked",
    "kouter",
    "chapter_sweep",
    "parse_schedule",
    "SimpleBounds",
    "simple_bounds",
    "expected_blocked_traffic",
    "expected_kouter_traffic",
    "predicted_double_buffered_cycles",
    "lower_bound",
    "Verification",
    "verify_matmul",
    "Assumptions",
    "HbmLink",
    "Mapping",
    "SystolicArray",
    "SystolicDesign",
    "SystolicTimingError",
    "schedule",
    "simulate_systolic",
    "traffic",
    "MatmulTile",
]

if TYPE_CHECKING:
    from simcore.ga1 import (
        MACHINE_KEYS,
        ChapterSchedule,
        Hazard,
        Machine,
        MachineError,
        Program,
        ProgramBuilder,
        ProgramError,
        ScheduleError,
        SimpleBounds,
        SimResult,
        Verification,
        blocked,
        chapter_sweep,
        expected_blocked_traffic,
        expected_kouter_traffic,
        kouter,
        lower_bound,
        machine_from,
        matmul_inputs,
        parse_overrides,
        parse_schedule,
        predicted_double_buffered_cycles,
        replay,
        simple_bounds,
        simulate,
        timeline,
        verify_matmul,
    )
    from simcore.shape import Shape, ShapeError, parse_shape
    from simcore.systolic import (
        Assumptions,
        HbmLink,
        Mapping,
        SystolicArray,
        SystolicDesign,
        SystolicTimingError,
        schedule,
        simulate_systolic,
        traffic,
    )
    from simcore.tile_model import MatmulTile
else:
    __getattr__, __dir__ = exports(globals(), _MODULES)
