"""The compiled repeat-tree driver (engine/trees.py): a tree times exactly as its expansion does
under the reference's timing rule, periodically or in full, whatever the chunks and counts."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.timing import run_timing
from simcore.ga1.vector.emit import Chunk, Repeat, Tree, expand
from simcore.ga1.vector.timing import FULL, PERIODIC, time_tree
from tests.helpers.random_programs import EXTENSION_KINDS, TENSORS, draw_instruction

SHAPES = {name: (9, 9) for name in TENSORS}
KINDS = ("load", "load", "store", "zero", "exp", "vscale", "rowred", "masklen", "add", "max")


@st.composite
def trees(draw: st.DrawFn, machine: Machine, depth: int = 3, products: bool = False) -> Tree:
    kinds = KINDS + EXTENSION_KINDS + (("mxu",) if products else ())
    nodes: list[Any] = []
    for _ in range(draw(st.integers(1, 3))):
        if depth > 0 and draw(st.booleans()):
            body = draw(trees(machine, depth - 1, products))
            nodes.append(Repeat(draw(st.integers(1, 40)), body))
        else:
            program = [
                draw_instruction(draw, machine.T, machine.slots, SHAPES, kinds)
                for _ in range(draw(st.integers(1, 8)))
            ]
            nodes.append(Chunk(Program.from_tuples(program).code))
    return tuple(nodes)


@st.composite
def cases(draw: st.DrawFn) -> tuple[Machine, Tree]:
    machine = Machine(
        T=draw(st.sampled_from([2, 4, 8])),
        slots=draw(st.integers(1, 5)),
        dma_setup=draw(st.integers(0, 20)),
        vpu_lanes=draw(st.integers(1, 16)),
        sfu_lanes=draw(st.integers(1, 8)),
    )
    return machine, draw(trees(machine, products=draw(st.booleans())))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_a_tree_times_as_its_expansion(case: tuple[Machine, Tree]) -> None:
    machine, tree = case
    flat = Program(code=np.concatenate(list(expand(tree))))
    want = run_timing(machine, flat)
    for method in (PERIODIC, FULL):
        got = time_tree(machine, tree, method)
        assert (got.cycles, got.busy, got.loads, got.stores, got.products) == (
            want.cycles, want.busy, want.loads, want.stores, want.products,
        ), method  # fmt: skip


def test_a_long_repeat_is_jumped() -> None:
    machine = Machine()
    body = Program.from_tuples(
        [("load", 0, "A", 0, 0), ("exp", 1, 0), ("store", 1, "A", 0, 0)]
    ).code
    tree = (Repeat(10**9, (Chunk(body),)),)
    got = time_tree(machine, tree)
    assert got.method == PERIODIC and got.loads == got.stores == 10**9
    small = run_timing(machine, Program(code=np.concatenate([body] * 50)))
    per = (
        run_timing(machine, Program(code=np.concatenate([body] * 51))).cycles - small.cycles
    )  # the steady period
    assert got.cycles == small.cycles + (10**9 - 50) * per


def _expanded_cycles(machine: Machine, tree: Tree) -> tuple[int, int, int, int]:
    flat = run_timing(machine, Program(code=np.concatenate(list(expand(tree)))))
    return flat.cycles, flat.loads, flat.stores, flat.products


def test_a_repeat_with_products_is_jumped() -> None:
    machine = Machine()
    body = Program.from_tuples(
        [
            ("load", 0, "A", 0, 0),
            ("load", 1, "B", 0, 0),
            ("mxu", 2, 0, 1),
            ("exp", 3, 2),
            ("store", 3, "C", 0, 0),
        ]
    ).code
    tree = (Repeat(400, (Chunk(body),)),)
    got = time_tree(machine, tree)
    assert got.method == PERIODIC
    assert (got.cycles, got.loads, got.stores, got.products) == _expanded_cycles(machine, tree)


def test_an_old_slot_read_by_a_product_after_a_jumped_vector_repeat() -> None:
    # slot 0 is written long before a vector-only repeat; a product reading it after the repeat
    # must not wait for the repeat's base (the matrix unit's free time is part of the base)
    machine = Machine()
    head = Program.from_tuples([("load", 0, "A", 0, 0), ("load", 1, "B", 0, 0)]).code
    body = Program.from_tuples([("load", 2, "A", 0, 0), ("exp", 3, 2)]).code
    product = Program.from_tuples([("mxu", 4, 0, 1)]).code
    store = Program.from_tuples([("store", 4, "C", 0, 0)]).code
    tree = (Chunk(head), Repeat(200, (Chunk(body),)), Repeat(300, (Chunk(product),)), Chunk(store))
    got = time_tree(machine, tree)
    assert (got.cycles, got.loads, got.stores, got.products) == _expanded_cycles(machine, tree)
