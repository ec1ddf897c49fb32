"""The size limits' flags: `--max-products` and `--max-memory` as the run's WorkLimits, and what
the size guard says printed on stderr. The guard itself is the oracle's
(autotune.oracles.capabilities.SizeGuard): it estimates the work before anything is generated and
refuses in one line what would take too long or exhaust the machine's memory."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from autotune.cli.args import add_setting
from autotune.oracles.base import Oracle
from autotune.oracles.capabilities import SizeGuard, Work, WorkLimits, default_memory
from simcore.shape import Shape


def add_limits(parser: argparse.ArgumentParser) -> None:
    add_setting(parser, "max_products")
    add_memory_limit(parser)


def add_memory_limit(parser: argparse.ArgumentParser) -> None:
    add_setting(parser, "max_memory")


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
