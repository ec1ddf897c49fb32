"""Library logging for a command-line run: no per-trial log lines (the progress bar and the
final report say what matters), in the main process and in every spawned worker.

The command line asks for this before it runs a command, but Optuna takes half a second to
import and many commands never touch a study: so Optuna is quieted at once when it is already
loaded, and otherwise when `autotune.storage` (the code that opens studies) first loads it."""

from __future__ import annotations

import logging
import sys

_asked = False


def quiet_libraries() -> None:
    """No per-trial log lines: the progress bar and the final report say what matters."""
    global _asked
    _asked = True
    if "optuna" in sys.modules:
        _quiet_optuna()


def quiet_if_asked() -> None:
    """Quiet Optuna if the command line asked for it (called once Optuna is loaded)."""
    if _asked:
        _quiet_optuna()


def _quiet_optuna() -> None:
    try:
        import optuna
    except ModuleNotFoundError:
        return
    import warnings

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
