"""Atomic file writes: write a temporary file beside the target, flush it to the disk, rename it
over the target and flush the folder, so that a crash at any moment leaves either the old file
or the new one, whole. A target that cannot be written (a read-only results folder, a full
disk) is a one-line error. And where a command may write at all (`check_output`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterator, Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from autotune.errors import ResultsError, Text, ref
from autotune.storage.names import blocking_file, ensure_folder

_CHECKSUM = b"autotune.sha256"  # of the schema and metadata: a damaged footer shows on reading


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Report an OS error while writing `path` as one line (a ResultsError)."""
    try:
        yield
    except OSError as exc:
        raise ResultsError(f"cannot write {path}: {exc.strerror or exc}") from None


def _temporary_beside(path: Path) -> Path:
    ensure_folder(path.parent)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    # mkstemp makes the file private (0600) and the rename keeps that: give the result the mode
    # of the file it replaces, or the mode an ordinary new file gets, so a shared results/
    # folder stays readable and a private file stays private.
    # A link is replaced by a new file: its own bits mean nothing.
    if path.is_file() and not path.is_symlink():
        mode = stat.S_IMODE(path.stat().st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(name, mode)
    return Path(name)


def _target(path: Path) -> Path:
    """The file an atomic write replaces: `path` itself, never where a symlink points (the link
    is replaced by a regular file, and what it pointed to is left as it was), and only a regular
    file or a link, since a rename would turn a device, a FIFO or a socket into a plain file."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return path
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a device or a FIFO?)"
        raise ResultsError(f"{path} is {kind}: it is never replaced")
    return path


def _replace(temporary: Path, path: Path) -> None:
    """Flush the new file, rename it over the old one, flush the folder's entry."""
    with open(temporary, "rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def write_parquet(
    frame: pd.DataFrame, path: Path, metadata: Mapping[str, object] | None = None
) -> Path:
    """Write `frame` to `path` atomically, with `metadata` as JSON in the schema's metadata."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if metadata:
        merged = dict(table.schema.metadata or {})
        merged[b"autotune"] = json.dumps(metadata, sort_keys=True).encode()
        table = table.replace_schema_metadata(merged)
        table = table.replace_schema_metadata({**merged, _CHECKSUM: _digest(table.schema)})
    if to_stdout(path):
        buffer = pa.BufferOutputStream()
        pq.write_table(table, buffer, write_page_checksum=True)
        write_stdout(buffer.getvalue().to_pybytes())
        return path
    with atomically(path) as temporary:
        with pyarrow_file(temporary, "wb") as where:
            pq.write_table(
                table, where, write_page_checksum=True
            )  # damage shows on reading, not as wrong numbers
    return path


@contextlib.contextmanager
def pyarrow_file(path: Path, mode: str) -> Iterator[Path | BinaryIO]:
    """`path` as pyarrow can take it: pyarrow encodes a path as UTF-8, which fails on a name
    Python holds as surrogate escapes (a non-UTF-8 locale); such a file goes as a Python file."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        with open(path, mode) as handle:
            yield handle  # type: ignore[misc]
        return
    yield path


def _digest(schema: pa.Schema) -> bytes:
    """A checksum of what page checksums do not cover: the columns' names and types, and the
    pandas and autotune metadata (a flipped bit there would rename a column or change a type)."""
    metadata = schema.metadata or {}
    parts = [
        schema.remove_metadata().to_string().encode(),
        metadata.get(b"pandas", b""),
        metadata.get(b"autotune", b""),
    ]
    return hashlib.sha256(b"\0".join(parts)).hexdigest().encode()


def schema_damage(schema: pa.Schema) -> str | None:
    """Why a file's schema and metadata are not what was written (None: they are, or the file
    predates the checksum)."""
    found = schema.metadata or {}
    if _CHECKSUM in found and _digest(schema) != found[_CHECKSUM]:
        return "its schema or metadata does not match its checksum"
    return None


def read_parquet(path: Path) -> tuple[pd.DataFrame, dict[str, object]]:
    """Read a parquet file and its autotune metadata (empty when there is none)."""
    with pyarrow_file(path, "rb") as where:
        table = pq.read_table(where, page_checksum_verification=True)
    damage = schema_damage(table.schema)
    if damage is not None:
        raise ValueError(damage)
    raw = (table.schema.metadata or {}).get(b"autotune")
    metadata = json.loads(raw) if raw else {}
    return table.to_pandas(), metadata


def write_text(text: str, path: Path) -> Path:
    """`text` to `path` atomically, or to standard output for "-"."""
    if to_stdout(path):
        write_stdout(text.encode())
        return path
    with atomically(path) as temporary:
        temporary.write_text(text)
    return path


@contextlib.contextmanager
def atomically(path: Path) -> Iterator[Path]:
    """A temporary file to write `path`'s new content to; it replaces `path` when the block ends
    without an error, and is removed in any case. A symlink is never followed: the link itself
    is replaced by the new regular file, and the file it pointed to is left as it was. An existing
    target that is not a regular file (a device, a FIFO, a folder) is refused in one line."""
    with writing(path):
        target = _target(path)
        temporary = _temporary_beside(target)
        try:
            yield temporary
            _replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)


