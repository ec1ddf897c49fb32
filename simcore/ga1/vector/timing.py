"""Timing a vector program's tree exactly, with the compiled engine (simcore/ga1/engine/trees.py
holds the driver and the argument for its jumps).

"full" times every repetition of every chunk; "periodic" jumps whole periods of a repeat once
the machine's state recurs. Both give the full simulation's cycles, busy times and counts.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from simcore.ga1.engine import trees
from simcore.ga1.engine.timing import new_clock, raise_if_bad, timing_of
from simcore.ga1.machine import Machine
from simcore.ga1.program import MXU, WIDTH
from simcore.ga1.timing import Timing
from simcore.ga1.vector.emit import Chunk, Node, Repeat, Tree

PERIODIC, FULL = "periodic", "full"
METHODS: tuple[str, ...] = (PERIODIC, FULL)


@dataclasses.dataclass(frozen=True)
class FlatTree:
    """A tree as the driver's tables: its rows, nodes, children, and its depth."""

    rows: np.ndarray
    nodes: np.ndarray
    children: np.ndarray
    depth: int


def flatten(tree: Tree) -> FlatTree:
    """The driver's tables; a node shared by several bodies is laid out once."""
    rows: list[np.ndarray] = []
    nodes: list[tuple[int, int, int, int]] = []
    children: list[int] = []
    laid_out: dict[int, int] = {}  # id of a node -> its row in nodes
    at = 0

    def lay_out(node: Node) -> int:
        nonlocal at
        known = laid_out.get(id(node))
        if known is not None:
            return known
        index = len(nodes)
        if isinstance(node, Chunk):
            nodes.append((trees.CHUNK, at, node.rows.shape[0], 0))
            rows.append(node.rows)
            at += node.rows.shape[0]
        else:
            nodes.append((trees.REPEAT, node.count, 0, 0))
            inner = [lay_out(child) for child in node.body]
            nodes[index] = (trees.REPEAT, node.count, len(children), len(inner))
            children.extend(inner)
        laid_out[id(node)] = index
        return index

    root = Repeat(1, tree)
    lay_out(root)
    flat = np.concatenate(rows) if rows else np.zeros((0, WIDTH), dtype=np.int64)
    return FlatTree(
        np.ascontiguousarray(flat, dtype=np.int64).reshape(-1),
        np.array(nodes, dtype=np.int64).reshape(-1, 4),
        np.array(children, dtype=np.int64),
        _depth(tree),
    )


def _depth(tree: Tree) -> int:
    return 1 + max((_depth(n.body) for n in tree if isinstance(n, Repeat)), default=0)


def time_tree(machine: Machine, tree: Tree, method: str = PERIODIC) -> Timing:
    """The cycles, busy times and counts of the program the tree stands for."""
    if method not in METHODS:
        raise ValueError(f"unknown timing method {method!r} (use one of {', '.join(METHODS)})")
    flat = flatten(tree)
    clock = new_clock(machine)
    if np.any(flat.rows.reshape(-1, WIDTH)[:, 0] == MXU):
        clock[trees.MXU_IN_BASE] = 1
    levels = flat.depth + 1
    frames = np.zeros((levels, trees.FRAME), dtype=np.int64)
    history = np.zeros((levels, trees.HISTORY, clock.shape[0]), dtype=np.int64)
    when = np.zeros((levels, trees.HISTORY), dtype=np.int64)
    stats = np.zeros(2, dtype=np.int64)
    times = np.zeros((0, 2), dtype=np.int64)
    bad = trees.drive(
        clock, flat.rows, flat.nodes, flat.children, frames, history, when,
        method == PERIODIC, times, stats,
    )  # fmt: skip
    if bad != trees.DONE_OK:
        rows = flat.rows.reshape(-1, WIDTH)
        raise_if_bad(machine, clock, rows[bad:], 0)
    timing = timing_of(clock)
    return dataclasses.replace(timing, method=PERIODIC if stats[trees.JUMPS] else FULL)
