"""Atomic file writes: write to a temporary file beside the target, then rename over it. A
target that cannot be written (a read-only results folder, a full disk) is a one-line error."""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator, Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from autotune.errors import ResultsError


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Report an OS error while writing `path` as one line (a ResultsError)."""
    try:
        yield
    except OSError as exc:
        raise ResultsError(f"cannot write {path}: {exc.strerror or exc}") from None


def _temporary_beside(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    # mkstemp makes the file private (0600) and the rename keeps that: give the result the mode
    # an ordinary new file gets, so a shared results/ folder stays readable.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(name, 0o666 & ~umask)
    return Path(name)


def write_parquet(frame: pd.DataFrame, path: Path, metadata: Mapping[str, object] | None = None) -> Path:
    """Write `frame` to `path` atomically, with `metadata` as JSON in the schema's metadata."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if metadata:
        merged = dict(table.schema.metadata or {})
        merged[b"autotune"] = json.dumps(metadata, sort_keys=True).encode()
        table = table.replace_schema_metadata(merged)
    with writing(path):
        temporary = _temporary_beside(path)
        try:
            pq.write_table(table, temporary)
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    return path


def read_parquet(path: Path) -> tuple[pd.DataFrame, dict[str, object]]:
    """Read a parquet file and its autotune metadata (empty when there is none)."""
    table = pq.read_table(path)
    raw = (table.schema.metadata or {}).get(b"autotune")
    metadata = json.loads(raw) if raw else {}
    return table.to_pandas(), metadata


def write_text(text: str, path: Path) -> Path:
    with writing(path):
        temporary = _temporary_beside(path)
        try:
            temporary.write_text(text)
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    return path
