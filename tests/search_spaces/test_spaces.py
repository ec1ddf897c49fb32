"""Search spaces as data: domains Optuna can sample, seeds inside the space, shared parameters
with one domain, the machine space's graded budget, and range parsing."""

from __future__ import annotations

import optuna
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autotune.search.distributions import to_distribution
from search_spaces.domains import Choice, IntRange, Param, grid
from search_spaces.machine import SEARCHABLE, MachineSpace, default_ranges, parse_ranges
from search_spaces.registry import (
    DEFAULT_SPACES,
    SPACE_MODULES,
    SpaceError,
    available,
    check_shared_params,
    families,
    find_family,
    get,
)
from simcore.ga1.machine import Machine
from simcore.shape import Shape
from tests.helpers.examples import examples

SHAPES = [
    Shape(8, 8, 8),
    Shape(32, 32, 32),
    Shape(64, 64, 64),
    Shape(128, 128, 128),
    Shape(100, 40, 72),
]


def all_families() -> list:
    return [family for name in available() for family in get(name).families]


def test_the_default_spaces_are_registered() -> None:
    assert set(DEFAULT_SPACES) <= set(available()) <= set(SPACE_MODULES)
    with pytest.raises(SpaceError, match="unknown search space 'nosuch'"):
        get("nosuch")
    with pytest.raises(SpaceError, match="no schedule family"):
        families([])
    with pytest.raises(SpaceError, match="defined by two spaces"):
        families(["chapter", "chapter"])
    assert find_family("blocked").name == "blocked"
    with pytest.raises(SpaceError):
        find_family("nosuch")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_every_domain_converts_to_an_optuna_distribution(shape: Shape) -> None:
    for family in all_families():
        params = family.params(shape, 8)
        assert params and len({p.name for p in params}) == len(params)
        for param in params:
            distribution = to_distribution(param)
            values = param.domain.values()
            assert values
            if isinstance(param.domain, IntRange):
                assert isinstance(distribution, optuna.distributions.IntDistribution)
                assert (distribution.low, distribution.high) == (
                    param.domain.low,
                    param.domain.high,
                )
            else:
                assert isinstance(distribution, optuna.distributions.CategoricalDistribution)
                assert list(distribution.choices) == values
            for value in (values[0], values[-1]):
                assert distribution._contains(distribution.to_internal_repr(value))


@pytest.mark.parametrize("slots", [4, 16, 64, 128])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_seed_points_lie_inside_their_family_space(shape: Shape, slots: int) -> None:
    machine = Machine(slots=slots)
    for family in all_families():
        domains = {p.name: p.domain for p in family.params(shape, machine.T)}
        for point in family.seed_points(shape, machine):
            assert set(point) == set(domains), family.name
            outside = {k: v for k, v in point.items() if not domains[k].contains(v)}
            assert not outside, f"{family.name} seed {point} is outside its space: {outside}"


def test_the_families_of_all_spaces_share_parameters_consistently() -> None:
    for shape in SHAPES:
        check_shared_params({f.name: f.params(shape, 8) for f in all_families()})


def test_a_clash_of_shared_parameters_is_refused() -> None:
    one = (Param("bi", IntRange(1, 4)), Param("buffers", Choice((1, 2))))
    check_shared_params({"a": one, "b": (Param("bi", IntRange(1, 4)),)})  # same domain: fine
    with pytest.raises(
        SpaceError, match="parameter 'bi' has different domains in families 'a' and 'b'"
    ):
        check_shared_params({"a": one, "b": (Param("bi", IntRange(1, 8)),)})
    with pytest.raises(SpaceError, match="'buffers'"):
        check_shared_params({"a": one, "c": (Param("buffers", Choice((1, 2, 3))),)})


def test_domains_reject_empty_ranges_and_grid_enumerates_in_order() -> None:
    with pytest.raises(ValueError, match="empty integer range"):
        IntRange(3, 2)
    with pytest.raises(ValueError, match="step"):
        IntRange(1, 2, step=0)
    with pytest.raises(ValueError, match="at least one option"):
        Choice(())
    params = (Param("a", IntRange(1, 3)), Param("b", Choice(("x", "y"))))
    points = list(grid(params))
    assert points[0] == {"a": 1, "b": "x"} and points[-1] == {"a": 3, "b": "y"} and len(points) == 6
    assert IntRange(0, 10, step=5).values() == [0, 5, 10]
    assert not IntRange(0, 10).contains(True) and not IntRange(0, 10).contains(11)


