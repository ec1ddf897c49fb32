"""The checks every workload passes, whichever format it was read from: GEMM names (safe
file-name characters, at most MAX_NAME), dimensions within int64 (MAX_DIM) and weights (positive,
at most MAX_WEIGHT). Every reader (workloads.formats) calls
validate_workload, so the rules live here once."""

from __future__ import annotations

import math
import re

from simcore.shape import COUNT_LIMIT
from workloads.model import Workload, WorkloadError

# Occurrences per step: more than any model has, few enough that weight x cycles stays finite.
MAX_WEIGHT = 1e9
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
MAX_NAME = 128  # a GEMM name becomes part of a study folder's name (at most 255 bytes)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # becomes part of a study name and a file path
# No dimension past int64: the simulators hold sizes in int64 arrays and totals in floats.
MAX_DIM = COUNT_LIMIT


# Distinct GEMMs a workload may list: more than any network has (a 70B-parameter LLM has about
# ten), few enough that a study each is opened in seconds; a longer list is refused before any.
MAX_GEMMS = 10_000


def check_count(count: int, source: str) -> None:
    """WorkloadError for a list of more than MAX_GEMMS GEMMs, before any is read."""
    if count > MAX_GEMMS:
        raise WorkloadError(
            f"{source} lists {count} GEMMs, more than the {MAX_GEMMS} a workload may tune "
            "(one study each)"
        )


def validate_workload(workload: Workload, source: str) -> Workload:
    """The checks every format's GEMMs pass, whichever reader built them; WorkloadError with a
    one-line reason."""
    if not workload.gemms:
        raise WorkloadError(f"workload {source} is empty: it needs at least one GEMM")
    check_count(len(workload.gemms), f"workload {source}")
    seen: set[str] = set()
    for index, gemm in enumerate(workload.gemms, start=1):
        where = f"{source}, GEMM {index}"
        check_name(gemm.name, where)
        for axis, size in zip("MKN", (gemm.shape.m, gemm.shape.k, gemm.shape.n)):
            check_size(size, f"dimension {axis}", f"{where} ({gemm.name})")
        check_weight(gemm.weight, f"{where} ({gemm.name})")
        if gemm.name in seen:
            raise WorkloadError(f"workload {source}: GEMM name {gemm.name!r} appears twice")
        seen.add(gemm.name)
    return workload


def printable(text: str | bytes, most: int | None = 80) -> str:
    """A name from a file as a message or a table prints it: control and format characters
    (a newline, a bidi override) escaped, and at most `most` characters (then an ellipsis).
    Bytes (a protobuf string that is not UTF-8) are shown with their bad bytes escaped."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "backslashreplace")
    shown = text if text.isprintable() else repr(text)[1:-1]
    return shown if most is None or len(shown) <= most else shown[: most - 3] + "..."


def clipped(value: object) -> str:
    """repr() of a value from a file, at most about 60 characters: an error never echoes a
    whole line of a file."""
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def check_name(name: object, where: str) -> str:
    """A GEMM name: a string of safe file-name characters, at most MAX_NAME long."""
    if not isinstance(name, str):
        raise WorkloadError(f"{where}: name must be a string, got {clipped(name)}")
    if not _NAME.fullmatch(name):  # match() lets '$' pass a trailing newline
        raise WorkloadError(
            f"{where}: name {clipped(name)} must be letters, digits, '_', '-' or '.'"
        )
    if len(name) > MAX_NAME:  # it becomes part of a study's folder name
        raise WorkloadError(f"{where}: name {name[:20]!r}... is longer than {MAX_NAME} characters")
    return name


def check_size(value: int, what: str, where: str) -> int:
    """A size within int64 (MAX_DIM)."""
    if value > MAX_DIM:
        raise WorkloadError(f"{where}: {what} {brief(value)} is too large (at most {MAX_DIM})")
    return value


def brief(value: int | float) -> str:
    """A number for a one-line message; a huge integer as its first digits and its length (it
    has no float, and str() of more than 4300 digits raises)."""
    if not isinstance(value, int):
        return f"{value:g}"
    size = abs(value)
    if size.bit_length() <= 100:
        return str(value)
    digits = int(math.log10(size)) + 1
    while 10 ** (digits - 1) > size:  # log10 of a huge int can be off by one
        digits -= 1
    while 10**digits <= size:
        digits += 1
    lead = size // 10 ** (digits - 6)
    return f"{'-' if value < 0 else ''}{lead}... ({digits} digits)"


def check_weight(raw: object, where: str) -> float:
    """A weight as a float: a positive finite number, at most MAX_WEIGHT."""
    if isinstance(raw, bool):
        raise WorkloadError(f"{where}: weight must be a positive number, got {clipped(raw)}")
    if isinstance(raw, str):
        if not _NUMBER.fullmatch(
            raw.strip()
        ):  # float() would take 'inf', '1_0' and other scripts' digits
            raise WorkloadError(f"{where}: weight must be a positive number, got {clipped(raw)}")
        raw = float(raw.strip())
    if not isinstance(raw, (int, float)) or raw != raw or raw in (float("inf"), float("-inf")):
        raise WorkloadError(f"{where}: weight must be a positive number, got {clipped(raw)}")
    if raw <= 0:
        raise WorkloadError(f"{where}: weight must be positive, got {brief(raw)}")
    if raw > MAX_WEIGHT:
        raise WorkloadError(
            f"{where}: weight {brief(raw)} is too large (at most {MAX_WEIGHT:g} occurrences per step, "
            f"so that weighted cycles stay finite)"
        )
    return float(raw)
