"""The examples of README.md and docs/: what tests/docs/test_examples.py runs.

How a page marks them (docs/extending/layout.md says the same to writers):
  ```sh        commands, one a line (a trailing backslash continues it; # starts a comment);
               each must exit 0
  ```console   `$ command` lines, each followed by what it prints: every line shown appears
               in the output, in order ("..." in a line stands for any text; a line of "..."
               alone for lines left out); a command whose output shows "error:" exits non-zero
  ```python    a script; the ```text block right after it, if any, is what it prints
Commands are the ones that start with `python`; the others (pip, mkdocs, pytest, shell set-up)
are installation steps, shown and not run. ```pycon blocks are docs/reference/api.md's
doctests, run by tests/autotune/test_api.py."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Example:
    """One command or Python script of a page, and what the page says of it."""

    page: str  # relative to the checkout
    line: int  # of the command, or of the script's first line
    kind: str  # "command" or "python"
    text: str  # the command line (continuations joined) or the script
    output: tuple[str, ...] | None = None  # the lines the page shows (None: none shown)
    fails: bool = False  # the page shows it refused

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.text, comments=True)


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def examples(page: Path) -> list[Example]:
    """Every example of `page`, in order."""
    text = page.read_text()
    name = str(page.relative_to(ROOT))
    blocks = list(FENCE.finditer(text))
    found: list[Example] = []
    for index, block in enumerate(blocks):
        lang, body = block.group(1), block.group(2)
        first = text.count("\n", 0, block.start(2)) + 1
        if lang == "sh":
            found += [
                Example(name, first + offset, "command", command)
                for offset, command in _logical_lines(body)
            ]
        elif lang == "console":
            found += _console(name, first, body)
        elif lang == "python":
            after = blocks[index + 1] if index + 1 < len(blocks) else None
            shown = None
            if after and after.group(1) == "text" and not text[block.end() : after.start()].strip():
                shown = tuple(after.group(2).splitlines())
            found.append(Example(name, first, "python", body, shown))
    return found


def _logical_lines(body: str) -> list[tuple[int, str]]:
    """(offset, line) of each command of a block: continuations joined, blank lines and
    comment lines left out."""
    found: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for offset, line in enumerate(body.splitlines()):
        if not pending:
            start = offset
            if not line.strip() or line.lstrip().startswith("#"):
                continue
        if line.rstrip().endswith("\\"):
            pending.append(line.rstrip()[:-1])
            continue
        pending.append(line)
        found.append((start, " ".join(part.strip() for part in pending)))
        pending = []
    return found


def _console(page: str, first: int, body: str) -> list[Example]:
    found: list[Example] = []
    lines = body.splitlines()
    at = 0
    while at < len(lines):
        if not lines[at].startswith("$ "):
            at += 1
            continue
        start, command = at, [lines[at][2:]]
        while command[-1].rstrip().endswith("\\") and at + 1 < len(lines):
            at += 1
            command[-1] = command[-1].rstrip()[:-1]
            command.append(lines[at])
        at += 1
        shown = []
        while at < len(lines) and not lines[at].startswith("$ "):
            shown.append(lines[at])
            at += 1
        output = tuple(line for line in shown if line.strip())
        found.append(
            Example(
                page,
                first + start,
                "command",
                " ".join(part.strip() for part in command),
                output,
                fails=any(re.match(r"^\S*: error: |^[\w.-]+: error\b", s) for s in output),
            )
        )
    return found


def runs(example: Example) -> bool:
    """Whether the docs test runs it: Python scripts, and commands that start with python
    (not `python -m venv` or `pip`, installation steps)."""
    if example.kind == "python":
        return True
    argv = example.argv
    return bool(argv) and argv[0] in ("python", "python3") and argv[1:3] != ["-m", "venv"]


def matches(shown: str, line: str) -> bool:
    """Whether an output line is the shown one ("..." in it stands for any text)."""
    pattern = ".*".join(re.escape(part.strip()) for part in shown.split("..."))
    return re.fullmatch(r"\s*" + pattern + r"\s*", line) is not None


def shown_in(shown: tuple[str, ...], output: str) -> str | None:
    """None when every shown line appears in `output` in order (a line of "..." alone skips);
    else the first shown line that does not."""
    lines = output.splitlines()
    at = 0
    for wanted in shown:
        if wanted.strip() == "...":
            continue
        while at < len(lines) and not matches(wanted, lines[at]):
            at += 1
        if at == len(lines):
            return wanted
        at += 1
    return None
