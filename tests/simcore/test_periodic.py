"""The periodic timing (simcore/ga1/engine/periodic.py) against full simulation: the same cycles,
busy times, loads, stores, products and tiles moved on random shapes (multiples of the tile and
of the block or not), random machines and random schedules of every family; the method each
result reports; the budget of simulated products; memory that does not grow with the tiles.

A rebuilt state that disagrees with its signature warns and falls back to full simulation; here
that warning is an error, so a flaw in the unit kinds fails the test instead of hiding."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore import Machine, Shape
from simcore.ga1 import engine
from simcore.ga1.engine import FULL, PERIODIC, TimingLimitError, methods
from simcore.ga1.generator import GeneralParams, StripParams, default_params, slots_needed
from simcore.ga1.schedules import ScheduleError
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params, strip_params

T_AND_SIZES = st.sampled_from(
    [(4, 100), (8, 200)]
)  # at most 25 tiles a side: full simulation stays quick
machine_params = st.fixed_dictionaries(
    {
        "dma_setup": st.integers(0, 20),
        "dma_words_per_cycle": st.sampled_from([1, 4, 16, 64]),
        "mxu_cycles": st.integers(1, 16),
        "mxu_fill": st.integers(0, 12),
    }
)
QUICK = settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def shapes(draw: st.DrawFn) -> tuple[int, Shape]:
    T, top = draw(T_AND_SIZES)
    return T, Shape(draw(st.integers(1, top)), draw(st.integers(1, top)), draw(st.integers(1, top)))


def totals(timing: object) -> tuple[object, ...]:
    return tuple(
        getattr(timing, name)
        for name in ("cycles", "busy", "loads", "stores", "products", "tiles_moved")
    )


def same_either_way(generator: engine.Generator) -> None:
    """Periodic and full timing agree in every count; each says how it was timed."""
    try:
        full = generator.timing(FULL)
    except ScheduleError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        periodic = generator.timing(PERIODIC)
    assert totals(periodic) == totals(full)
    assert full.method == FULL and full.simulated == full.products
    assert periodic.method in (PERIODIC, FULL)
    # a jump passes at least one unit of products; without one, every product was simulated
    assert periodic.simulated is not None
    assert (
        periodic.simulated == full.products
        if periodic.method == FULL
        else periodic.simulated < full.products
    )


@QUICK
@given(
    case=shapes(),
    params=general_params(block=6, tail=5, lookahead=40, ramp=4),
    machine=machine_params,
    extra=st.sampled_from([0, 1, 3, 12, 40]),
)
def test_general_schedules(
    case: tuple[int, Shape], params: GeneralParams, machine: dict[str, int], extra: int
) -> None:
    T, shape = case
    base = Machine(T=T, **machine)
    same_either_way(
        engine.General(shape, base.replace(slots=slots_needed(shape, base, params) + extra), params)
    )


@QUICK
@given(case=shapes(), params=strip_params(), machine=machine_params, slots=st.integers(6, 48))
def test_strip_schedules(
    case: tuple[int, Shape], params: object, machine: dict[str, int], slots: int
) -> None:
    T, shape = case
    same_either_way(engine.Strips(shape, Machine(T=T, slots=slots, **machine), params))  # type: ignore[arg-type]


@QUICK
@given(
    case=shapes(),
    bi=st.integers(1, 5),
    bj=st.integers(1, 5),
    buffers=st.integers(1, 3),
    order=st.sampled_from(["row", "col"]),
    machine=machine_params,
    extra=st.integers(0, 4),
)
def test_chapter_schedules(
    case: tuple[int, Shape],
    bi: int,
    bj: int,
    buffers: int,
    order: str,
    machine: dict[str, int],
    extra: int,
) -> None:
    T, shape = case
    target = Machine(T=T, slots=bi * bj + buffers * (bi + bj) + extra, **machine)
    same_either_way(engine.Blocked(shape, target, bi, bj, buffers, order))
    same_either_way(engine.KOuter(shape, target, min(buffers, target.slots // 3)))


@pytest.mark.parametrize(
    "generator",
    [
        engine.General(
            Shape(512, 512, 512),
            Machine(slots=64),
            default_params(Shape(512, 512, 512), Machine(slots=64)),
        ),
        engine.General(
            Shape(512, 512, 512), Machine(slots=64), GeneralParams(bi=4, bj=4, store_delay=2)
        ),
        engine.Strips(
            Shape(128, 512, 128),
            Machine(slots=16),
            StripParams(split=0, tail=0, protect=24, lookahead=10, store_delay=2),
        ),
        engine.Blocked(Shape(256, 512, 256), Machine(slots=40), 4, 4, 2),
        engine.KOuter(Shape(128, 256, 128), Machine(slots=6), 2),
    ],
    ids=["general", "general-store-delay", "strips-store-delay", "blocked", "kouter"],
)
def test_steady_states_are_found(generator: engine.Generator) -> None:
    # A blocked order's k steps repeat: the periodic method simulates a fraction of the products.
    periodic, full = generator.timing(), generator.timing(FULL)
    assert totals(periodic) == totals(full)
    assert (
        periodic.method == PERIODIC
        and periodic.simulated is not None
        and periodic.simulated < full.products // 4
    )


def test_a_rotating_window_settles_where_its_leftover_tiles_do_not_drift() -> None:
    # Without prefetching the window's stretches repeat; with 40 slots and a lookahead the operands
    # left over from earlier steps drift from period to period, and the state never recurs.
    shape = Shape(200, 64, 200)
    settles = GeneralParams(bi=2, bj=3, structure="rotate", lookahead=0)
    generator = engine.General(
        shape, Machine(slots=slots_needed(shape, Machine(), settles) + 10), settles
    )
    periodic = generator.timing()
    assert periodic.method == PERIODIC and totals(periodic) == totals(generator.timing(FULL))
    drifts = engine.General(
        Shape(96, 96, 96), Machine(slots=40), GeneralParams(bi=3, bj=4, structure="rotate")
    )
    periodic = drifts.timing()
    assert periodic.method == FULL and totals(periodic) == totals(drifts.timing(FULL))


def test_the_budget_bounds_either_method() -> None:
    shape, machine = Shape(256, 256, 256), Machine(slots=64)
    generator = engine.General(shape, machine, default_params(shape, machine))
    for method in (PERIODIC, FULL):
        with pytest.raises(TimingLimitError):
            generator.timing(method, max_products=100)
    assert generator.timing(PERIODIC, max_products=generator.products // 2).method == PERIODIC
    with pytest.raises(ValueError, match="unknown timing method"):
        generator.timing("fast")


def test_large_shapes_time_in_memory_bounded_by_the_slots() -> None:
    # 8192^3 tiles: 2 * 10^8 tiles, 5.5 * 10^11 products; the state holds the slots, the bands and
    # the tile map (a few entries per slot), and the timing simulates a few blocks of it.
    shape, machine = Shape(65536, 65536, 65536), Machine(slots=64)
    generator = engine.General(shape, machine, default_params(shape, machine))
    assert generator._begin().size < 200_000
    timing = generator.timing(max_products=1 << 20)
    assert timing.method == PERIODIC and timing.products == 8192**3
    assert timing.cycles >= timing.products * machine.mxu_cycles


def test_a_huge_scratchpad_is_timed_in_full() -> None:
    # A signature has a record per slot: with thousands of slots, most never used, full simulation.
    shape, machine = Shape(64, 64, 64), Machine(slots=5000)
    generator = engine.General(shape, machine, GeneralParams(bi=4, bj=4))
    assert generator.timing().method == FULL


def test_blocks_settle_where_evictions_tie_and_the_slots_are_relabelled() -> None:
    # 32 slots: each block evicts one of two operands next used by the same product, the
    # smaller slot, and the blocks repeat with their slots relabelled; a period counts as far
    # as the relabelling keeps the smaller slot winning, so blocks are jumped, exactly.
    shape, machine = Shape(1024, 1024, 1024), Machine(slots=32)
    generator = engine.General(shape, machine, default_params(shape, machine))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        periodic = generator.timing()
    jumps = methods.LAST_STATS[methods.periodic.JUMPS : methods.periodic.JUMPS + 3].tolist()
    assert totals(periodic) == totals(generator.timing(FULL))
    assert periodic.method == PERIODIC and jumps[1] >= 20
