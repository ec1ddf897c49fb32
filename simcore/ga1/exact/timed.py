"""The fastest GA-1 schedule of a tiny instance, by an exhaustive search over programs.

The search appends instructions of the exact model's scope (see `simcore.ga1.exact`) one at a
time and times each by the timing rule (timing.py): a product whose tiles are resident, a load
of an operand still read later or the reload of a partly stored accumulator, a zero, a store.
Each instruction starts no earlier than the one before it; every program sorted by start keeps
its timing, so every program is visited with its own cycles. Rows, columns and k steps are
touched in order (renaming them keeps the timing). A branch is cut by a lower bound on its
completions, or when a state of the same tiles and accumulators, searched to the end, was no
later in every engine and slot (the timing rule is monotone). docs/exact.md has the argument.

`search_below(shape, machine, below)` returns the fastest schedule under `below` cycles and
whether the search ended (then nothing faster exists); `max_nodes` and `time_limit` stop it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from simcore.ga1.exact.timed_state import Search, Stop
from simcore.ga1.machine import Machine
from simcore.ga1.program import MATMUL_TENSORS, Program
from simcore.shape import Shape

# The largest instance searched by default, in tile products (2 x 2 x 3 tiles).
MAX_PRODUCTS = 12
MAX_NODES = 20_000_000


@dataclass(frozen=True)
class Searched:
    """What the search found: the fastest program under the limit (None: none found), its
    cycles as the search timed them, and whether the search ended (`complete`): then no
    schedule of the scope is faster than `cycles`, or than the limit when nothing was found."""

    cycles: int | None
    program: Program | None
    complete: bool
    nodes: int


def search_below(
    shape: Shape,
    machine: Machine,
    below: int,
    max_nodes: int = MAX_NODES,
    time_limit: float | None = None,
    stop: Callable[[], bool] | None = None,
) -> Searched:
    """The fastest schedule of the scope with fewer than `below` cycles, by exhaustive search;
    `complete` is False when `max_nodes` states were visited, `time_limit` wall seconds passed or
    `stop()` turned true first (then `cycles` is only the best found)."""
    deadline = None if time_limit is None else time.monotonic() + time_limit
    search = Search(shape, machine, below, (max_nodes, deadline), stop)
    try:
        search.run()
        complete = True
    except Stop:
        complete = False
    if search.found is None:
        return Searched(None, None, complete, search.nodes)
    program = Program.from_rows(search.found, MATMUL_TENSORS)
    return Searched(search.best, program, complete, search.nodes)
