"""The size limits' flags: `--max-products` and `--max-memory` as the run's WorkLimits, and what
the size guard says printed on stderr. The guard itself is the oracle's
(autotune.oracles.capabilities.SizeGuard): it estimates the work before anything is generated and
refuses in one line what would take too long or exhaust the machine's memory."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from autotune.cli.strict import strict_float
from autotune.oracles.base import Oracle
from autotune.oracles.capabilities import SizeGuard, Work, WorkLimits, default_memory
from simcore.shape import Shape

MAX_PRODUCTS = 1e18  # far past any limit that could finish; keeps the count an exact integer
MAX_BYTES = float(1 << 50)


def _bytes(text: str) -> int:
    """'8G', '512M', '2000000000'."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    raw = text.strip().upper().removesuffix("B")
    scale = units.get(raw[-1:], 1)
    try:
        value = strict_float(raw[:-1] if raw[-1:] in units else raw) * scale
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a size like 8G or 512M, got {text!r}") from None
    if not math.isfinite(value) or value > MAX_BYTES:
        raise argparse.ArgumentTypeError(f"the memory limit must be at most 1 PB, got {text!r}")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"the memory limit must be positive, got {text!r}")
    return int(value)


def _count(text: str) -> int:
    try:
        number = strict_float(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a number of units of work, got {text!r}"
        ) from None
    if number > MAX_PRODUCTS:
        raise argparse.ArgumentTypeError(f"at most {MAX_PRODUCTS:.0e}, got {text!r}")
    value = int(number)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def add_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-products",
        type=_count,
        default=None,
        metavar="N",
        help="most units of work (tile products) an evaluation simulates in full (default: the "
        "oracle's own, about 20 s of simulation): a larger shape is timed periodically, in "
        "milliseconds, and its schedules that never settle into a period are refused",
    )
    add_memory_limit(parser)


def add_memory_limit(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-memory",
        type=_bytes,
        default=None,
        metavar="SIZE",
        help="refuse work that needs more memory, e.g. 8G (default: half the machine's, at most 16G)",
    )


def limits(args: argparse.Namespace) -> WorkLimits:
    """--max-products and --max-memory as the run's limits (None: the defaults)."""
    return WorkLimits(getattr(args, "max_products", None), getattr(args, "max_memory", None))


def memory(args: argparse.Namespace) -> int:
    return args.max_memory if args.max_memory is not None else default_memory()


def check_work(
    args: argparse.Namespace,
    oracle: Oracle,
    shape: Shape,
    machine: Any,
    verify: bool = True,
    program: bool = False,
) -> Work | None:
    """The oracle's size guard on `shape` (WorkError past the limits: one line, exit status 2),
    and what it says before the first evaluation printed; None for an oracle without one. A
    shape whose counts could pass 64 bits is refused first (SizeError)."""
    oracle.check_size(shape, machine)
    guard = oracle.capability(SizeGuard)
    if guard is None:
        return None
    work = guard.check_work(shape, machine, limits(args), verify, program)
    if work is not None:
        say(guard.notices(shape, work, program))
    return work


def say(notices: list[str]) -> None:
    for line in notices:
        print(f"autotune: {line}", file=sys.stderr, flush=True)
