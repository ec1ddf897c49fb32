"""Domain errors. The library raises these with plain messages that name settings by their
plan names (`trials`, `storage`, `study`); only the command line turns a setting into its flag
and an error into one line and exit status 2."""

from __future__ import annotations


class AutotuneError(Exception):
    """Input autotune cannot honour: reported in one line, never with a traceback.

    `setting` names the run setting at fault, when there is one, so that the command line can
    name its flag."""

    def __init__(self, message: str, *, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


class PlanError(AutotuneError):
    """A run's settings that no search can honour, or that contradict each other."""


class StudyError(AutotuneError):
    """A study that cannot be opened, resumed or rebuilt as asked."""


class StorageError(AutotuneError):
    """A storage address that cannot be used, or storage that cannot be read."""


class ResultsError(AutotuneError):
    """A results file that is missing, damaged or of another kind."""


class RecordError(AutotuneError):
    """A stored trial record autotune cannot read."""


class OracleError(AutotuneError):
    """An oracle that is unknown, not installed, or asked for what it does not model."""


class SizeError(AutotuneError):
    """A shape whose counts could not be held exactly (64-bit) on the machine asked for."""
