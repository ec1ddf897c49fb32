"""The GA-1 oracle: machine, compact programs, the one timing rule, functional mode, the hazard
replay, the chapter's schedules, the general generator and the lower bounds.

`simulate(machine, program)` times a program exactly; `timeline(result)` draws it. The names
below are imported on first use (simcore.lazy): `from simcore.ga1 import Machine` loads
neither numpy nor the simulator."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.lazy import exports

_MODULES = {
    "bounds": (
        "SimpleBounds",
        "expected_blocked_traffic",
        "expected_kouter_traffic",
        "predicted_double_buffered_cycles",
        "simple_bounds",
    ),
    "hazards": ("Hazard", "replay"),
    "lower_bounds": ("lower_bound",),
    "machine": ("MACHINE_KEYS", "Machine", "MachineError", "machine_from", "parse_overrides"),
    "program": ("Program", "ProgramBuilder", "ProgramError"),
    "schedules": (
        "ChapterSchedule",
        "ScheduleError",
        "blocked",
        "chapter_sweep",
        "kouter",
        "parse_schedule",
    ),
    "simulator": ("SimResult", "matmul_inputs", "simulate"),
    "timelines": ("timeline",),
    "verify": ("Verification", "verify_matmul"),
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
]

if TYPE_CHECKING:
    from simcore.ga1.bounds import (
        SimpleBounds,
        expected_blocked_traffic,
        expected_kouter_traffic,
        predicted_double_buffered_cycles,
        simple_bounds,
    )
    from simcore.ga1.hazards import Hazard, replay
    from simcore.ga1.lower_bounds import lower_bound
    from simcore.ga1.machine import (
        MACHINE_KEYS,
        Machine,
        MachineError,
        machine_from,
        parse_overrides,
    )
    from simcore.ga1.program import Program, ProgramBuilder, ProgramError
    from simcore.ga1.schedules import (
        ChapterSchedule,
        ScheduleError,
        blocked,
        chapter_sweep,
        kouter,
        parse_schedule,
    )
    from simcore.ga1.simulator import SimResult, matmul_inputs, simulate
    from simcore.ga1.timelines import timeline
    from simcore.ga1.verify import Verification, verify_matmul
else:
    __getattr__, __dir__ = exports(globals(), _MODULES)
