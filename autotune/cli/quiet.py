"""The command line's logging: no per-trial log lines (the progress bar and the final report say
what matters), in the main process and in every spawned worker (`RunOptions.worker_setup`).

Optuna takes half a second to import and many commands never touch a study: `quiet_libraries`
quiets it at once when it is loaded, and otherwise as soon as something imports it (a one-shot
import hook), so the command line never imports it only to quiet it."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import logging
import sys
from types import ModuleType
from typing import Sequence


def quiet_libraries() -> None:
    """No per-trial log lines: the progress bar and the final report say what matters."""
    if "optuna" in sys.modules:
        _quiet_optuna()
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport("optuna"))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Quiets `name` once it has been imported (then leaves sys.meta_path)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _quiet_optuna()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _quiet_optuna() -> None:
    import warnings

    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # Ctrl-C stops a run on purpose and the run reports it: Optuna's "Trial N failed ...
    # KeyboardInterrupt" warning, with a traceback of wherever the signal landed, is noise.
    for handler in logging.getLogger("optuna").handlers:
        if _not_an_interrupted_trial not in handler.filters:
            handler.addFilter(_not_an_interrupted_trial)
    # We use Optuna's heartbeat and grouped TPE on purpose; their "experimental" notes are noise.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


_interrupted: set[str] = (
    set()
)  # "Trial N" of the interrupted trials whose first warning was dropped


def _not_an_interrupted_trial(record: logging.LogRecord) -> bool:
    """Drop both of Optuna's warnings for a trial a Ctrl-C interrupted: the one with the
    KeyboardInterrupt, and the "Trial N failed with value None." that follows it."""
    text = record.getMessage()
    if record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt):
        _interrupted.add(text.split(" failed", 1)[0])
        return False
    trial, _, rest = text.partition(" failed with value ")
    if rest and trial in _interrupted:
        _interrupted.discard(trial)
        return False
    return True
