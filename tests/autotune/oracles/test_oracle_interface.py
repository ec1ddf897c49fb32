"""What callers ask of an oracle, answered by the oracle itself (no caller switches on its
kind): what it measures, which machine it records, whether it has a program, its reference and
bound, its notes, how it verifies. Every installed oracle and each of its families, alike."""

from __future__ import annotations

import pytest

from autotune import oracles
from autotune.search.objectives import DIRECTIONS
from search_spaces.base import EXACT, LEVELS
from simcore.shape import Shape

SHAPE = Shape(32, 24, 40)


def cases() -> list[tuple[str, str]]:
    found = []
    for name in ("ga1", "systolic"):
        oracle = oracles.get(name)
        for family in oracle.families((), oracle.default_machine()):
            found.append((name, family.name))
    return found


@pytest.mark.parametrize(("oracle_name", "family_name"), cases())
def test_every_oracle_answers_the_same_questions(oracle_name: str, family_name: str) -> None:
    oracle = oracles.get(oracle_name)
    machine = oracle.parse_machine("")
    family = oracle.family(family_name)
    assert family is not None and family.oracle == oracle.name
    assert oracle.measures[0] == "cycles" and set(oracle.default_objectives) <= set(oracle.measures)
    assert set(oracle.measures) <= set(DIRECTIONS)
    assert oracles.family_of(family.name) == (oracle, family)  # a recorded point is rebuilt by name
    point = family.seed_points(SHAPE, machine)[0]
    record = oracle.machine_record(machine)
    assert oracle.machine_from_record(record) == machine
    program = oracle.program(family, point, SHAPE, machine)
    assert (program is None) == (oracle.work(SHAPE, machine) is None)
    reference, bound = oracle.reference(SHAPE, machine), oracle.bound(SHAPE, machine)
    metrics = oracle.evaluate(family, point, SHAPE, machine)
    if bound is not None:
        assert metrics["cycles"] >= bound  # type: ignore[operator]
    if reference is not None and bound is not None:
        assert bound <= reference[0]
    verdict = oracle.verify(family, point, SHAPE, machine)
    assert verdict.ok and verdict.level in LEVELS and verdict.verified == (verdict.level == EXACT)
    assert oracle.report(family, point, SHAPE, machine)


def test_notes_say_when_a_shape_is_padded() -> None:
    ga1 = oracles.get("ga1")
    machine = ga1.parse_machine("slots=16")
    assert ga1.notes(Shape(32, 32, 32), machine) == []
    (note,) = ga1.notes(Shape(100, 100, 100), machine)
    assert "104x104x104" in note and "12.5%" in note
    systolic = oracles.get("systolic")
    assert (
        systolic.notes(Shape(100, 100, 100), systolic.default_machine()) == []
    )  # no tile edge to pad to


def test_an_unknown_oracle_is_a_one_line_error() -> None:
    with pytest.raises(oracles.OracleError, match="unknown oracle 'nosuch'"):
        oracles.get("nosuch")
