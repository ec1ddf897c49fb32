"""What callers ask of a family, answered by the family itself (no caller switches on its type):
what it measures, which machine it carries, whether it has a GA-1 program, its reference and
bound, its notes, how it verifies. Every registered family, on the same questions."""
from __future__ import annotations

import pytest

from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.shape import Shape

from search_spaces.base import EXACT, LEVELS, Family, chapter_best
from search_spaces.registry import available, find_family, get

from autotune.search.problem import DIRECTIONS

SHAPE, MACHINE = Shape(32, 24, 40), Machine(slots=16)


def registered() -> list[Family]:
    return [family for name in available() for family in get(name).families]


@pytest.mark.parametrize("family", registered(), ids=lambda f: f.name)
def test_every_family_answers_the_same_questions(family: Family) -> None:
    assert family.oracle and family.measures[0] == "cycles" and set(family.default_objectives) <= set(family.measures)
    assert set(family.measures) <= set(DIRECTIONS)
    assert find_family(family.name).name == family.name  # a recorded point can be rebuilt by name
    point = family.seed_points(SHAPE, MACHINE)[0]
    record = family.machine_record(MACHINE)
    assert family.machine_from_record(record) == (MACHINE if record else Machine())
    program = family.program(point, SHAPE, MACHINE)
    assert program is None or isinstance(program, Program)
    assert (program is not None) == (family.oracle == "ga1")
    reference, bound = family.reference(SHAPE, MACHINE), family.bound(SHAPE, MACHINE)
    if family.oracle == "ga1":
        assert reference == chapter_best(SHAPE, MACHINE) and bound is not None and bound <= reference[0]  # type: ignore[index]
        assert family.evaluate(point, SHAPE, MACHINE)["cycles"] >= bound
    verdict = family.verify(point, SHAPE, MACHINE)
    assert verdict.ok and verdict.level in LEVELS and verdict.verified == (verdict.level == EXACT)
    assert family.describe(point, SHAPE, MACHINE)


def test_notes_say_when_a_shape_is_padded() -> None:
    ga1 = find_family("general")
    assert ga1.notes(Shape(32, 32, 32), MACHINE) == []
    (note,) = ga1.notes(Shape(100, 100, 100), MACHINE)
    assert "104x104x104" in note and "12.5%" in note
    assert find_family("systolic").notes(Shape(100, 100, 100), MACHINE) == []  # an array has no tile edge to pad to
