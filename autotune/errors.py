"""Domain errors. The library raises these with messages that name settings by their plan
names (`trials`, `storage`, `study`), each naming written as a `ref` in a `Text`; only the
command line turns a setting into its flag and an error into one line and exit status 2."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

_NO_VALUE = object()


@dataclass(frozen=True)
class Ref:
    """A setting named in a message, with the value it should take (or none)."""

    setting: str
    value: object = _NO_VALUE

    def as_keyword(self) -> str:
        """As the Python API says it: `sampler=tpe`, or `sampler`."""
        return self.setting if self.value is _NO_VALUE else f"{self.setting}={self.value}"

    def as_flag(self, flag: str) -> str:
        """As the command line says it: `--sampler tpe`, `--sampler`, or (True) `--transfer`."""
        if self.value is _NO_VALUE or self.value is True:
            return flag
        return f"{flag} {self.value}"


def ref(setting: str, value: object = _NO_VALUE) -> Ref:
    return Ref(setting, value)


class Text:
    """A message whose parts name settings (`ref`): `str()` reads them as the API's keywords,
    `render` as the command line's flags."""

    def __init__(self, *parts: str | Ref) -> None:
        self.parts = parts

    def render(self, flag_of: Callable[[str], str | None]) -> str:
        return "".join(
            p if isinstance(p, str) else p.as_flag(flag_of(p.setting) or p.setting)
            for p in self.parts
        )

    def names(self, setting: str | None) -> bool:
        """Whether the message names `setting` itself."""
        return any(isinstance(p, Ref) and p.setting == setting for p in self.parts)

    def __str__(self) -> str:
        return "".join(p if isinstance(p, str) else p.as_keyword() for p in self.parts)


class AutotuneError(Exception):
    """Input autotune cannot honour: reported in one line, never with a traceback.

    `setting` names the run setting at fault, when there is one, so that the command line can
    name its flag; `text` is the message, its settings named as `ref`s."""

    def __init__(self, message: str | Text, *, setting: str | None = None) -> None:
        self.text = message if isinstance(message, Text) else Text(message)
        super().__init__(str(self.text))
        self.setting = setting


class PlanError(AutotuneError):
    """A run's settings that no search can honour, or that contradict each other."""


class SettingTypeError(PlanError, TypeError):
    """A setting given a value of the wrong type (the Python API: `trials="10"`, `machine=5`)."""


class SettingValueError(PlanError, ValueError):
    """A setting given a value of the right type outside its range (`workers=0`)."""


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


class WorkError(AutotuneError):
    """Work past a limit of the run (`max_products`, `max_memory`): `work` is the estimate."""

    def __init__(
        self, message: str | Text, *, setting: str | None = None, work: object = None
    ) -> None:
        super().__init__(message, setting=setting)
        self.work = work


class Infeasible(ValueError):
    """A candidate that does not fit its machine, found while the oracle evaluates it: the search
    records it as infeasible, over `limit` by `over_by` (in `unit`), and goes on. Raised by an
    oracle or its families; never reaches the user."""

    def __init__(self, message: str, *, limit: str, over_by: float, unit: str = "") -> None:
        super().__init__(message)
        self.limit = limit  # the constraint is recorded as `{limit}_over`
        self.over_by = over_by
        self.unit = unit


class EvaluationRefused(Infeasible):
    """The oracle will not evaluate this candidate within its limit of work (the message says
    why): infeasible by the `timing` limit."""

    def __init__(self, message: str) -> None:
        super().__init__(message, limit="timing", over_by=1.0)
