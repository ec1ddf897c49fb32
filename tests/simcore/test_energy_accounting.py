"""The accounting option of the systolic energy: the physical one is the default, ZigZag's charges
the same counts with more (never less) energy, only where a reduction runs over the array's rows,
and its extra line items are exactly the conventions simcore.energy.peer names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from simcore.energy import (
    PHYSICAL,
    ZIGZAG,
    AccountingError,
    accounting,
    load_technology,
    systolic_cost,
    systolic_cost_of,
    systolic_counts,
)
from simcore.energy.peer import zigzag_gap_terms
from simcore.systolic.closed_form import cycles as closed_form_cycles
from tests.helpers.examples import examples
from tests.helpers.systolic_strategies import designs, shapes

TECH = load_technology()


def test_accountings_by_name() -> None:
    assert accounting("physical") is PHYSICAL and accounting("zigzag") is ZIGZAG
    with pytest.raises(AccountingError, match="accounting='timeloop'"):
        accounting("timeloop")


@settings(max_examples=examples(60), deadline=None)
@given(designs(max_side=6), shapes(30, 30, 30))
def test_zigzags_accounting_adds_exactly_its_conventions(design, shape) -> None:  # type: ignore[no-untyped-def]
    counts = systolic_counts(design, shape, closed_form_cycles(design, shape), TECH)
    default = systolic_cost(design, counts, TECH)
    physical = systolic_cost(design, counts, TECH, PHYSICAL)
    zigzag = systolic_cost(design, counts, TECH, ZIGZAG)
    assert default == physical
    assert systolic_cost_of(design, shape, TECH) == physical
    extra = zigzag.energy_pj - physical.energy_pj
    assert extra == pytest.approx(sum(zigzag_gap_terms(counts, TECH).values()), abs=1e-6)
    assert (extra > 0) == (design.dataflow != "os")
    assert zigzag.breakdown()["compute"] == physical.breakdown()["compute"]
    assert zigzag.breakdown()["off_chip"] == physical.breakdown()["off_chip"]
    added = {item.name for c in zigzag.categories for item in c.items} - {
        item.name for c in physical.categories for item in c.items
    }
    assert all(name.endswith("(zigzag)") for name in added)
    assert zigzag.area == physical.area
