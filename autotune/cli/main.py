"""The command line: `python -m autotune [COMMAND] ...`; with no command, `tune`."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Mapping, Sequence, cast

from autotune import __version__
from autotune.cli.errors import UsageError, message
from autotune.cli.quiet import quiet_libraries
from autotune.cli.strict import strict
from autotune.environment import check_environment
from autotune.errors import AutotuneError
from autotune.interrupt import run_as_process

DEFAULT_COMMAND = "tune"


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line and exit status 2, without the usage dump; every
    option at most once, no empty value, numbers in ASCII digits (autotune.cli.strict)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        strict(self)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="autotune",
        description="Schedule search for matrix accelerators, with cycle-exact simulators as the oracle. "
        "With no command, runs `tune`.",
    )
    parser.add_argument("--version", action="version", version=f"autotune {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in _command_modules():
        module.register(subparsers)
    return parser


def _command_modules() -> list:
    import importlib

    names = [
        "baseline",
        "tune",
        "studies",
        "leaderboard",
        "show",
        "export",
        "check",
        "sweep",
        "systolic",
        "tile_model",
        "plot",
        "gemms",
        "archs",
        "optimum",
        "ops",
    ]
    modules = []
    for name in names:
        try:
            modules.append(importlib.import_module(f"autotune.cli.commands.{name}"))
        except ModuleNotFoundError as exc:
            if exc.name != f"autotune.cli.commands.{name}":
                raise
    return modules


def _with_default_command(argv: list[str], commands: set[str]) -> list[str]:
    if not argv or argv[0] in commands or argv[0] in ("-h", "--help", "--version"):
        return argv
    return [DEFAULT_COMMAND, *argv]


def _tolerant_streams() -> None:
    """Print what the terminal's encoding cannot show (a study named 'ünï' under an ASCII
    locale) as backslash escapes instead of failing with UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a stream already closed or detached
                pass


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None:  # started with standard output closed (`>&-`)
        print(
            "autotune: error: standard output is closed: give it somewhere to write, e.g. "
            "> /dev/null",
            file=sys.stderr,
        )
        return 2
    _tolerant_streams()
    try:
        quiet_libraries()
        parser = build_parser()
        subparsers = parser._subparsers._group_actions[0]  # type: ignore[union-attr]
        commands = set(cast(Mapping[str, Any], subparsers.choices))
        args = parser.parse_args(_with_default_command(argv, commands))
        if not getattr(args, "run", None):
            parser.print_help()
            return 2
        quiet_libraries()
        check_environment()
        status = int(args.run(args))
        sys.stdout.flush()  # a full standard output shows here, as one line
        return status
    except UsageError as exc:
        print(f"autotune: error: {exc}", file=sys.stderr)
        return 2
    except AutotuneError as exc:
        print(f"autotune: error: {message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        from autotune.interrupt import STOP

        print("autotune: interrupted", file=sys.stderr)
        return STOP.exit_status  # 130 after Ctrl-C, 143 after SIGTERM
    except BrokenPipeError:
        return _reader_left()
    except Exception as exc:
        line = _disk_fault(exc)
        if line is None:
            raise
        print(f"autotune: error: {line}", file=sys.stderr)
        return 2


def _disk_fault(exc: Exception) -> str | None:
    """One line for a write that failed on a full or read-only disk, wherever it happened (a
    journal's failed append is named even when Optuna's handling of it raised another error);
    None for any other error."""
    import errno

    kept = "the trials completed before are kept"
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        from autotune.storage.names import abbreviated

        return f"path too long for the file system: {abbreviated(str(exc.filename))}"
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        if exc.filename is None:  # autotune's own files are named: this was standard output
            _stdout_failed()
            return f"cannot write standard output: {exc.strerror}"
        return f"cannot write {exc.filename or 'a results file'}: {exc.strerror}; {kept}"
    journal = sys.modules.get("autotune.storage.journal")
    failed = journal.write_failure() if journal is not None else None
    if failed is None:
        return None
    path, error = failed
    return f"cannot write {path}: {error.strerror or error}; {kept}"


def _stdout_failed() -> bool:
    """Whether standard output cannot take what is buffered for it (then it is pointed at
    /dev/null, so that the interpreter's last flush does not fail again)."""
    import os

    try:
        sys.stdout.flush()
    except OSError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return True
    return False


def _reader_left() -> int:
    """The reader left (`autotune leaderboard x | head`): no traceback; the status a pipeline
    expects of a writer whose reader left (Python's own, 120). Standard output is pointed at
    /dev/null so the interpreter's final flush does not fail again."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 120


def main_entry() -> None:
    run_as_process(main)
