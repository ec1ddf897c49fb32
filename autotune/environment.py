"""Environment variables the run's libraries read when they load, checked before any work: numba
refuses some of them with a message that names none of them."""

from __future__ import annotations

import os

from autotune.errors import PlanError


def check_environment() -> None:
    """A PlanError naming the variable when numba could not load under it."""
    raw = os.environ.get("NUMBA_NUM_THREADS")
    if raw is None:
        return
    try:
        threads = int(raw)
    except ValueError:
        return  # numba warns and uses its default
    if threads < 1:
        raise PlanError(
            f"environment variable NUMBA_NUM_THREADS={raw.strip()}: numba needs at least 1 "
            "thread; unset it or set it to 1 or more"
        )
