"""Library logging for a command-line run: no per-trial log lines (the progress bar and the
final report say what matters), in the main process and in every spawned worker."""
from __future__ import annotations

import logging


def quiet_libraries() -> None:
    """No per-trial log lines: the progress bar and the final report say what matters."""
    try:
        import optuna
    except ModuleNotFoundError:
        return
    import warnings

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # Ctrl-C stops a run on purpose and the run reports it: Optuna's "Trial N failed ...
    # KeyboardInterrupt" warning, with a traceback of wherever the signal landed, is noise.
    for handler in logging.getLogger("optuna").handlers:
        handler.addFilter(_not_an_interrupted_trial)
    # We use Optuna's heartbeat and grouped TPE on purpose; their "experimental" notes are noise.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


_interrupted: set[str] = set()   # "Trial N" of the interrupted trials whose first warning was dropped


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
