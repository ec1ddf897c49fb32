"""GA-1 programs as text (simcore/ga1/asm.py): the text parses back into the same program, for
random programs of every opcode and for generated schedules; each line is the chapter listing's
own instruction tuple, so the listing runs the text to the same cycle count."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore import Machine, Program, ProgramError, Shape, simulate
from simcore.ga1.asm import from_text, to_text, tuples
from simcore.ga1.generator import default_params, general
from simcore.ga1.schedules import blocked
from tests.helpers.examples import examples

OPS = ("load", "store", "zero", "mxu", "vop", "exp", "vscale", "rowred", "bcastcol", "masklen")


@st.composite
def instructions(draw: st.DrawFn) -> tuple[Any, ...]:
    slot = st.integers(0, 7)
    op = draw(st.sampled_from(OPS))
    if op in ("load", "store"):
        return (
            op,
            draw(slot),
            draw(st.sampled_from(["A", "B", "C", "scores_1"])),
            draw(st.integers(0, 40)),
            draw(st.integers(0, 40)),
        )
    if op == "zero":
        return (op, draw(slot))
    if op == "mxu":
        return (op, draw(slot), draw(slot), draw(slot))
    if op == "vop":
        func = draw(st.sampled_from(["add", "sub", "mul", "div", "max", "relu", "neg"]))
        second = draw(st.one_of(st.none(), slot)) if func in ("relu", "neg") else draw(slot)
        return (op, func, draw(slot), draw(slot), second)
    if op in ("exp", "bcastcol"):
        return (op, draw(slot), draw(slot))
    if op == "vscale":
        return (op, draw(slot), draw(slot), draw(st.floats(-1e6, 1e6, allow_nan=False)))
    if op == "rowred":
        return (op, draw(st.sampled_from(["sum", "max"])), draw(slot), draw(slot))
    return (op, draw(slot), draw(st.integers(-1, 9)), draw(st.integers(-1, 9)))


def same(a: Program, b: Program) -> bool:
    return bool(
        np.array_equal(a.code, b.code)
        and a.tensors == b.tensors
        and np.array_equal(a.consts, b.consts)
    )


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(instructions(), max_size=30))
def test_text_parses_back_into_the_same_program(program: list[tuple[Any, ...]]) -> None:
    original = Program.from_tuples(program)
    text = to_text(original)
    assert len(text.splitlines()) == len(program)  # one instruction per line
    assert same(from_text(text), original)
    assert tuples(text) == original.to_tuples()  # each line is the listing's tuple


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(1, 48), st.integers(1, 48), st.integers(1, 48), st.sampled_from([8, 16, 64]))
def test_generated_schedules_round_trip(m: int, k: int, n: int, slots: int) -> None:
    shape, machine = Shape(m, k, n), Machine(slots=slots)
    program = general(shape, machine, default_params(shape, machine))
    text = to_text(program)
    assert same(from_text(text), program)
    assert simulate(machine, from_text(text)).cycles == simulate(machine, program).cycles


def test_comments_blank_lines_and_errors() -> None:
    text = "# a header\n\nload 0 A 0 0   # the first tile\nzero 1\nmxu 1 0 0\nstore 1 C 0 0\n"
    assert tuples(text) == [
        ("load", 0, "A", 0, 0),
        ("zero", 1),
        ("mxu", 1, 0, 0),
        ("store", 1, "C", 0, 0),
    ]
    for bad, message in (
        ("jump 3", "line 1: unknown instruction 'jump'"),
        ("zero 0\nmxu 1 2", "line 2: malformed"),
        ("load -1 A 0 0", "negative"),
        ("vop add 1 2 -", "needs two operands"),
    ):
        with pytest.raises(ProgramError, match=message):
            from_text(bad)


def test_the_listing_runs_the_text_to_the_same_cycles(reference_ga1: Any) -> None:
    """Differential: the exported text of a chapter schedule and of a generated one, run by the
    chapter's own Sim, takes exactly the cycles simcore reports (and computes C = A B)."""
    ga = reference_ga1.ga
    rng = np.random.default_rng(0)
    for shape, slots, build in (
        (Shape(32, 24, 40), 16, lambda s, mc: blocked(s, mc, 2, 2, 2, "row")),
        (Shape(40, 32, 24), 64, lambda s, mc: general(s, mc, default_params(s, mc))),
    ):
        machine = Machine(slots=slots)
        text = to_text(build(shape, machine))
        a = rng.integers(-3, 4, size=(shape.m, shape.k)).astype(float)
        b = rng.integers(-3, 4, size=(shape.k, shape.n)).astype(float)
        dram = {"A": a.tolist(), "B": b.tolist(), "C": [[0.0] * shape.n for _ in range(shape.m)]}
        sim = ga.Sim(ga.Machine(**machine.as_dict()), dram).run(tuples(text))
        assert sim.cycles == simulate(machine, from_text(text)).cycles
        assert np.array_equal(np.array(sim.dram["C"]), a @ b)
