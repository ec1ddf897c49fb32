"""Arguments shared by the commands: shapes, slot lists, schedule lists, machine overrides and
the source of a study's results. Nothing here imports Optuna, pandas or numba: the parser of
every command is built from these at start-up."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from autotune.cli.errors import UsageError
from autotune.cli.strict import strict_int
from autotune.settings import FLAG, SETTINGS, TEXT, Kind, help_of
from simcore.shape import Shape, ShapeError, parse_shape

if TYPE_CHECKING:
    from autotune.oracles import Oracle
    from simcore.ga1.schedules import ChapterSchedule


class _LateHelp(str):
    """A help text read from the installed plug-ins (oracles' measures, samplers, formats) only
    when `--help` prints it: argparse formats help as `help % params`."""

    def __new__(cls, make: Callable[[], str]) -> _LateHelp:
        found = super().__new__(cls, "...")
        found.make = make  # type: ignore[attr-defined]
        return found

    def __mod__(self, params: Any) -> str:
        return self.make() % params  # type: ignore[attr-defined,no-any-return]

    def strip(self, chars: str | None = None) -> str:
        return str(self.make()).strip(chars)  # type: ignore[attr-defined]

    def __str__(self) -> str:
        return str(self.make())  # type: ignore[attr-defined]


def _reader(kind: Kind) -> Callable[[str], Any]:
    """The kind's reader as argparse's `type`: its refusal is argparse's one-line error."""

    def read(text: str) -> Any:
        try:
            return kind(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    read.__name__ = "value"
    return read


def add_setting(
    parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup,
    name: str,
    **given: Any,
) -> argparse.Action:
    """The option of a declared setting (autotune.settings); `given` changes what this command
    takes (help, default, required, metavar, type)."""
    setting = SETTINGS[name]
    options: dict[str, Any] = {"default": setting.default}
    if setting.kind is FLAG:
        options["action"] = "store_true"
    else:
        options["action"] = "append" if setting.repeated else "store"
        if setting.kind is not TEXT:
            options["type"] = _reader(setting.kind)
        if setting.metavar:
            options["metavar"] = setting.metavar
        if setting.choices is not None:
            options["choices"] = setting.choices()
    if callable(setting.help):
        options["help"] = _LateHelp(lambda: _escaped(help_of(setting)))
    else:
        options["help"] = _escaped(help_of(setting))
    if "help" in given:
        given["help"] = _escaped(given["help"])
    options.update(given)
    if options["action"] in ("store_true", "append"):
        options.pop("type", None)
    return parser.add_argument(setting.flag, **options)


def add_settings(parser: argparse.ArgumentParser, *names: str) -> None:
    for name in names:
        add_setting(parser, name)


def _escaped(text: str) -> str:
    return text.replace("%", "%%")


def shape_arg(text: str) -> Shape:
    try:
        return parse_shape(text)
    except ShapeError as exc:
        raise UsageError(f"--shape: {exc}") from None


def positive_int(text: str) -> int:
    value = strict_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = strict_int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


MAX_SEED = 2**32 - 1  # the samplers' (numpy's) seed range
# Worker processes on one machine: beyond a few per core they only contend for it (and a
# mistyped count would spawn processes without end).
MAX_WORKERS = min(256, 4 * (os.cpu_count() or 1))


MAX_CP_SAT_SEED = 2**31 - 1  # CP-SAT's random_seed is a 32-bit signed integer


def seed_int(text: str) -> int:
    """A sampler's seed, 0 to 2**32 - 1."""
    return _in_range(strict_int(text), MAX_SEED, "2**32 - 1")


def cp_sat_seed(text: str) -> int:
    """CP-SAT's seed, 0 to 2**31 - 1."""
    return _in_range(strict_int(text), MAX_CP_SAT_SEED, "2**31 - 1")


def _in_range(value: int, most: int, named: str) -> int:
    if not 0 <= value <= most:
        raise argparse.ArgumentTypeError(f"must be between 0 and {most} ({named}), got {value}")
    return value


def worker_count(text: str) -> int:
    value = positive_int(text)
    if value > MAX_WORKERS:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_WORKERS} (4 per CPU, at most 256), got {value}"
        )
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def slots_list(text: str) -> list[int]:
    """'64' or '16,32,64'."""
    try:
        values = [strict_int(part) for part in text.split(",") if part.strip()]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"slots must be integers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"slots must be positive integers, got {text!r}")
    return values


