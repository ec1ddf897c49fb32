"""The command line's one error mapping: every domain error becomes one line naming the flag at
fault, and exit status 2. The settings a message names are `ref`s (autotune.errors.Text), written
here with their flags (autotune.settings); the message's own words are never rewritten."""

from __future__ import annotations

from autotune.errors import AutotuneError
from autotune.settings import flag_of


class UsageError(Exception):
    """A command line the parser or a command refuses: one line, exit status 2."""


def message(exc: AutotuneError) -> str:
    """The error as the command line says it: settings named by their flags, and the flag at
    fault first when the message does not name it."""
    text = exc.text.render(flag_of)
    flag = flag_of(exc.setting)
    if flag is None or exc.text.names(exc.setting) or text.startswith(flag):
        return text
    return f"{flag}: {text}"
