"""The compiled GA-1 engine (numba).

Generators (`General`, `Strips`, `Blocked`, `KOuter`, or `Materialised` for any built program) emit their
program in chunks; `timing()` times them (by default periodically: the machine's steady state
detected and whole periods jumped, exactly; `timing("full")` simulates every instruction, as
they come, in memory for the slots), `program()` keeps them, `verify()` checks them exactly,
streamed. `simulate`, `time_program`, `execute`, `replay` and `verify_program` are the
reference's functions over materialised programs, compiled. The Python modules of simcore.ga1
stay the readable reference; differential tests hold every kernel here to them.
"""

from __future__ import annotations

from simcore.ga1.engine.generators import (
    Blocked,
    General,
    Generator,
    KOuter,
    Materialised,
    Strips,
    chapter_generator,
)
from simcore.ga1.engine.jit import cache_is_warm
from simcore.ga1.engine.methods import FULL, METHODS, PERIODIC, TimingLimitError
from simcore.ga1.engine.programs import execute, replay, simulate, time_program, verify_program

__all__ = [
    "Generator",
    "General",
    "Strips",
    "Blocked",
    "KOuter",
    "Materialised",
    "chapter_generator",
    "simulate",
    "time_program",
    "execute",
    "replay",
    "verify_program",
    "cache_is_warm",
    "PERIODIC",
    "FULL",
    "METHODS",
    "TimingLimitError",
]
