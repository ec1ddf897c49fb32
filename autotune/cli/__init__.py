"""The command line: flags are parsed here, resolved once into a run plan, and errors from the
library are mapped to one-line messages and exit status 2."""

from __future__ import annotations

from autotune.cli.main import build_parser, main, main_entry

__all__ = ["build_parser", "main", "main_entry"]
