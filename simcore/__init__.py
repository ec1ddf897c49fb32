"""simcore: autotune's cost oracles. Pure functions over frozen dataclasses; numpy only."""
from __future__ import annotations

from simcore.bounds import SimpleBounds, expected_blocked_traffic, expected_kouter_traffic, predicted_double_buffered_cycles, simple_bounds
from simcore.hazards import Hazard, replay
from simcore.machine import MACHINE_KEYS, Machine, MachineError, machine_from, parse_overrides
from simcore.program import Program, ProgramBuilder, ProgramError
from simcore.schedules import ChapterSchedule, ScheduleError, blocked, chapter_sweep, kouter, parse_schedule
from simcore.shape import Shape, ShapeError, parse_shape
from simcore.simulate import SimResult, matmul_inputs, simulate
from simcore.timeline import timeline

__all__ = [
    "MACHINE_KEYS", "Machine", "MachineError", "machine_from", "parse_overrides",
    "Program", "ProgramBuilder", "ProgramError", "Shape", "ShapeError", "parse_shape",
    "SimResult", "simulate", "matmul_inputs", "Hazard", "replay", "timeline",
    "ChapterSchedule", "ScheduleError", "blocked", "kouter", "chapter_sweep", "parse_schedule",
    "SimpleBounds", "simple_bounds", "expected_blocked_traffic", "expected_kouter_traffic",
    "predicted_double_buffered_cycles",
]
