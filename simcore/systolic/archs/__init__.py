"""Bundled machine descriptions (one TOML file each, with its published sources and what it
assumes) and the strict reader of such files: `load_arch(name_or_path, overrides)`."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from simcore import files
from simcore.systolic.machine import ArchError, SystolicMachine
from simcore.systolic.machine_parse import parse_machine

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MAX_FILE_BYTES = 1 << 20


def bundled_archs() -> tuple[str, ...]:
    """Names of the bundled machines."""
    files = resources.files("simcore.systolic.archs").iterdir()
    return tuple(sorted(f.name[: -len(".toml")] for f in files if f.name.endswith(".toml")))


def _read(name_or_path: str | Path) -> tuple[str, str]:
    """(text, where) of a bundled machine or a file, read within the size limit."""
    text_name = str(name_or_path)
    if text_name in bundled_archs():
        data = resources.files("simcore.systolic.archs").joinpath(f"{text_name}.toml").read_bytes()
        where = text_name
    else:
        path = Path(name_or_path)
        if not path.exists():
            known = ", ".join(bundled_archs())
            raise ArchError(
                f"arch {text_name}: no such file and no bundled machine of that name (bundled: {known})"
            )
        try:  # a regular file, within the limit, UTF-8 (a device or a FIFO is refused)
            return files.read_text(path, "arch", MAX_FILE_BYTES), text_name
        except files.FileError as exc:
            raise ArchError(str(exc)) from None
    return data.decode("utf-8"), where


def arch_dict(name_or_path: str | Path) -> dict[str, Any]:
    """The parsed (not yet validated) description; a SCALE-Sim .cfg file as this model's machine
    (`scalesim_machine`)."""
    if str(name_or_path).lower().endswith(".cfg"):
        from simcore.systolic.scalesim_config import ScalesimConfigError
        from simcore.systolic.scalesim_machine import read_machine_dict

        try:
            return read_machine_dict(name_or_path)
        except ScalesimConfigError as exc:
            raise ArchError(f"arch {name_or_path}: {str(exc).splitlines()[0]}") from None
    text, where = _read(name_or_path)
    try:
        return files.parse_toml(text, f"arch {where}")
    except files.FileError as exc:
        raise ArchError(str(exc)) from None


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """A copy of `data` with KEY=VALUE settings applied: 'dram.bandwidth=819 GB/s',
    'buffers.unified.capacity=8 MiB', 'array.rows=128', 'buffers.spad.holds=a,b'."""
    out = _copy(data)
    for item in overrides:
        key, eq, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not eq or not key:
            raise ArchError(
                f"override {item!r}: expected KEY=VALUE, for example dram.bandwidth=819 GB/s"
            )
        *path, last = key.split(".")
        table = out
        for part in path:
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise ArchError(f"{key}: {part} is not a table")
        table[last] = _value(last, raw)
    return out


def _copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    return data


def _value(key: str, raw: str) -> Any:
    if key == "holds":
        return [part.strip() for part in raw.split(",") if part.strip()]
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def load_arch(name_or_path: str | Path, overrides: Sequence[str] = ()) -> SystolicMachine:
    """A bundled machine by name, or a machine file, with KEY=VALUE overrides, validated."""
    return parse_machine(apply_overrides(arch_dict(name_or_path), overrides))
