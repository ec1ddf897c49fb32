"""autotune: schedule search for matrix accelerators, with simcore's simulators as the oracle.

The Python API (`autotune.api`): `tune(shape, ...)` returns a `TuneResult` (its `best` entry,
its `leaderboard` DataFrame and its Optuna `study`); `load(path_or_study)` reads any leaderboard
back. The names are imported on first use, so `import autotune` stays light."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.lazy import exports

__version__ = "0.1.0"

__all__ = ["LeaderboardEntry", "TuneResult", "__version__", "load", "tune"]

if TYPE_CHECKING:
    from autotune.api import LeaderboardEntry, TuneResult, load, tune
else:
    __getattr__, __dir__ = exports(
        globals(), {"api": ("LeaderboardEntry", "TuneResult", "load", "tune")}
    )