def schedule_list(text: str | None) -> list[ChapterSchedule]:
    """--schedules: 'BIxBJ:BUFFERS,...' (None: the chapter's whole sweep)."""
    from simcore.ga1.schedules import (  # numpy's programs
        ScheduleError,
        chapter_sweep,
        parse_schedule,
    )

    if text is None:
        return chapter_sweep()
    try:
        found = [parse_schedule(part) for part in text.split(",") if part.strip()]
    except ScheduleError as exc:
        raise UsageError(f"--schedules: {exc}") from None
    if not found:
        raise UsageError(f"--schedules {text!r} names no schedule")
    labels = [repr(s) for s in found]
    if len(set(labels)) < len(labels):
        raise UsageError(f"--schedules {text!r} names a schedule twice")
    return found


def default_out(
    folder: Path,
    shape: Shape,
    machines: Sequence[Any],
    schedules: Sequence[object],
    extra: Mapping[str, object] | None = None,
) -> Path:
    """A table's default file, named by everything it depends on: the shape and scratchpad
    sizes in words, the rest (machines, schedules, ...) as a digest, so that runs on other
    machines never replace each other's tables."""
    identity = {
        "machines": [m.key() for m in machines],
        "schedules": [repr(s) for s in schedules],
        **(extra or {}),
    }
    digest = hashlib.sha1(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:8]
    slots = "-".join(f"s{s}" for s in dict.fromkeys(m.slots for m in machines))
    return folder / f"{shape}-{slots}-{digest}.parquet"


def add_source(parser: argparse.ArgumentParser) -> None:
    """The arguments of every command that reads a study's results."""
    parser.add_argument(
        "path_or_study",
        metavar="PATH_OR_STUDY",
        help="a study name, a results/<study>/ folder or a parquet file autotune wrote",
    )
    add_setting(
        parser,
        "storage",
        help="the study's storage: a journal path or an RDB URL "
        "(default results/<study>/study.journal, or study.db)",
    )
    add_results(parser)


def add_shape(parser: argparse.ArgumentParser, required: bool = True) -> None:
    add_setting(parser, "shape", required=required)


def add_machine(parser: argparse.ArgumentParser, slots: bool = True) -> None:
    if slots:
        add_setting(parser, "slots")
    add_setting(parser, "machine")


def add_results(parser: argparse.ArgumentParser) -> None:
    add_setting(parser, "results")


def add_json(
    parser: argparse.ArgumentParser, what: str = "one JSON object per row instead of the table"
) -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what}")


def machine_text(overrides_text: str | None, extra: dict[str, int | None]) -> str:
    """--machine with the flags that say the same (--slots N is slots=N): each key given once;
    a flag that repeats a --machine key with another value is an error."""
    text = overrides_text if overrides_text is not None else ""
    if overrides_text is not None and not text.strip(" ,"):
        raise UsageError("--machine is empty: give KEY=VALUE pairs, or leave it out")
    items = [part.strip() for part in text.split(",") if part.strip()]
    given: dict[str, str] = {}
    for item in items:
        key, _, value = item.partition("=")
        if key.strip() in given:
            raise UsageError(f"--machine gives {key.strip()} twice")
        given[key.strip()] = value.strip()
    for key, number in extra.items():
        if number is None:
            continue
        if key in given and given[key] != str(number):
            flag = "--" + key.replace("_", "-")
            raise UsageError(
                f"{flag} {number} and --machine {key}={given[key]} disagree: give it once"
            )
        if key not in given:
            items.append(f"{key}={number}")
    return ",".join(items)


def machine_flags(oracle: Oracle, overrides_text: str | None, **extra: int | None) -> str:
    """--machine with the flags that name one of the oracle's machine keys, as one text."""
    keys = set(oracle.default_machine().as_dict())
    for key, value in extra.items():
        if value is not None and key not in keys:  # a flag the oracle would ignore
            raise UsageError(
                f"--{key.replace('_', '-')} {value}: the {oracle.name} oracle's machine has no {key} "
                f"(its parameters: {', '.join(sorted(keys))})"
            )
    return machine_text(overrides_text, {k: v for k, v in extra.items() if k in keys})


def build_machine(oracle: Oracle, overrides_text: str | None, **extra: int | None) -> Any:
    """The oracle's machine of --machine and the flags that name one of its keys."""
    text = machine_flags(oracle, overrides_text, **extra)
    try:
        return oracle.parse_machine(text)
    except ValueError as exc:
        raise UsageError(f"--machine: {exc}") from None


def check_stdout(args: argparse.Namespace) -> None:
    """`--out -` writes the output file to standard output: `--json` lines would mix with it."""
    if str(getattr(args, "out", None)) == "-" and getattr(args, "json", False):
        raise UsageError("--out - and --json both write standard output: give one")
