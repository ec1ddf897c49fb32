"""mkdocs hook: the command-line reference, generated from autotune's own argparse parsers.

The page `reference/cli.md` holds a marker; at build time it is replaced by the usage and help
of `autotune` and of every command, exactly as `--help` prints them, so the reference cannot
drift from the parser.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mkdocs.exceptions import PluginError

# Document the checkout being built, not whichever copy of autotune is installed. mkdocs restores
# sys.path after loading a hook, so `on_config` puts the checkout first again for the build.
ROOT = str(Path(__file__).resolve().parents[2])
sys.path.insert(0, ROOT)

from autotune.cli import build_parser as build_cli_parser  # noqa: E402  (the one link to the CLI)

PAGE = "reference/cli.md"
MARKER = "<!-- cli-reference -->"
HELP_WIDTH = 78  # columns argparse wraps the help to: the same page on every machine


def on_config(config):  # type: ignore[no-untyped-def]
    if sys.path[:1] != [ROOT]:
        sys.path.insert(0, ROOT)
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:  # type: ignore[no-untyped-def]
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise PluginError(f"{PAGE} lost its marker {MARKER}: the CLI reference has nowhere to go")
    return markdown.replace(MARKER, render(build_cli_parser()))


def render(parser: argparse.ArgumentParser) -> str:
    """Markdown: one section per command, its one-line help, then its `--help` verbatim."""
    with _plain_terminal():
        sections = [_section(parser.prog, None, parser)]
        sections += [_section(sub.prog, summary, sub) for summary, sub in commands(parser)]
    return "\n".join(sections)


Command = tuple[str | None, argparse.ArgumentParser]  # (its one-line help, its parser)


def commands(parser: argparse.ArgumentParser) -> Iterator[Command]:
    """(one-line help, parser) of each sub-command, in the order `--help` lists them."""
    for action in parser._actions:  # argparse keeps sub-commands only in this private list
        if not isinstance(action, argparse._SubParsersAction):
            continue
        summaries = {choice.dest: choice.help for choice in action._choices_actions}
        seen: set[int] = set()
        for name, sub in action.choices.items():
            if id(sub) not in seen:  # an alias names the same parser again
                seen.add(id(sub))
                yield summaries.get(name), sub


def _section(title: str, summary: str | None, parser: argparse.ArgumentParser) -> str:
    lead = f"{summary[0].upper()}{summary[1:].rstrip('.')}.\n\n" if summary else ""
    return f"## `{title}`\n\n{lead}```text\n{parser.format_help().rstrip()}\n```\n"


@contextmanager
def _plain_terminal() -> Iterator[None]:
    """A fixed width and no colour, whatever terminal runs the build."""
    saved = {key: os.environ.get(key) for key in ("COLUMNS", "NO_COLOR")}
    os.environ.update(COLUMNS=str(HELP_WIDTH), NO_COLOR="1")
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