# --- where a command may write ---------------------------------------------------------------

# The files a study's folder holds: never an output, whatever is asked.
STUDY_FILES = frozenset(
    {"study.journal", "study.db", "leaderboard.parquet", "pareto.parquet", "workload.parquet"}
)


PROGRAMS = "programs"  # a study's stored programs: results/<study>/programs/<digest>.asm


def study_file(path: Path) -> bool:
    """Whether `path` (or the file a symlink points to) is a study's own file: by name, in a
    study's programs/ folder (often a program's only copy), or by content (a journal, an SQLite
    storage, a leaderboard, Pareto front or workload summary, however it is named)."""
    if path.is_symlink() and _own_file(Path(os.path.realpath(path))):
        return True
    return _own_file(path)


def _in_programs(path: Path) -> bool:
    folder = Path(os.path.abspath(path)).parent
    return folder.name == PROGRAMS and any((folder.parent / name).is_file() for name in STUDY_FILES)


def _own_file(path: Path) -> bool:
    if path.name in STUDY_FILES or path.name.endswith((".lock", ".tmp")) or ".worker-" in path.name:
        return True
    if _in_programs(path):
        return True
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(256)
    except OSError:
        return False
    if head.startswith(b"PAR1"):  # a study's results wherever they were copied
        return _results_kind(path) in ("leaderboard", "pareto", "workload")
    return head.startswith(b"SQLite format 3\x00") or (
        head.startswith(b'{"op_code":') and b"\n" in head
    )


def _results_kind(path: Path) -> object:
    try:
        with pyarrow_file(path, "rb") as where:
            raw = (pq.read_schema(where).metadata or {}).get(b"autotune")
        return json.loads(raw).get("kind") if raw else None
    except Exception:  # noqa: BLE001 - a damaged or foreign parquet file is no study's
        return None


STDOUT = "-"  # an --out of "-" is standard output


def to_stdout(path: Path | str | None) -> bool:
    return path is not None and str(path) == STDOUT


def write_stdout(data: bytes) -> None:
    """`data` to standard output; a full or closed one is a one-line error (a broken pipe is
    left to the command line, which exits as a pipeline expects)."""
    import sys

    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise ResultsError(f"cannot write standard output: {exc.strerror or exc}") from None


def pictures_folder(path: Path) -> bool:
    """Whether `path` is the place of a study's pictures, results/<study>/plots."""
    return path.name == "plots" and any((path.parent / name).is_file() for name in STUDY_FILES)


def check_output(
    path: Path, force: bool, setting: str | None = "out", may_create: Path | None = None
) -> Path:
    """A file a command was asked to write: never a study's own file, never a folder, and an
    existing file only with `force`; its folder must exist, or lie inside `may_create` (the
    results folder: no folder is made outside it). "-" is standard output. Refused
    (ResultsError, one line) before anything is done."""
    if to_stdout(path):
        return path
    blocked = blocking_file(path.parent)
    if blocked is not None:
        raise ResultsError(f"{path}: {blocked} is a file, not a folder", setting=setting)
    if path.is_dir():
        raise ResultsError(f"{path} is a directory: give a file name", setting=setting)
    if not path.parent.is_dir() and not _inside(path.parent, may_create):
        raise ResultsError(
            f"{path}: the folder {path.parent} does not exist (autotune makes no folder outside "
            "its results folder)",
            setting=setting,
        )
    if pictures_folder(path) and not path.exists():
        raise ResultsError(
            f"{path} is where the study's pictures go (plot): write elsewhere", setting=setting
        )
    if study_file(path):
        raise ResultsError(f"{path} is a study's own file: write elsewhere", setting=setting)
    if path.exists() and not path.is_file():  # a device or a FIFO, not ours to replace
        raise ResultsError(
            f"{path} is not a regular file (a device or a FIFO?): write elsewhere", setting=setting
        )
    if path.exists() and not force:
        raise ResultsError(
            Text(f"{path} exists: replacing it needs ", ref("force", True)), setting=setting
        )
    return path


def _inside(folder: Path, parent: Path | None) -> bool:
    """`folder` is `parent` or lies inside it (both made absolute, links not followed)."""
    if parent is None:
        return False
    folder, parent = Path(os.path.abspath(folder)), Path(os.path.abspath(parent))
    return folder == parent or parent in folder.parents


def check_output_folder(
    folder: Path, names: list[str], force: bool, setting: str | None = "out"
) -> Path:
    """A folder a command was asked to write `names` into: `check_output` for each. The folder
    itself may be made; the folder it lies in must exist."""
    if folder.exists() and not folder.is_dir():
        raise ResultsError(f"{folder} is a file, not a folder", setting=setting)
    if not folder.exists() and not folder.parent.is_dir():
        raise ResultsError(
            f"{folder}: the folder {folder.parent} does not exist (autotune makes no folder "
            "outside its results folder)",
            setting=setting,
        )
    for name in names:
        check_output(folder / name, force, setting, may_create=folder)
    return folder
