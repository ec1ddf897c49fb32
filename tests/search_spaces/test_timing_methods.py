"""The GA-1 families' schedules under both timing methods, and their reduced verification: the
periodic method gives full simulation's figures on every family's seed point, says how it timed
them, and a seed point of an LLM layer too large to run verifies on its reduced shape."""

from __future__ import annotations

import pytest

from search_spaces.base import GA1Family
from search_spaces.registry import available, get
from simcore.ga1.engine import FULL, PERIODIC, TimingLimitError
from simcore.ga1.machine import Machine
from simcore.ga1.reduced import reduced_generator
from simcore.shape import Shape

FIGURES = ("cycles", "busy", "loads", "stores", "products", "tiles_moved")


def ga1_families() -> list[GA1Family]:
    return [f for name in available() for f in get(name).families if isinstance(f, GA1Family)]


def figures(timing: object) -> tuple[object, ...]:
    return tuple(getattr(timing, name) for name in FIGURES)


@pytest.mark.parametrize("family", ga1_families(), ids=lambda f: f.name)
def test_every_seed_point_times_alike_either_way(family: GA1Family) -> None:
    shape, machine = Shape(256, 192, 320), Machine(slots=32)
    generator = family.generator(family.seed_points(shape, machine)[0], shape, machine)
    periodic, full = generator.timing(), generator.timing(FULL)
    assert periodic.method in (PERIODIC, FULL) and full.method == FULL
    assert figures(periodic) == figures(full)
    with pytest.raises(TimingLimitError):
        generator.timing(FULL, max_products=1000)


@pytest.mark.parametrize("family", ga1_families(), ids=lambda f: f.name)
def test_an_llm_layer_verifies_on_its_reduced_shape(family: GA1Family) -> None:
    shape, machine = Shape(4096, 4096, 11008), Machine(slots=32)
    generator = family.generator(family.seed_points(shape, machine)[0], shape, machine)
    assert generator.timing().method == PERIODIC
    small = reduced_generator(generator)
    assert small.products < generator.products // 1000 and small.verify().ok
