"""The one error type the command line turns into a one-line message and exit status 2."""
from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: reported in one line, never with a traceback."""
