"""Work that must not grow with the shape: the closed forms equal the listings they replace, and
they answer at any size in constant or logarithmic work."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.ga1.generator.order import bands, largest_band, shortest_band
from simcore.ga1.generator.strips import (
    MAX_STRIPS,
    StripParams,
    block_height,
    strip_width_runs,
    strip_widths,
)
from simcore.ga1.lower_bounds import compute_pipeline_bound, max_products_after
from simcore.ga1.machine import Machine
from simcore.ga1.reduced import _line_descriptors, _runs, _strip_kinds
from simcore.shape import Shape
from simcore.systolic import (
    Assumptions,
    HbmLink,
    Mapping,
    SystolicArray,
    SystolicDesign,
    closed_form,
    schedule,
)
from simcore.systolic import cycles as systolic_cycles
from tests.helpers.generator_strategies import strip_params
from tests.helpers.systolic_strategies import designs

HUGE = 1 << 40


def _pipeline_by_listing(shape: Shape, machine: Machine) -> int:
    """The pipeline bound as first written: every n of the first and last period tried."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    P, D, m = Mt * Kt * Nt, machine.dma_cycles, machine.mxu_cycles
    period = Mt + Nt
    n_max = Kt * period
    candidates = set(range(2, min(n_max, period + 2) + 1))
    candidates |= set(range(max(2, n_max - period - 1), n_max + 1))
    finish = P * m
    for n in candidates:
        done = max_products_after(n - 1, Mt, Kt, Nt)
        if done < P:
            finish = max(finish, n * D + (P - done) * m)
    return finish + machine.mxu_fill + D


@settings(max_examples=400, deadline=None)
@given(
    tiles=st.tuples(*(st.integers(1, 40),) * 3),
    dma_setup=st.integers(0, 60),
    mxu_cycles=st.integers(1, 80),
    T=st.sampled_from([1, 2, 8]),
)
def test_pipeline_bound_equals_the_listing(tiles, dma_setup, mxu_cycles, T):
    machine = Machine(T=T, dma_setup=dma_setup, mxu_cycles=mxu_cycles)
    shape = Shape(*(t * T for t in tiles))
    compute_pipeline_bound.cache_clear()
    assert compute_pipeline_bound(shape, machine) == _pipeline_by_listing(shape, machine)


def test_pipeline_bound_at_any_size():
    for shape in (Shape(HUGE, 8, 8), Shape(8, 8, HUGE), Shape(8, HUGE, 8), Shape(HUGE, HUGE, 8)):
        bound = compute_pipeline_bound(shape, Machine(slots=64))
        Mt, Kt, Nt = shape.tiles(8)
        assert bound >= Mt * Kt * Nt * Machine().mxu_cycles


@given(
    total=st.integers(1, 500),
    size=st.integers(1, 600),
    partition=st.sampled_from(["uniform", "balanced"]),
)
def test_band_lengths_without_the_bands(total, size, partition):
    listed = [len(band) for band in bands(total, size, partition)]
    assert shortest_band(total, size, partition) == min(listed) == listed[-1]
    assert largest_band(total, size, partition) == max(listed)


def _widths_by_table(long_tiles: int, cut_tiles: int, slots: int, reserve: int):
    """The strip knapsack as first written: a table over every width sum up to the cut."""
    costs = {}
    for w in range(1, cut_tiles + 1):
        h = block_height(w, slots, reserve, long_tiles)
        if h == 0:
            break
        costs[w] = long_tiles + math.ceil(long_tiles / h) * w
    if not costs:
        return 0, []
    best = [0] + [math.inf] * cut_tiles
    choice = [0] * (cut_tiles + 1)
    for n in range(1, cut_tiles + 1):
        for w, cost in costs.items():
            if w <= n and best[n - w] + cost < best[n]:
                best[n] = best[n - w] + cost
                choice[n] = w
    widths, n = [], cut_tiles
    while n:
        widths.append(choice[n])
        n -= choice[n]
    return int(best[cut_tiles]), sorted(widths)