def test_machine_space_violation_is_graded_in_slots() -> None:
    base = Machine(slots=64)
    space = MachineSpace.create(base, None, 2048)  # 32 slots of 64 words
    assert space.violation(base.replace(slots=32)) == 0
    assert space.violation(base.replace(slots=8)) == 0
    assert space.violation(base.replace(slots=33)) == pytest.approx(1.0)
    assert space.violation(base.replace(slots=64)) == pytest.approx(32.0)
    overs = [space.violation(base.replace(slots=s)) for s in range(30, 80)]
    assert overs == sorted(overs)  # further over the budget, further from feasible
    assert MachineSpace.create(base, None, None).max_scratchpad_words == base.scratchpad_words
    with pytest.raises(ValueError, match="fewer than 3 tiles"):
        MachineSpace.create(base, None, 100)


@pytest.mark.parametrize(
    "text, message",
    [
        ("dma_setup=-3:4", "dma_setup must not be negative, got -3"),
        ("mxu_cycles=0:0", "mxu_cycles must not be zero or negative, got 0"),
        ("dma_words_per_cycle=16|0", "dma_words_per_cycle must not be zero or negative"),
        ("slots=1:2", "at most 2 slots, fewer than the 3 tiles"),
    ],
)
def test_a_machine_range_with_values_no_machine_takes_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MachineSpace.create(Machine(slots=64), parse_ranges(text), None)
    assert MachineSpace.create(Machine(slots=64), parse_ranges("dma_setup=0:4,slots=2:8"), None)


@settings(max_examples=examples(40), deadline=None)
@given(
    st.integers(1, 256), st.integers(0, 64), st.sampled_from([8, 16, 32, 64]), st.integers(1, 16)
)
def test_machine_space_seed_point_is_inside_the_ranges(
    slots: int, setup: int, bandwidth: int, mxu: int
) -> None:
    base = Machine(slots=slots, dma_setup=setup, dma_words_per_cycle=bandwidth, mxu_cycles=mxu)
    space = MachineSpace.create(
        base,
        parse_ranges("slots=16:128,dma_words_per_cycle=16|32"),
        max(3 * 64, base.scratchpad_words),
    )
    point = space.seed_point(base)
    domains = dict(space.ranges)
    assert set(point) == set(SEARCHABLE)
    assert all(domains[name].contains(value) for name, value in point.items())
    machine = space.apply(base, point)
    assert machine.T == base.T and machine.slots == point["slots"]
    for name, domain in default_ranges(base).items():
        assert domain.contains(getattr(base, name)) or name == "slots"


def test_parse_ranges() -> None:
    ranges = parse_ranges(" slots=16:128, dma_words_per_cycle=16|32|64 ,")
    assert ranges == {"slots": IntRange(16, 128), "dma_words_per_cycle": Choice((16, 32, 64))}
    assert parse_ranges("") == {}
    for bad, message in [
        ("slots", "expected KEY=LOW:HIGH"),
        ("T=1:8", "expected KEY=LOW:HIGH"),
        ("slots=a:b", "machine range 'slots=a:b'"),
        ("slots=8:4", "empty integer range"),
        ("mxu_cycles=1|x", "machine range 'mxu_cycles=1|x'"),
        ("slots=", "machine range 'slots='"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_ranges(bad)


@settings(max_examples=examples(60), deadline=None)
@given(m=st.integers(1, 80), k=st.integers(1, 40), n=st.integers(1, 80), data=st.data())
def test_general_canonical_point_builds_the_same_program(
    m: int, k: int, n: int, data: st.DataObject
) -> None:
    """Canonicalising a general point (band sizes, unused parameters) never changes the schedule:
    the canonical point compiles to the very same program and needs the same slots."""
    import numpy as np

    from search_spaces.general import GeneralFamily

    family, shape, machine = GeneralFamily(), Shape(m, k, n), Machine(slots=64)
    point = {}
    for param in family.params(shape, machine.T):
        domain = param.domain
        point[param.name] = (
            data.draw(st.sampled_from(domain.options))
            if isinstance(domain, Choice)
            else data.draw(st.integers(domain.low, domain.high))
        )
    canonical = family.canonical(point, shape, machine.T)
    assert family.canonical(canonical, shape, machine.T) == canonical
    assert family.slots_needed(canonical, shape, machine) == family.slots_needed(
        point, shape, machine
    )
    if family.slots_needed(point, shape, machine) <= machine.slots:
        assert np.array_equal(
            family.generator(canonical, shape, machine).program().code,
            family.generator(point, shape, machine).program().code,
        )
