"""What every benchmark shares: where things are, the CPU clock, interleaved runs, markdown tables,
peers' environments and the command line (each benchmark's `--quick` mode).

A benchmark is a module run from the checkout's root as `python -m benchmarks.TOPIC.NAME`; it
builds its parser with `parser(__doc__, quick={...})`, whose `--quick` replaces the named options
by small values (a smoke test of the benchmark's code, in seconds: its figures mean nothing)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import resource
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "simcore" / "data"  # tables the benchmarks of the optimum read and write
RESULTS = ROOT / "results"  # where a benchmark writes what it keeps (ignored by git)
PEERS = Path(os.environ.get("AUTOTUNE_PEERS", "/work/peers"))  # peers' own virtualenvs


# --- the command line ---------------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """An ArgumentParser with `--quick`: the options in `quick` take those values."""

    def __init__(self, description: str, quick: Mapping[str, Any]) -> None:
        super().__init__(
            description=description, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        self.quick = dict(quick)
        self.add_argument(
            "--quick",
            action="store_true",
            help="a smoke test in seconds: "
            + (", ".join(f"{k.replace('_', '-')}={v}" for k, v in self.quick.items()) or "as is"),
        )

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed = super().parse_args(args, namespace)
        if parsed.quick:
            for name, value in self.quick.items():
                if not hasattr(parsed, name):
                    raise AssertionError(f"--quick sets {name!r}, which is not an option")
                setattr(parsed, name, value)
        return parsed


def parser(doc: str | None, quick: Mapping[str, Any] | None = None) -> Parser:
    """The benchmark's parser: its docstring as help, and `--quick` setting `quick`'s options."""
    return Parser(doc or "", quick or {})


def run(main: Callable[[list[str] | None], int | None]) -> None:
    """`sys.exit(main())`, the way every benchmark ends."""
    sys.exit(main(None) or 0)


# --- clocks -------------------------------------------------------------------------------------


@dataclass
class Clock:
    seconds: float = 0.0


@contextlib.contextmanager
def cpu() -> Iterator[Clock]:
    """CPU seconds of this process spent in the block (time.process_time)."""
    clock, started = Clock(), time.process_time()
    try:
        yield clock
    finally:
        clock.seconds = time.process_time() - started


def cpu_of(function: Callable[[], Any]) -> float:
    """CPU seconds of one call."""
    with cpu() as clock:
        function()
    return clock.seconds


def children_cpu() -> float:
    """CPU seconds of every child process waited for so far (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def interleaved(
    measures: Mapping[str, Callable[[], float]], repeats: int
) -> dict[str, list[float]]:
    """Each measure `repeats` times, taking turns (a, b, a, b, ...), so that a change in the
    machine's load falls on every side alike. Each callable returns the figure of one run."""
    found: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(repeats):
        for name, measure in measures.items():
            found[name].append(measure())
    return found


def best(values: Sequence[float]) -> float:
    return min(values)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


# --- tables -------------------------------------------------------------------------------------


def table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool] | None = None
) -> str:
    """A markdown table; numbers align right unless `right` says otherwise."""
    cells = [[str(c) for c in row] for row in rows]
    if right is None:
        right = [
            all(_numeric(row[i]) for row in rows) if rows else False for i in range(len(headers))
        ]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right))
            + " |"
        )

    rule = (
        "|"
        + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2)) for w, r in zip(widths, right))
        + "|"
    )
    return "\n".join([line(list(headers)), rule, *(line(row) for row in cells)])


def _numeric(value: object) -> bool:
    if isinstance(value, (int, float)):
        return True
    text = str(value).replace(",", "").replace("%", "").replace("x", "").replace("s", "").strip()
    try:
        float(text)
    except ValueError:
        return False
    return True


# --- peers --------------------------------------------------------------------------------------


def peer_python(name: str, given: Path | str | None = None) -> Path | None:
    """The Python of a peer's own virtualenv: `given`, else <PEERS>/<name>-venv; None if absent."""
    python = Path(given) if given else PEERS / f"{name}-venv" / "bin" / "python"
    return python if python.is_file() else None


def skip(reason: str) -> int:
    """Say why the benchmark (or a part of it) does not run here, and succeed."""
    print(f"skipped: {reason}", flush=True)
    return 0


# --- the chapter's listings (a speed baseline; never imported by the package) -------------------

REFERENCE = ROOT.parent / "shared" / "reference" / "ga1"


def reference_listings() -> tuple[ModuleType, ModuleType] | None:
    """The chapter's `ga` and `schedules` listings, or None where they are absent. Its
    schedules module imports `ga` by that name, so the folder is on sys.path while it loads."""
    if not (REFERENCE / "ga.py").is_file():
        return None
    sys.path.insert(0, str(REFERENCE))
    try:
        return importlib.import_module("ga"), importlib.import_module("schedules")
    finally:
        sys.path.remove(str(REFERENCE))