@settings(max_examples=300, deadline=None)
@given(
    long_tiles=st.integers(1, 40),
    cut_tiles=st.integers(1, 2000),
    slots=st.integers(3, 20),  # few widths: most cuts reach the periodic walk
    reserve=st.integers(1, 5),
)
def test_strip_widths_equal_the_table(long_tiles, cut_tiles, slots, reserve):
    assert strip_widths(long_tiles, cut_tiles, slots, reserve) == _widths_by_table(
        long_tiles, cut_tiles, slots, reserve
    )


def test_strip_widths_at_any_size():
    cost, runs = strip_width_runs(1, HUGE, 64, 2)
    assert sum(w * count for w, count in runs) == HUGE
    assert sum(count for _w, count in runs) > MAX_STRIPS  # the engine refuses these
    near = strip_width_runs(1, 100_000, 64, 2)
    assert near == (near[0], tuple(runs_of(_widths_by_table(1, 100_000, 64, 2)[1])))


def runs_of(widths: list[int]) -> list[tuple[int, int]]:
    return [(w, widths.count(w)) for w in sorted(set(widths))]


def _strip_kinds_by_listing(long: int, cut: int, slots: int, params: StripParams):
    """reduced.py's strip kinds as first written: every strip visited."""
    _cost, widths = strip_widths(long, cut, slots, params.reserve)
    if params.strip_order == "wide":
        widths = widths[::-1]
    strips, blocks, first_block = set(), set(), 0
    for index, w in enumerate(widths):
        heights = _runs(long, block_height(w, slots, params.reserve, long), params.partition)
        reversed_ = (index + int(params.first_reverse)) % 2 == 1
        last = index == len(widths) - 1
        lengths = tuple(length for length, _many in heights)
        following = 0 if last else widths[index + 1]
        strips.add((w, lengths, reversed_, first_block % 2, index == 0, last, following))
        for key, parities in _line_descriptors(heights[::-1] if reversed_ else heights).items():
            for v in parities:
                blocks.add((key, w, (first_block + v) % 2))
        first_block += sum(many for _length, many in heights)
    return frozenset(strips), frozenset(blocks)


@settings(max_examples=300, deadline=None)
@given(
    long=st.integers(1, 60),
    cut=st.integers(1, 400),
    slots=st.integers(3, 24),
    params=strip_params(),
)
def test_strip_kinds_equal_the_listing(long, cut, slots, params):
    assert _strip_kinds(long, cut, slots, params) == _strip_kinds_by_listing(
        long, cut, slots, params
    )


# --- the systolic closed form: periods of more than one tile, any length ---------------------


@settings(max_examples=200, deadline=None)
@given(
    design=designs(max_side=4),
    long=st.integers(1, 400),
    side=st.tuples(st.integers(1, 9), st.integers(1, 9)),
    axis=st.integers(0, 2),
)
def test_the_systolic_count_equals_the_walk_on_long_shapes(design, long, side, axis):
    dims = list(side)
    dims.insert(axis, long)
    shape = Shape(*dims)
    assert systolic_cycles(design, shape) == schedule(design, shape).cycles


@pytest.mark.parametrize("dataflow", ["ws", "is", "os"])
@pytest.mark.parametrize("buffers", [1, 2])
@pytest.mark.parametrize("words", [None, 0.5, 3, 64])
def test_the_systolic_count_takes_a_bounded_number_of_steps(dataflow, buffers, words, monkeypatch):
    steps = []
    for name in ("stationary_step", "output_step"):
        original = getattr(closed_form, name)

        def counted(*args, original=original):
            steps.append(1)
            return original(*args)

        monkeypatch.setattr(closed_form, name, counted)
    design = SystolicDesign(
        SystolicArray(64, 64), dataflow, None, Assumptions(), HbmLink(words, buffers)
    )
    for shape in (Shape(HUGE, 8, 8), Shape(8, HUGE, 8), Shape(8, 8, HUGE), Shape(1_000_000, 8, 8)):
        steps.clear()
        for mapping in (Mapping(64, 64), Mapping(8, 64, "row-outer"), Mapping(3, 5)):
            closed_form.cycles(design.with_mapping(mapping), shape)
        assert len(steps) < 3000, (shape, len(steps))
