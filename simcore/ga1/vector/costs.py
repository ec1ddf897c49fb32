"""The energy of a vector program, from its timing and its instructions counted by kind (read
off the timing tree: a repeat's body counted once and multiplied), with the technology table's
vector and special-function energies (simcore/energy/ga1.py)."""

from __future__ import annotations

from simcore.energy.cost import Cost
from simcore.energy.ga1 import Ga1Counts, Kind, ga1_cost, ga1_counts_of_kinds, instruction_kinds
from simcore.energy.technology import Technology, default_technology
from simcore.ga1.machine import Machine
from simcore.ga1.timing import Timing
from simcore.ga1.vector.emit import Chunk, Tree


def tree_kinds(tree: Tree, times: int = 1, into: dict[Kind, int] | None = None) -> dict[Kind, int]:
    """Instructions by kind in the program the tree stands for."""
    found: dict[Kind, int] = {} if into is None else into
    for node in tree:
        if isinstance(node, Chunk):
            for kind, count in instruction_kinds(node.rows).items():
                found[kind] = found.get(kind, 0) + times * count
        else:
            tree_kinds(node.body, times * node.count, found)
    return found


def vector_counts(timing: Timing, tree: Tree) -> Ga1Counts:
    """The counts ga1_cost takes: cycles from the timing, instructions from the tree."""
    return ga1_counts_of_kinds(timing, tree_kinds(tree))


def vector_cost(
    machine: Machine, timing: Timing, tree: Tree, tech: Technology | None = None
) -> Cost:
    """Energy and area of the program (the default technology table when None)."""
    return ga1_cost(machine, vector_counts(timing, tree), tech or default_technology())
