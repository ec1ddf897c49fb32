"""What callers ask of an oracle, answered by the oracle itself (no caller switches on its
kind): what it measures, which machine it records, its capabilities (a program, a reference, a
size guard, notes, ...), how it verifies. Every installed oracle and each of its families."""

from __future__ import annotations

from pathlib import Path

import pytest

from autotune import oracles
from autotune.oracles.capabilities import (
    EnergyAndArea,
    ImportedSchedules,
    MachineSearch,
    Notes,
    Programs,
    Reference,
    Report,
    SizeGuard,
    TimingMethods,
)
from autotune.oracles.measures import objectives
from search_spaces.base import EXACT, LEVELS
from simcore.shape import Shape

SHAPE = Shape(32, 24, 40)
ROOT = Path(__file__).resolve().parents[3]


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
    names = [m.name for m in objectives(oracle.measures)]
    assert names[0] == "cycles" and set(oracle.default_objectives) <= set(names)
    assert oracles.family_of(family.name) == (oracle, family)  # a recorded point is rebuilt by name
    point = family.seed_points(SHAPE, machine)[0]
    record = oracle.machine_record(machine)
    assert oracle.machine_from_record(record) == machine
    programs, guard = oracle.capability(Programs), oracle.capability(SizeGuard)
    if programs is not None:
        assert programs.program_text(programs.program(family, point, SHAPE, machine))
    assert guard is None or guard.work(SHAPE, machine) is not None
    hand = oracle.capability(Reference)
    reference = hand.reference(SHAPE, machine) if hand is not None else None
    bound = oracle.bound(SHAPE, machine)
    metrics = oracle.evaluate(family, point, SHAPE, machine)
    # Every objective it declares is measured (a breakdown's category may be absent).
    assert all(m.key in metrics for m in objectives(oracle.measures) if not m.machine_only)
    if bound is not None:
        assert metrics["cycles"] >= bound  # type: ignore[operator]
    if reference is not None and bound is not None:
        assert bound <= reference[0]
    verdict = oracle.verify(family, point, SHAPE, machine)
    assert verdict.ok and verdict.level in LEVELS and verdict.verified == (verdict.level == EXACT)
    report = oracle.capability(Report)
    assert report is not None and report.report(family, point, SHAPE, machine)


def test_each_oracle_has_the_capabilities_it_declares() -> None:
    everything = (
        SizeGuard,
        EnergyAndArea,
        TimingMethods,
        Report,
        Programs,
        Reference,
        Notes,
        MachineSearch,
        ImportedSchedules,
    )
    ga1, systolic = oracles.get("ga1"), oracles.get("systolic")
    assert all(ga1.capability(kind) is ga1 for kind in everything)
    assert {k for k in everything if systolic.capability(k) is not None} == {EnergyAndArea, Report}


def test_notes_say_when_a_shape_is_padded() -> None:
    ga1 = oracles.get("ga1").capability(Notes)
    assert ga1 is not None
    machine = oracles.get("ga1").parse_machine("slots=16")
    assert ga1.notes(Shape(32, 32, 32), machine) == []
    (note,) = ga1.notes(Shape(100, 100, 100), machine)
    assert "104x104x104" in note and "12.5%" in note
    assert oracles.get("systolic").capability(Notes) is None  # no tile edge to pad to


def test_an_unknown_oracle_is_a_one_line_error() -> None:
    with pytest.raises(oracles.OracleError, match="unknown oracle 'nosuch'"):
        oracles.get("nosuch")


def test_the_built_in_oracles_are_declared_once() -> None:
    """An uninstalled source tree finds the built-in oracles by `BUILT_IN`: pyproject.toml's
    entry points, the same names and objects."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared[oracles.GROUP] == oracles.BUILT_IN
