"""Study names are names, not paths; and the folders and files a command is given are what they
claim to be.

The one rule for a name (a study's, a run's): a single path component of printable characters,
never empty, never starting with `.` (so never `.` or `..`, and never a hidden folder that
`studies` would not list), no `/` or `\\`, no space at either end, at most 255 bytes in UTF-8
(a folder name's limit). Every place where a name becomes a path goes through `study_folder`;
a name that breaks the rule is refused in one line before anything is written. A name autotune
makes up that would be too long is cut and ends in a digest of the whole (`automatic_name`,
`member_name`): still distinct, and the same on every run."""

from __future__ import annotations

import errno
import hashlib
import os
import sys
from pathlib import Path

from autotune.errors import AutotuneError, StudyError

NAME_MAX_BYTES = 255
DIGEST_CHARS = 8  # of an automatic name cut to fit


def name_problem(name: object) -> str | None:
    """Why `name` is not a study name, or None when it is one."""
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not text"
    problem = _form_problem(name)
    if problem is None and _size(name) > NAME_MAX_BYTES:
        return f"is longer than {NAME_MAX_BYTES} bytes"
    return problem


def _form_problem(name: str) -> str | None:
    """What besides its length keeps `name` from being a study name."""
    if name == "":
        return "is empty"
    if "/" in name or "\\" in name:
        return "is a path: a name is one folder name, without / or \\"
    if name.startswith("."):
        return "starts with '.' (a name is never . or .., nor a hidden folder)"
    if not name.isprintable():
        return _unprintable(name)
    if name != name.strip():
        return "starts or ends with a space"
    return None


def _unprintable(name: str) -> str:
    """Why a name that is not printable is refused. In a locale that is not UTF-8 (LC_ALL=C),
    Python hands over the bytes of a name like 'ünï' as surrogate escapes: the name is fine,
    the locale cannot carry it."""
    try:
        typed = os.fsencode(name).decode("utf-8")
    except UnicodeError:
        typed = None
    if typed is not None and typed != name and typed.isprintable():
        return (
            f"is not text in this locale's encoding ({sys.getfilesystemencoding()}): "
            "run autotune in a UTF-8 locale (LC_ALL=C.UTF-8) for such a name"
        )
    return "holds a control or non-printable character"


def automatic_name(text: str) -> str:
    """`text` cut to NAME_MAX_BYTES the same way every time: past the limit it ends in a digest
    of the whole text, so distinct texts keep distinct names and a rerun finds its study. What
    else makes a name invalid (a control character, say) is left for `check_name` to refuse."""
    if _size(text) <= NAME_MAX_BYTES or _form_problem(text) is not None:
        return text
    return _fitted(text, text, NAME_MAX_BYTES)


def member_name(run: str, part: str) -> str:
    """The name of `part` (a workload's GEMM) of run `run`: `run-part`, the part cut and ending
    in a digest when that is too long; it starts with `member_prefix(run)`."""
    full = f"{run}-{part}"
    if _size(full) <= NAME_MAX_BYTES or _form_problem(full) is not None:
        return full
    room = NAME_MAX_BYTES - _size(run) - 2 - DIGEST_CHARS
    if room >= 1:
        return f"{run}-{_fitted(part, full, room + 1 + DIGEST_CHARS)}"
    return _fitted(full, full, NAME_MAX_BYTES)


def member_prefix(run: str) -> str:
    """What every `member_name(run, ...)` starts with."""
    return _cut(f"{run}-", NAME_MAX_BYTES - 1 - DIGEST_CHARS)


def _fitted(name: str, whole: str, limit: int) -> str:
    """`name` cut so that, with '-' and a digest of `whole` after it, it fits `limit` bytes."""
    digest = hashlib.sha1(whole.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]
    return f"{_cut(name, limit - 1 - DIGEST_CHARS)}-{digest}"


def _cut(text: str, limit: int) -> str:
    """The longest start of `text` of at most `limit` bytes in UTF-8."""
    kept, size = [], 0
    for char in text:
        size += _size(char)
        if size > limit:
            break
        kept.append(char)
    return "".join(kept)


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def check_name(name: object, what: str = "study", setting: str | None = "study") -> str:
    """`name` if it is a study name; a StudyError naming it (and `setting`) otherwise."""
    problem = name_problem(name)
    if problem is not None:
        raise StudyError(f"{what} name {shown(name)} {problem}", setting=setting)
    return name  # type: ignore[return-value]


