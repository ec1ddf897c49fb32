"""The GA-1 families' timing methods and reduced verification: every evaluation says how it was
timed, full simulation gives the same figures, and a schedule too large to run verifies on its
reduced shape with a SCALED verdict."""
from __future__ import annotations

import pytest

from simcore.ga1.engine import FULL, PERIODIC, TimingLimitError
from simcore.ga1.machine import Machine
from simcore.shape import Shape

from search_spaces.base import SCALED, GA1Family
from search_spaces.registry import available, get

FIGURES = ("cycles", "tiles_moved", "loads", "stores", "mxu_util", "dma_busy", "lower_bound", "slots_needed")


def ga1_families() -> list[GA1Family]:
    return [f for name in available() for f in get(name).families if isinstance(f, GA1Family)]


@pytest.mark.parametrize("family", ga1_families(), ids=lambda f: f.name)
def test_every_evaluation_says_how_it_was_timed(family: GA1Family) -> None:
    shape, machine = Shape(256, 192, 320), Machine(slots=32)
    point = family.seed_points(shape, machine)[0]
    periodic = family.evaluate(point, shape, machine)
    full = family.evaluate(point, shape, machine, timing_method=FULL)
    assert periodic["timing_method"] in (PERIODIC, FULL) and full["timing_method"] == FULL
    assert {k: periodic[k] for k in FIGURES} == {k: full[k] for k in FIGURES}
    with pytest.raises(TimingLimitError):
        family.evaluate(point, shape, machine, timing_method=FULL, max_products=1000)


@pytest.mark.parametrize("family", ga1_families(), ids=lambda f: f.name)
def test_an_llm_layer_verifies_on_its_reduced_shape(family: GA1Family) -> None:
    shape, machine = Shape(4096, 4096, 11008), Machine(slots=32)
    point = family.seed_points(shape, machine)[0]
    assert family.evaluate(point, shape, machine)["timing_method"] == PERIODIC
    verdict = family.verify_reduced(point, shape, machine)
    assert verdict.ok and verdict.level == SCALED and not verdict.verified
    assert "reduced shape" in verdict.detail
