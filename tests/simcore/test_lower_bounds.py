"""Lower bounds: the golden values, and that no real schedule ever beats them."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from simcore import Machine, ScheduleError, Shape, blocked, kouter, simulate
from simcore.ga1.bounds import simple_bounds
from simcore.ga1.generator import GeneralParams, general, slots_needed
from simcore.ga1.generator.order import block_products
from simcore.ga1.generator.strips import strip_slots_needed, strips
from simcore.ga1.lower_bounds import (
    compute_pipeline_bound,
    io_bound_cycles,
    io_bound_tiles,
    lower_bound,
    max_products_after,
)
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.shape import parse_shape
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params, strip_params

SHAPE = Shape(128, 128, 128)


def test_golden_pipeline_bound():
    assert compute_pipeline_bound(SHAPE, Machine()) == 32_868
    assert compute_pipeline_bound(SHAPE, Machine(slots=64)) == 32_868
    # One tile product: two loads, the product, the fill, the store (the chapter's 84-cycle
    # program has two products: 40 + 16 + 8 + 20).
    assert compute_pipeline_bound(Shape(8, 8, 8), Machine()) == 40 + 8 + 8 + 20


def test_golden_io_bound():
    # The window argument with the slot the window's first event writes left out (S - 1 held
    # tiles, none before the first window): X = 28, F(43) = 50, F(28) = 27, 28 * 82 + 1.
    assert io_bound_tiles(SHAPE, Machine(slots=16)) == 2297
    assert lower_bound(SHAPE, Machine(slots=16)) == 45_940
    assert io_bound_tiles(SHAPE, Machine(slots=16)) >= 2080
    assert (
        io_bound_cycles(SHAPE, Machine(slots=16)) == io_bound_tiles(SHAPE, Machine(slots=16)) * 20
    )
    assert lower_bound(SHAPE, Machine(slots=16)) >= 41_600
    # Never below moving each tile once, and more slots never raise it.
    for slots in (4, 8, 16, 32, 64):
        tiles = io_bound_tiles(SHAPE, Machine(slots=slots))
        assert tiles * 20 >= simple_bounds(SHAPE, Machine(slots=slots)).dma
    assert io_bound_tiles(SHAPE, Machine(slots=8)) >= io_bound_tiles(SHAPE, Machine(slots=64))


def test_products_after_n_loads():
    assert [max_products_after(n, 16, 16, 16) for n in range(7)] == [0, 0, 1, 2, 4, 6, 9]
    assert max_products_after(5, 1, 4, 4) == 4  # one row: each k step has a single A tile
    assert max_products_after(100, 2, 2, 2) == 8  # never more than every product


def _chapter_programs(shape: Shape, machine: Machine):
    for bi, bj in ((1, 1), (1, 4), (2, 2), (2, 4), (4, 4), (4, 8), (3, 5)):
        for buffers in (1, 2):
            try:
                yield blocked(shape, machine, bi, bj, buffers)
            except ScheduleError:
                pass
    for buffers in (1, 2):
        try:
            yield kouter(shape, machine, buffers)
        except ScheduleError:
            pass


def test_bounds_below_the_chapter_sweep_at_128():
    for slots in (16, 64):
        machine = Machine(slots=slots)
        bound = lower_bound(SHAPE, machine)
        tiles = io_bound_tiles(SHAPE, machine)
        for program in _chapter_programs(SHAPE, machine):
            result = simulate(machine, program)
            assert bound <= result.cycles
            assert tiles <= result.tiles_moved


params_strategy = general_params(block=8, tail=4, lookahead=64, ramp=8)
dims = st.integers(1, 96)


@settings(max_examples=examples(60), deadline=None)
@given(
    m=dims,
    k=dims,
    n=dims,
    slots=st.integers(3, 64),
    params=params_strategy,
    fill=st.integers(0, 12),
    setup=st.integers(0, 24),
    mxu=st.integers(1, 16),
)
def test_bounds_never_exceed_generated_schedules(m, k, n, slots, params, fill, setup, mxu):
    shape = Shape(m, k, n)
    machine = Machine(slots=slots, mxu_fill=fill, dma_setup=setup, mxu_cycles=mxu)
    if slots_needed(shape, machine, params) > slots:
        params = GeneralParams(bi=1, bj=1, tail=0, lookahead=params.lookahead)
    result = simulate(machine, general(shape, machine, params))
    assert compute_pipeline_bound(shape, machine) <= result.cycles
    assert io_bound_tiles(shape, machine) <= result.tiles_moved
    assert lower_bound(shape, machine) <= result.cycles


@settings(max_examples=examples(30), deadline=None)
@given(
    m=dims,
    k=dims,
    n=dims,
    slots=st.integers(3, 40),
    bi=st.integers(1, 5),
    bj=st.integers(1, 5),
    buffers=st.integers(1, 2),
    fill=st.integers(0, 12),
    mxu=st.integers(1, 16),
)
def test_bounds_never_exceed_chapter_schedules(m, k, n, slots, bi, bj, buffers, fill, mxu):
    shape = Shape(m, k, n)
    machine = Machine(slots=slots, mxu_fill=fill, mxu_cycles=mxu)
    programs = []
    for build in (
        lambda: blocked(shape, machine, bi, bj, buffers),
        lambda: kouter(shape, machine, buffers),
    ):
        try:
            programs.append(build())
        except ScheduleError:
            pass
    for program in programs:
        result = simulate(machine, program)
        assert lower_bound(shape, machine) <= result.cycles
        assert io_bound_tiles(shape, machine) <= result.tiles_moved


@settings(max_examples=examples(60), deadline=None)
@given(
    m=dims,
    k=dims,
    n=dims,
    slots=st.integers(3, 64),
    params=strip_params(),
    fill=st.integers(0, 12),
    setup=st.integers(0, 24),
    mxu=st.integers(1, 16),
)
def test_bounds_never_exceed_strip_schedules(m, k, n, slots, params, fill, setup, mxu):
    shape = Shape(m, k, n)
    machine = Machine(slots=slots, mxu_fill=fill, dma_setup=setup, mxu_cycles=mxu)
    if strip_slots_needed(shape, machine, params) > slots:
        return
    result = simulate(machine, strips(shape, machine, params))
    assert compute_pipeline_bound(shape, machine) <= result.cycles
    assert io_bound_tiles(shape, machine) <= result.tiles_moved
    assert lower_bound(shape, machine) <= result.cycles


def test_huge_scratchpads_cost_nothing_and_keep_a_proven_bound(monkeypatch):
    # Slots enough for every tile (or a window program too long to run): moving every tile once,
    # without running the window program at all; never above a smaller scratchpad's bound.
    from simcore.ga1 import lower_bounds

    def refuse(*_args):
        raise AssertionError("the window program ran")

    monkeypatch.setattr(lower_bounds, "_window_products", refuse)
    lower_bounds._io_bound.cache_clear()
    for shape, slots in (
        (SHAPE, 768),
        (SHAPE, 100_000),
        (Shape(1024, 1024, 1024), 5_000),
        (Shape(1024, 1024, 1024), 10**9),
    ):
        tiles = io_bound_tiles(shape, Machine(slots=slots))
        assert tiles * 20 == simple_bounds(shape, Machine(slots=slots)).dma
    lower_bounds._io_bound.cache_clear()


def test_pair_products_closed_form_is_the_search():
    from simcore.ga1.lower_bounds import _pair_products

    for mt in range(1, 12):
        for nt in range(1, 12):
            for s in range(0, mt + nt + 3):
                searched = max(
                    (a * (s - a) for a in range(max(0, s - nt), min(mt, s) + 1)), default=0
                )
                assert _pair_products(s, mt, nt) == searched


def _fewest_transfers_order_128_on_16() -> list[tuple[int, int, int]]:
    """128^3 in 3 x 4 blocks (12 accumulators, 3 A tiles held, each B tile streamed through the one
    slot left), rows 12-15 in 4 x 3 blocks and a 4 x 1: each operand tile moves once per block.
    The matrix unit waits on every B tile, so it is slow; it only counts transfers."""
    blocks = []
    for strip in range(4):
        rows = [range(r, r + 3) for r in range(0, 12, 3)]
        blocks += [
            (r, range(4 * strip, 4 * strip + 4)) for r in (rows[::-1] if strip % 2 else rows)
        ]
    blocks += [(range(12, 16), range(3 * c, min(3 * c + 3, 16))) for c in range(6)]
    products = []
    for number, (rows, cols) in enumerate(blocks):
        held_rows = len(rows) <= len(cols)  # the shorter side is held, the longer streams
        cells = (
            [(i, j) for j in cols for i in rows]
            if held_rows
            else [(i, j) for i in rows for j in cols]
        )
        products += block_products(cells, range(16) if number % 2 == 0 else range(15, -1, -1), 0)
    return products


def test_no_tile_count_bound_can_reach_57000_cycles_at_16_slots():
    # 57,000 cycles at 128^3 on 16 slots: reachable, or a bound proving it cannot be done?
    # This schedule moves 2,604 tiles (52,080 cycles of DMA), so no bound that counts transfers can
    # exceed that: the gap is the overlap of the DMA with the matrix unit, not the traffic.
    from simcore.ga1.generator import CompileOptions, compile_products
    from simcore.ga1.verify import verify_matmul

    machine = Machine(slots=16)
    program = compile_products(
        SHAPE, machine, _fewest_transfers_order_128_on_16(), CompileOptions(lookahead=0)
    )
    verification, result = verify_matmul(machine, program, SHAPE)
    assert verification.ok
    assert result.tiles_moved == 2_604 and result.cycles > 57_000
    assert io_bound_tiles(SHAPE, machine) <= result.tiles_moved


def test_never_above_the_exact_solvers_verified_schedules():
    """The optimum table's rows (docs/benchmarks/optimum.md): every one a schedule CP-SAT found
    and the simulator verified; lower_bound never passes it, and is the table's new bound."""
    rows = json.loads((Path(__file__).parent / "data" / "optima.json").read_text())
    assert len(rows) >= 40
    for row in rows:
        shape = parse_shape(row["shape"])
        machine = machine_from(parse_overrides(row["machine"]), None)
        bound = lower_bound(shape, machine)
        assert bound == row["new_bound"], row
        assert bound <= row["bound"] <= row["exact"] <= row["tuner"], row


def test_forgotten_bounds_are_computed_again_the_same():
    from simcore.ga1 import lower_bounds

    machine = Machine(slots=16)
    first = lower_bound(SHAPE, machine)
    lower_bounds.forget_bounds()
    assert lower_bounds.compute_pipeline_bound.cache_info().currsize == 0
    assert lower_bound(SHAPE, machine) == first


def test_window_products_grow_with_the_tiles_a_window_holds():
    from simcore.ga1.lower_bounds import window_products

    found = window_products(12, 4, 4, 16)
    assert len(found) == 13 and found[0] == 0
    assert all(a <= b for a, b in zip(found, found[1:]))
    assert found[3] == 1  # one A tile, one B tile and one C tile make one product