def shown(text: object) -> str:
    """A value as a one-line message quotes it: control characters escaped, never a newline."""
    return repr(text)


def study_folder(results: Path, name: str, setting: str | None = "study") -> Path:
    """results/<name>/, for a name that is one and a folder that is not a link."""
    folder = results / check_name(name, setting=setting)
    check_length(results, "results folder", "results")
    check_length(folder, "study folder", setting)
    refuse_link(folder, "study folder", setting)
    return folder


def check_length(path: Path, what: str, setting: str | None = None) -> Path:
    """AutotuneError when the file system could not hold `path`: a component past its name limit
    or the whole past its path limit (the system would answer ENAMETOOLONG at the first use)."""
    name_max, path_max = _limits(path)
    data = os.fsencode(os.path.abspath(path))
    longest = max(data.split(b"/"), key=len)
    if len(longest) > name_max:
        why = f"a name of {len(longest)} bytes (the file system takes at most {name_max})"
    elif len(data) >= path_max:
        why = f"{len(data)} bytes in all (the file system takes fewer than {path_max})"
    else:
        return path
    raise AutotuneError(f"{what} {abbreviated(str(path))} is too long: {why}", setting=setting)


def abbreviated(text: str, keep: int = 60) -> str:
    """`text` quoted, its middle cut when it is long: a message stays one readable line."""
    if len(text) <= 2 * keep:
        return shown(text)
    return f"{shown(text[:keep])}...{shown(text[-keep:])}"


def _limits(path: Path) -> tuple[int, int]:
    """NAME_MAX and PATH_MAX where `path` would be made (POSIX's usual 255 and 4096 elsewhere)."""
    existing = next((p for p in Path(os.path.abspath(path)).parents if _is_dir(p)), Path("/"))
    try:
        return os.pathconf(existing, "PC_NAME_MAX"), os.pathconf(existing, "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        return NAME_MAX_BYTES, 4096


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a parent itself too long
        return False


def refuse_link(path: Path, what: str, setting: str | None = None) -> None:
    """StudyError for a path inside the results folder that is a symbolic link: what autotune
    writes there would land wherever the link points."""
    if path.is_symlink():
        raise StudyError(
            f"{what} {shown(str(path))} is a link to {shown(os.readlink(path))}: autotune never "
            "writes through a link in its results folder (move the study there instead)",
            setting=setting,
        )


# --- folders and files given by the user -------------------------------------------------------


def blocking_file(path: Path) -> Path | None:
    """The nearest of `path` and its parents that exists but is not a folder (None if none)."""
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return None
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return None


def ensure_folder(path: Path, what: str = "folder", setting: str | None = None) -> Path:
    """Create `path` (and its parents) as a folder; one line when a file stands in the way (naming
    `setting`, the flag that chose it) or the folder cannot be made (a read-only disk)."""
    blocked = blocking_file(path)
    if blocked is not None:
        where = "" if blocked == path else f" (in the way of {path})"
        raise AutotuneError(f"{what} {blocked} is a file, not a folder{where}", setting=setting)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AutotuneError(
            f"cannot create the {what} {path}: {_reason(exc)}"
        ) from None  # the folder, not the flag
    return path


def input_file(path: Path, what: str, setting: str | None = None) -> Path:
    """A file to read: one line for a missing path, a folder, or a path through a file."""
    if path.is_dir():
        raise AutotuneError(f"{what} {path} is a directory, not a file", setting=setting)
    if not path.exists():
        blocked = blocking_file(path.parent)
        if blocked is not None:
            raise AutotuneError(
                f"{what} {path}: {blocked} is a file, not a folder", setting=setting
            )
        raise AutotuneError(f"{what} {path} not found", setting=setting)
    if not os.access(path, os.R_OK):
        raise AutotuneError(f"{what} {path} is not readable (permission denied)", setting=setting)
    return path


def _reason(exc: OSError) -> str:
    if exc.errno == errno.EEXIST:
        return "a file of that name exists"
    return exc.strerror or str(exc)
