"""Size limits: every command that generates GA-1 programs estimates the work first and refuses,
in one line, what would take too long, exhaust the machine's memory or count past 64 bits
(autotune.oracles.ga1.largest_counts); a large but allowed shape is announced before the first
evaluation, so the run is never silent for long."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING

from autotune.cli.errors import UsageError
from autotune.cli.strict import strict_float
from simcore.ga1.estimate import FULL_SIMULATION_PRODUCTS, SEARCH_FULL_PRODUCTS, Work, estimate
from simcore.ga1.machine import Machine
from simcore.shape import Shape

if TYPE_CHECKING:
    from search_spaces.machine import MachineSpace

# 2**27 tile products (a 4096^3 product in 8 x 8 tiles) take about 20 s to simulate in full.
DEFAULT_MAX_PRODUCTS = FULL_SIMULATION_PRODUCTS
MAX_PRODUCTS = 1e18  # far past any limit that could finish; keeps the count an exact integer
MAX_BYTES = float(1 << 50)
ANNOUNCE_SECONDS = 2.0
ANNOUNCE_ROWS = 1_000_000  # a program this long takes seconds to build and to draw


_compile_announced = (
    False  # the compile notice is printed once per process, not per machine of a sweep
)


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
            f"expected a number of tile products, got {text!r}"
        ) from None
    if number > MAX_PRODUCTS:
        raise argparse.ArgumentTypeError(f"at most {MAX_PRODUCTS:.0e} tile products, got {text!r}")
    value = int(number)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def add_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-products",
        type=_count,
        default=DEFAULT_MAX_PRODUCTS,
        metavar="N",
        help="most tile products an evaluation simulates in full (default "
        f"{DEFAULT_MAX_PRODUCTS:.3g}, about 20 s): a larger shape is timed periodically, in "
        "milliseconds, and its schedules that never settle into a period are refused",
    )
    add_memory_limit(parser)


def add_memory_limit(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-memory",
        type=_bytes,
        default=1 << 30,
        metavar="SIZE",
        help="refuse work whose peak memory, the process's own included, would pass this, e.g. 8G "
        "(default 1G)",
    )


def full_limit(args: argparse.Namespace) -> int | None:
    """--max-products as a plan's limit of products simulated in full: None at the default,
    which leaves each use its own (a search's about a second, `show --timing full`'s the default)."""
    return None if args.max_products == DEFAULT_MAX_PRODUCTS else args.max_products


def _size(count: float) -> str:
    for unit in ("", "K", "M", "G", "T", "P"):
        if count < 1024 or unit == "P":
            return f"{count:.3g} {unit}B"
        count /= 1024
    return f"{count:.3g} PB"


def _duration(seconds: float) -> str:
    for unit, length in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * length:
            return f"{seconds / length:.3g} {unit}"
    return f"{seconds:.2g} s" if seconds >= 1 else f"{seconds * 1e3:.2g} ms"


def check_work(
    args: argparse.Namespace,
    shape: Shape,
    machine: Machine,
    verify: bool = True,
    program: bool = False,
    work: Work | None = None,
) -> Work:
    """Refuse (UsageError, one line) a shape over --max-products or work over --max-memory;
    announce on stderr one that will take a while (`announce_work`). Nothing is generated."""
    work = limit_work(args, shape, machine, verify, program, work)
    announce_work(args, shape, work, program)
    return work


def limit_work(
    args: argparse.Namespace,
    shape: Shape,
    machine: Machine,
    verify: bool = True,
    program: bool = False,
    work: Work | None = None,
) -> Work:
    """`check_work`'s refusal alone. `work`: the estimate, when the caller already has it (a
    family's `work`). A shape whose counts could pass 64 bits is refused first (SizeError)."""
    from autotune.oracles.ga1 import ORACLE as GA1

    GA1.check_size(shape, machine)
    work = work or estimate(shape, machine)
    needs = [("an evaluation", work.evaluation_bytes)]
    if verify:
        needs.append(("a verification", work.verification_bytes))
    if program:
        needs.append(("the program and its timeline", work.program_bytes))
    what, memory = max(needs, key=lambda need: need[1])
    simulated = work.periodic_products if not program else work.products
    if simulated > args.max_products or memory > args.max_memory:
        raise UsageError(
            f"{shape} on {machine.slots} slots (T={machine.T}) needs {work.products:.3g} tile products per evaluation "
            f"(about {_duration(work.evaluation_seconds)} each) and {_size(memory)} for {what}; the limits are "
            f"{args.max_products:.3g} products (--max-products) and {_size(args.max_memory)} (--max-memory)"
        )
    return work


def announce_work(
    args: argparse.Namespace, shape: Shape, work: Work, program: bool = False
) -> None:
    """Say on stderr how an evaluation of `shape` is timed when it will take a while."""
    full = full_limit(args) or SEARCH_FULL_PRODUCTS  # what a search's evaluation simulates in full
    if not program and work.products > full:
        print(
            f"autotune: {shape}: {work.products:.3g} tile products, timed periodically (about "
            f"{_duration(work.periodic_seconds)} each); a schedule that does not settle into a "
            f"period is refused (in full it would take {_duration(work.evaluation_seconds)})",
            file=sys.stderr,
            flush=True,
        )
    elif not program and work.evaluation_seconds >= ANNOUNCE_SECONDS:
        print(
            f"autotune: {shape}: {work.products:.3g} tile products per evaluation, timed "
            f"periodically (about {_duration(work.periodic_seconds)} each); a schedule that does not "
            f"settle into a period is timed in full, about {_duration(work.evaluation_seconds)}",
            file=sys.stderr,
            flush=True,
        )
    if program and work.instructions >= ANNOUNCE_ROWS:
        print(
            f"autotune: {shape}: building the program (up to {work.instructions:.3g} instructions) and its picture "
            f"takes a while at this size",
            file=sys.stderr,
            flush=True,
        )
    announce_compile()


def check_memory(args: argparse.Namespace, shape: Shape, machine: Machine, hint: str = "") -> None:
    """Refuse (UsageError, one line, ending with `hint`) a machine whose verification of `shape`
    needs more than --max-memory: the simulators keep state for every slot, whatever the shape."""
    needs = estimate(shape, machine).verification_bytes
    if needs > args.max_memory:
        raise UsageError(
            f"{shape} on {machine.slots} slots (T={machine.T}) needs {_size(needs)} to run and "
            f"verify a schedule; the limit is {_size(args.max_memory)} (--max-memory){hint}"
        )


def check_searched_machines(
    args: argparse.Namespace, shape: Shape, base: Machine, space: MachineSpace | None
) -> None:
    """With a machine search, `check_memory` on the largest machines it may simulate."""
    if space is None:
        return
    from autotune.run.sizes import reachable_machines

    hint = "; narrow --machine-range slots or --max-scratchpad-words"
    for machine in reachable_machines(base, space):
        check_memory(args, shape, machine, hint)


def announce_compile() -> None:
    """Say so, once per process, when the GA-1 engine is about to be compiled."""
    from simcore.ga1.engine import (
        cache_is_warm,  # numba: loaded by the commands that run the engine
    )

    global _compile_announced
    if not _compile_announced and not cache_is_warm():
        _compile_announced = True
        print(
            "autotune: compiling the GA-1 engine (numba; once per machine, about 16 s)",
            file=sys.stderr,
            flush=True,
        )
