"""The GA-1 oracle: machine, compact programs, the one timing rule, functional mode, the hazard
replay, the chapter's schedules, the general generator and the lower bounds."""
from __future__ import annotations

from simcore.ga1.bounds import SimpleBounds, expected_blocked_traffic, expected_kouter_traffic, predicted_double_buffered_cycles, simple_bounds
from simcore.ga1.hazards import Hazard, replay
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import MACHINE_KEYS, Machine, MachineError, machine_from, parse_overrides
from simcore.ga1.program import Program, ProgramBuilder, ProgramError
from simcore.ga1.schedules import ChapterSchedule, ScheduleError, blocked, chapter_sweep, kouter, parse_schedule
from simcore.ga1.simulate import SimResult, matmul_inputs, simulate
from simcore.ga1.timeline import timeline
from simcore.ga1.verify import Verification, verify_matmul

__all__ = [
    "MACHINE_KEYS", "Machine", "MachineError", "machine_from", "parse_overrides",
    "Program", "ProgramBuilder", "ProgramError",
    "SimResult", "simulate", "matmul_inputs", "Hazard", "replay", "timeline",
    "ChapterSchedule", "ScheduleError", "blocked", "kouter", "chapter_sweep", "parse_schedule",
    "SimpleBounds", "simple_bounds", "expected_blocked_traffic", "expected_kouter_traffic",
    "predicted_double_buffered_cycles", "lower_bound", "Verification", "verify_matmul",
]
