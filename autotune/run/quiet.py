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


def _not_an_interrupted_trial(record: logging.LogRecord) -> bool:
    return not (record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt))
