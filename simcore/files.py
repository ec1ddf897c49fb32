"""Reading the files an oracle is given (a technology table, an architecture file), strictly.

A file named by a user may be anything: a device that never ends (/dev/zero), a FIFO that never
opens, gigabytes, binary, UTF-16, or text that makes a parser recurse or grow without bound. Every
reader of such a file goes through here, and gets one of two things: the text, or a FileError
(a ValueError) whose message is one line naming the file and the problem.

    text = read_text(path, "technology file", limit_bytes=1 << 20)
    data = parse_toml(text, str(path))      # or parse_json(text, str(path))

`read_text` refuses what is not a regular file before opening it (os.stat follows links, so a
link to a device is refused too), opens with O_NONBLOCK (a FIFO swapped in after the check never
blocks the open) and checks the opened file again, reads at most `limit_bytes` + 1 bytes (more is
refused: nothing is read whole), refuses a NUL byte (not a text file) and decodes UTF-8 strictly,
naming the byte where decoding fails. `parse_toml` and `parse_json` bound what Python's parsers
do not: nesting (each recurses per level, and fails past about 300 with RecursionError), the
segments of a dotted TOML key (tomllib's work grows with their square: 20 KB of `a.a.a...` take
seconds and hundreds of MB), and the digits of an integer (int() refuses past 4,300 with a message
about Python). Values are the caller's to check (types, ranges), with its own one-line errors.

`check_writable(path, what, may_create)` is the other direction: a command that will write a
result checks, before any work, that the file can be written where it is named, creating no
folder outside the one it owns.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from simcore.shape import MOST_DIGITS, parse_int

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MOST_NESTING = 64  # arrays and tables inside one another
MOST_KEY_SEGMENTS = 64  # parts of one dotted TOML key (a.b.c has three)
_WIDE_MARKS = (  # byte-order marks of the encodings a text editor may save in instead of UTF-8
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+:")


class FileError(ValueError):
    """A file cannot be read as the text of its kind; the message is one line naming it."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: str | os.PathLike[str], what: str, limit_bytes: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit_bytes` of them (FileError
    otherwise: a missing or unreadable file, a device, FIFO or folder, or a larger file)."""
    name = os.fspath(path)
    try:
        found = os.stat(name)
        if not stat.S_ISREG(found.st_mode):
            raise FileError(f"{what} {name} is {_kind(found.st_mode)}, not a regular file")
        if found.st_size > limit_bytes:
            raise FileError(
                f"{what} {name} has {found.st_size} bytes, more than the {limit_bytes} allowed"
            )
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        descriptor = os.open(name, flags)
        with os.fdopen(descriptor, "rb") as handle:
            opened = os.fstat(handle.fileno())
            if not stat.S_ISREG(opened.st_mode):  # replaced between the check and the open
                raise FileError(f"{what} {name} is {_kind(opened.st_mode)}, not a regular file")
            data = handle.read(limit_bytes + 1)
    except OSError as exc:
        raise FileError(f"cannot read {what} {name}: {exc.strerror or exc}") from None
    if len(data) > limit_bytes:  # it grew after the check
        raise FileError(f"{what} {name} has more than the {limit_bytes} bytes allowed")
    return data


def read_text(path: str | os.PathLike[str], what: str, limit_bytes: int) -> str:
    """The UTF-8 text of the regular file at `path` (`read_bytes`), or FileError: binary (a NUL
    byte) or not UTF-8 (UTF-16 included), naming the byte where it fails."""
    data = read_bytes(path, what, limit_bytes)
    name = os.fspath(path)
    for marks, encoding in _WIDE_MARKS:
        if data.startswith(marks):
            raise FileError(f"{what} {name} is {encoding} text, not UTF-8")
    nul = data.find(b"\0")
    if nul >= 0:
        raise FileError(f"{what} {name} is not a text file (a NUL byte at byte {nul})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileError(
            f"{what} {name} is not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    return text.removeprefix("\ufeff")


# ---- parsers with bounds -------------------------------------------------------------------


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """TOML, with nesting, dotted keys and integers bounded first (FileError naming `where`)."""
    problem = _toml_excess(text)
    if problem:
        raise FileError(f"{where}: {problem}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FileError(f"{where}: not valid TOML: {exc}") from None
    except (ValueError, RecursionError, MemoryError):  # not expected within the bounds above
        raise FileError(f"{where}: not valid TOML, or too large to read") from None


def parse_json(text: str, where: str) -> Any:
    """JSON, with nesting and integers bounded (FileError naming `where`)."""
    deepest = _json_nesting(text)
    if deepest > MOST_NESTING:
        raise FileError(f"{where}: nested {deepest} deep, at most {MOST_NESTING}")
    try:
        return json.loads(text, parse_int=lambda digits: parse_int(digits, "an integer"))
    except json.JSONDecodeError as exc:
        raise FileError(f"{where}: not valid JSON: {exc}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise FileError(f"{where}: not valid JSON: {exc}") from None


def _json_nesting(text: str) -> int:
    """The deepest nesting of arrays and objects, strings skipped."""
    depth = deepest = 0
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == '"':
            index += 1
            while index < size and text[index] != '"':
                index += 2 if text[index] == "\\" else 1
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
        index += 1
    return deepest


def _toml_excess(text: str) -> str | None:
    """What in `text` is past the bounds (nesting, a dotted key's segments, an integer's digits),
    or None. A light lexer: comments and strings are skipped, bare words and strings are key
    segments (a float's two parts make a chain of one dot, which no bound reaches)."""
    depth = chain = 0
    after_dot = False
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == "#":
            end = text.find("\n", index)
            index = size if end < 0 else end
            continue
        if char in "\"'":
            index = _string_end(text, index)  # just past the string: read what follows it
            chain, after_dot = (chain if after_dot else 0), False
            continue
        if char in _BARE:
            start = index
            while index < size and text[index] in _BARE:
                index += 1
            digits = text[start:index].lstrip("+-").replace("_", "")
            whole = not after_dot and not text.startswith(".", index)  # not a float's part
            if whole and digits.isdigit() and len(digits.lstrip("0")) > MOST_DIGITS:
                return (
                    f"an integer of {len(digits.lstrip('0'))} digits at character {start}, "
                    f"at most {MOST_DIGITS}"
                )
            chain, after_dot = (chain if after_dot else 0), False
            continue
        elif char == ".":
            chain += 1
            after_dot = True
            if chain >= MOST_KEY_SEGMENTS:
                return f"a dotted key of more than {MOST_KEY_SEGMENTS} parts at character {index}"
        elif char in "[{":
            depth += 1
            if depth > MOST_NESTING:
                return f"nested more than {MOST_NESTING} deep at character {index}"
            chain, after_dot = 0, False
        elif char in "]}":
            depth = max(0, depth - 1)
            chain, after_dot = 0, False
        elif char not in " \t":
            chain, after_dot = 0, False
        index += 1
    return None


def _string_end(text: str, start: int) -> int:
    """The index just past the TOML string that opens at `start` (basic or literal, one line or
    multi-line); the text's end or the line's end when it is not closed (the parser says so)."""
    quote = text[start]
    size = len(text)
    if text.startswith(quote * 3, start):
        index = start + 3
        while index < size:
            if quote == '"' and text[index] == "\\":
                index += 2
                continue
            if text.startswith(quote * 3, index):
                index += 3
                extra = 0
                while extra < 2 and index < size and text[index] == quote:
                    index, extra = index + 1, extra + 1
                return index
            index += 1
        return size
    index = start + 1
    while index < size and text[index] not in (quote, "\n"):
        index += 2 if quote == '"' and text[index] == "\\" else 1
    return min(index + 1, size)


# ---- where a result will be written ---------------------------------------------------------


def check_writable(
    path: str | os.PathLike[str], what: str, may_create: str | os.PathLike[str] | None = None
) -> None:
    """Refuse (FileError), before any work, a file that could not be written where it is named:
    its folder must be a folder this process may write in, or not exist yet inside `may_create`
    (a folder the caller makes, such as the results folder: nothing is ever created outside
    it); an existing file of that name must be a regular file. Nothing is created here."""
    target = Path(path)
    if target.exists() and not target.is_file():
        raise FileError(f"{what} {target} is {_kind(os.stat(target).st_mode)}, not a regular file")
    folder = target.parent
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing != folder:
        inside = may_create is not None and _within(folder, Path(may_create))
        if not inside:
            raise FileError(f"{what} {target}: the folder {folder} does not exist")
    if not existing.is_dir():
        raise FileError(f"{what} {target}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise FileError(f"{what} {target}: the folder {existing} is not writable")


def _within(folder: Path, parent: Path) -> bool:
    """`folder` is `parent` or lies inside it (both made absolute, links not followed)."""
    folder, parent = Path(os.path.abspath(folder)), Path(os.path.abspath(parent))
    return folder == parent or parent in folder.parents
