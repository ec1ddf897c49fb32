"""The strips family: registered but not a default, shared parameters with the general family's
domains, canonical points that build the very same program, and exact verification."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from autotune.oracles.ga1 import ORACLE as GA1
from search_spaces import registry
from search_spaces.domains import Choice
from search_spaces.general import GeneralFamily
from search_spaces.strips import StripsFamily
from simcore.ga1.machine import Machine
from simcore.shape import Shape
from tests.helpers.examples import examples

FAMILY = StripsFamily()


def draw_point(data: st.DataObject, shape: Shape) -> dict[str, object]:
    point = {}
    for param in FAMILY.params(shape, 8):
        domain = param.domain
        point[param.name] = (
            data.draw(st.sampled_from(domain.options))
            if isinstance(domain, Choice)
            else data.draw(st.integers(domain.low, domain.high))
        )
    return point


def test_registered_and_searched_by_default_through_its_delayed_variant() -> None:
    assert "strips" in registry.available() and "strips" not in registry.LEGACY_SPACES
    assert "strips_delayed" in [f.name for f in registry.families(registry.DEFAULT_SPACES)]
    assert registry.find_family("strips").name == "strips"
    shape = Shape(100, 40, 72)
    registry.check_shared_params(
        {"general": GeneralFamily().params(shape, 8), "strips": FAMILY.params(shape, 8)}
    )
    shared = {p.name for p in GeneralFamily().params(shape, 8)} & {
        p.name for p in FAMILY.params(shape, 8)
    }
    assert shared == {"partition", "tail", "lookahead", "store_first"}


def test_every_seed_fits_and_verifies_at_128() -> None:
    shape = Shape(128, 128, 128)
    for slots in (16, 32, 64):
        machine = Machine(slots=slots)
        for point in FAMILY.seed_points(shape, machine):
            assert FAMILY.violation(point, shape, machine) == 0
            assert GA1.verify(FAMILY, point, shape, machine).verified
            estimate = FAMILY.estimate(point, shape, machine)
            assert estimate is not None and estimate > 0


def test_a_reserve_without_room_is_graded_over_the_limit() -> None:
    shape, machine = Shape(64, 64, 64), Machine(slots=4)
    point = {**FAMILY.seed_points(shape, machine)[0], "reserve": 5}
    assert (
        FAMILY.violation(point, shape, machine) == 3
    )  # a 1 x 1 block with reserve 5 needs 7 slots
    assert FAMILY.estimate(point, shape, machine) is None


def test_a_large_scratchpad_takes_the_widest_reserve_and_longest_protection() -> None:
    # The ranges reach past the winners seen at 40 to 56 slots (reserves 10-13, protections 44-52):
    # the top of each builds a schedule that fits and verifies there.
    shape, machine = Shape(96, 64, 128), Machine(slots=48)
    domains = {p.name: p.domain for p in FAMILY.params(shape, machine.T)}
    assert domains["reserve"].high >= 13 and domains["protect"].high >= 52
    point = {
        **FAMILY.seed_points(shape, machine)[0],
        "reserve": domains["reserve"].high,
        "lookahead": 32,
        "protect": domains["protect"].high,
    }
    assert FAMILY.violation(point, shape, machine) == 0
    assert GA1.verify(FAMILY, point, shape, machine).verified


@settings(max_examples=examples(60), deadline=None)
@given(
    m=st.integers(1, 80),
    k=st.integers(1, 40),
    n=st.integers(1, 80),
    slots=st.integers(3, 40),
    data=st.data(),
)
def test_strips_canonical_point_builds_the_same_program(
    m: int, k: int, n: int, slots: int, data: st.DataObject
) -> None:
    shape, machine = Shape(m, k, n), Machine(slots=slots)
    point = draw_point(data, shape)
    canonical = FAMILY.canonical(point, shape, machine.T)
    assert FAMILY.canonical(canonical, shape, machine.T) == canonical
    assert FAMILY.slots_needed(canonical, shape, machine) == FAMILY.slots_needed(
        point, shape, machine
    )
    if FAMILY.slots_needed(point, shape, machine) <= machine.slots:
        assert np.array_equal(
            FAMILY.generator(canonical, shape, machine).program().code,
            FAMILY.generator(point, shape, machine).program().code,
        )
