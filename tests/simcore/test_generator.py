"""The general schedule generator: every program it emits is hazard-free and exact, its slot
estimate is honest, and the best parameters found stay as fast as measured."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore import Machine, ScheduleError, Shape, simulate
from simcore.ga1.generator import (
    INNER_ORDERS,
    CompileOptions,
    GeneralParams,
    bands,
    cell_order,
    check_products,
    compile_products,
    default_params,
    general,
    overlap_params,
    panel_params,
    product_order,
    slots_needed,
)
from simcore.ga1.lower_bounds import compute_pipeline_bound
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params
from tests.helpers.schedule_checks import run_exact

SHAPE = Shape(128, 128, 128)

# The best parameters the local search found (see the report); regression targets.
BEST_64 = GeneralParams(
    bi=6,
    bj=7,
    partition="balanced",
    block_order="col",
    serpentine=True,
    k_direction="up",
    inner="lshape",
    tail=4,
    lookahead=28,
    store_first=False,
)
BEST_32 = GeneralParams(
    bi=6,
    bj=4,
    partition="uniform",
    block_order="row",
    serpentine=True,
    k_direction="alternate",
    inner="lshape",
    tail=0,
    lookahead=12,
    store_first=False,
)
BEST_16 = GeneralParams(
    bi=6,
    bj=2,
    partition="uniform",
    block_order="row",
    serpentine=True,
    k_direction="alternate",
    inner="zigzag",
    tail=1,
    lookahead=2,
    store_first=False,
)


params_strategy = general_params(block=6, tail=5, lookahead=40, ramp=6)
dims = st.integers(1, 52)  # includes single rows/columns and non-multiples of T = 8


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=dims,
    k=dims,
    n=dims,
    params=params_strategy,
    extra=st.integers(0, 30),
    seed=st.integers(0, 99),
)
def test_every_program_is_hazard_free_and_exact(m, k, n, params, extra, seed):
    shape = Shape(m, k, n)
    need = slots_needed(shape, Machine(), params)
    machine = Machine(slots=min(64, need + extra))
    if need > machine.slots:
        with pytest.raises(ScheduleError):
            general(shape, machine, params)
        return
    program = general(shape, machine, params)
    _cycles, hazards = run_exact(shape, machine, program, seed)
    assert hazards == []
    counts = program.opcode_counts()
    Mt, Kt, Nt = shape.tiles(machine.T)
    assert counts["mxu"] == Mt * Kt * Nt
    assert counts["store"] == counts["zero"] == Mt * Nt  # C tiles are never reloaded


@settings(max_examples=examples(40), deadline=None)
@given(m=dims, k=dims, n=dims, params=params_strategy)
def test_slots_needed_is_the_minimum_that_compiles(m, k, n, params):
    shape = Shape(m, k, n)
    need = slots_needed(shape, Machine(), params)
    program = general(shape, Machine(slots=need), params)
    assert program.max_slot() < need
    if need > 3:
        with pytest.raises(ScheduleError):
            general(shape, Machine(slots=need - 1), params)


@settings(max_examples=examples(40), deadline=None)
@given(m=dims, k=dims, n=dims, params=params_strategy)
def test_product_order_covers_every_product_once(m, k, n, params):
    shape = Shape(m, k, n)
    order = product_order(shape, Machine(), params)
    check_products(shape, Machine(), order)  # raises on a missing or repeated product


@settings(max_examples=examples(30), deadline=None)
@given(
    m=dims,
    k=dims,
    n=dims,
    seed=st.integers(0, 10**6),
    lookahead=st.integers(0, 20),
    store_first=st.booleans(),
)
def test_compiler_accepts_any_valid_order(m, k, n, seed, lookahead, store_first):
    shape = Shape(m, k, n)
    Mt, Kt, Nt = shape.tiles(8)
    order = [(i, j, kk) for i in range(Mt) for j in range(Nt) for kk in range(Kt)]
    np.random.default_rng(seed).shuffle(order)
    order = [tuple(int(v) for v in p) for p in order]
    # A random order may keep every accumulator live: give it room for all of them.
    machine = Machine(slots=Mt * Nt + 2)
    program = compile_products(shape, machine, order, CompileOptions(lookahead, store_first))
    _cycles, hazards = run_exact(shape, machine, program, seed % 100)
    assert hazards == []


def test_compiler_rejects_bad_orders_and_tight_scratchpads():
    shape = Shape(16, 16, 16)
    order = [(i, j, k) for i in range(2) for j in range(2) for k in range(2)]
    with pytest.raises(ScheduleError, match="twice"):
        compile_products(shape, Machine(), order[:-1] + [order[0]])
    with pytest.raises(ScheduleError, match="expected 8"):
        compile_products(shape, Machine(), order[:-1])
    k_outer = [
        (i, j, k) for k in range(2) for i in range(2) for j in range(2)
    ]  # 4 live accumulators
    with pytest.raises(ScheduleError, match="working set"):
        compile_products(shape, Machine(slots=5), k_outer)
    compile_products(shape, Machine(slots=6), k_outer)
    with pytest.raises(ScheduleError):
        GeneralParams(inner="diagonal")
    with pytest.raises(ScheduleError):
        GeneralParams(bi=0)


def test_bands_and_cells():
    assert [len(b) for b in bands(16, 6, "balanced")] == [6, 5, 5]
    assert [len(b) for b in bands(16, 6, "uniform")] == [6, 6, 4]
    assert [len(b) for b in bands(3, 8, "balanced")] == [3]
    for inner in INNER_ORDERS:
        cells = cell_order(3, 5, inner)
        assert sorted(cells) == [(x, y) for x in range(3) for y in range(5)]
    # The L-shaped front: after a rows and b columns of operands, the a*b cells are done first.
    assert cell_order(3, 3, "lshape")[:4] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_resident_tiles_are_reused():
    # One block covering C: every A and B tile is loaded exactly once.
    shape = Shape(32, 64, 32)
    machine = Machine(slots=64)
    program = general(shape, machine, GeneralParams(bi=4, bj=4, tail=0, lookahead=8))
    Mt, Kt, Nt = shape.tiles(8)
    assert program.opcode_counts()["load"] == Mt * Kt + Kt * Nt


def test_default_params_fit_and_beat_the_chapter():
    for slots, chapter_best in ((16, 76_160), (32, 46_080), (64, 37_440)):
        machine = Machine(slots=slots)
        params = default_params(SHAPE, machine)
        assert slots_needed(SHAPE, machine, params) <= slots
        assert simulate(machine, general(SHAPE, machine, params)).cycles < chapter_best


def test_a_panel_seed_keeps_a_resident_and_moves_fewer_tiles() -> None:
    # 384x64x512 on 48 slots (Kt = 8): 4 rows of A (32 tiles) fit beside a 4 x 1 block.
    shape, machine = Shape(384, 64, 512), Machine(slots=48)
    panel = panel_params(shape, machine)
    assert panel is not None and (panel.bi, panel.bj, panel.block_order) == (4, 1, "row")
    Mt, Kt, Nt = shape.tiles(machine.T)
    ran = simulate(machine, general(shape, machine, panel))
    assert ran.loads < Mt * Kt + 12 * Kt * Nt + Mt  # A about once, B once per band of 4 rows
    assert (
        ran.tiles_moved
        < simulate(machine, general(shape, machine, default_params(shape, machine))).tiles_moved
    )
    # Transposed, the panel is one of B, visited by columns.
    flipped = panel_params(Shape(512, 64, 384), machine)
    assert flipped is not None and (flipped.bi, flipped.bj, flipped.block_order) == (1, 4, "col")


@given(m=st.integers(1, 48), k=st.integers(1, 16), n=st.integers(1, 48), slots=st.integers(4, 80))
@settings(max_examples=examples(60), deadline=None)
def test_a_panel_seed_fits_whenever_there_is_one(m: int, k: int, n: int, slots: int) -> None:
    shape, machine = Shape(8 * m, 8 * k, 8 * n), Machine(slots=slots)
    panel = panel_params(shape, machine)
    if panel is not None:
        assert slots_needed(shape, machine, panel) <= slots
        height = panel.bi if panel.block_order == "row" else panel.bj
        assert height * k + height + 4 <= slots  # the panel, its block, and an A and a B in flight


def test_an_overlap_seed_reaches_the_bound_where_the_default_block_does_not() -> None:
    # 248x512x280 on 64 slots can be compute-bound: 7 x 5 blocks (42 slots) leave 22 to prefetch,
    # the default's 7 x 7 (58 slots) only 6.
    shape, machine = Shape(248, 512, 280), Machine(slots=64)
    seed = overlap_params(shape, machine)
    assert seed is not None and (seed.bi, seed.bj) == (7, 5)
    bound = compute_pipeline_bound(shape, machine)  # 555,620
    assert simulate(machine, general(shape, machine, seed)).cycles <= 1.0005 * bound  # 555,736
    assert (
        simulate(machine, general(shape, machine, default_params(shape, machine))).cycles
        > 1.02 * bound
    )  # 568,520


@pytest.mark.parametrize("slots", [16, 32, 64])
def test_no_overlap_seed_at_128_cubed(slots: int) -> None:
    # 16 and 32 slots hold no block whose transfers fit under its products; at 64 the only one
    # is the default's own block.
    assert overlap_params(SHAPE, Machine(slots=slots)) is None


@given(
    m=st.integers(1, 64),
    k=st.integers(1, 64),
    n=st.integers(1, 64),
    slots=st.integers(4, 96),
    mxu_cycles=st.sampled_from([4, 8, 16]),
)
@settings(max_examples=examples(80), deadline=None)
def test_an_overlap_seed_fits_and_keeps_the_matrix_unit_busy(
    m: int, k: int, n: int, slots: int, mxu_cycles: int
) -> None:
    shape, machine = Shape(8 * m, 8 * k, 8 * n), Machine(slots=slots, mxu_cycles=mxu_cycles)
    seed = overlap_params(shape, machine)
    if seed is None:
        return
    assert slots_needed(shape, machine, seed) <= slots
    assert (seed.bi, seed.bj) != (
        default_params(shape, machine).bi,
        default_params(shape, machine).bj,
    )
    D = machine.dma_cycles
    for rows, cols in (
        (r, c) for r in bands(m, seed.bi, "balanced") for c in bands(n, seed.bj, "balanced")
    ):
        h, w = len(rows), len(cols)
        assert k * (h + w) * D + h * w * D <= 0.97 * k * h * w * mxu_cycles


@pytest.mark.parametrize(
    "slots, params, target",
    # Measured: 34,092 / 39,540 / 59,218. The brief's 64-slot target (33,300) is not reached yet.
    [(64, BEST_64, 34_092), (32, BEST_32, 39_800), (16, BEST_16, 59_500)],
)
def test_best_params_regression(slots, params, target):
    machine = Machine(slots=slots)
    program = general(SHAPE, machine, params)
    cycles, hazards = run_exact(SHAPE, machine, program)
    assert hazards == []
    assert cycles <= target


def test_a_512_schedule_is_near_the_bound():
    # Its speed is measured in benchmarks/speed/bench_engine.py, not here (no wall-clock limits in tests).
    shape, machine = Shape(512, 512, 512), Machine(slots=64)
    program = general(shape, machine, GeneralParams(bi=6, bj=8, tail=0, lookahead=28))
    assert simulate(machine, program).cycles <= 1.1 * compute_pipeline_bound(shape, machine)


def _slots_needed_by_listing(shape, machine, params):
    """The original slots_needed, over the listed blocks and units (the closed forms' oracle)."""
    from simcore.ga1.generator.order import _window, blocks, units

    _Mt, Kt, _Nt = shape.tiles(machine.T)
    if Kt == 1:
        return 3
    if params.structure == "rotate":
        sizes = [len(unit) for unit in units(shape, machine, params)]
        window = _window(shape, machine, params)
        live = most = sum(sizes[:window])
        for u in range(window, len(sizes)):
            live += sizes[u] - sizes[u - window]
            most = max(most, live)
        return most + 2
    if params.tail >= Kt:
        return 3
    return max(len(rows) * len(cols) for rows, cols in blocks(shape, machine, params)) + 2


def _default_params_by_search(shape, machine):
    """The original default_params, every band size tried (the fast version's oracle)."""
    Mt, _Kt, Nt = shape.tiles(machine.T)
    S = machine.slots
    best = None
    for bi in range(1, Mt + 1):
        h = max(len(b) for b in bands(Mt, bi, "balanced"))
        for bj in range(1, Nt + 1):
            w = max(len(b) for b in bands(Nt, bj, "balanced"))
            spare = S - (h * w + w + 2)
            if spare < 0:
                continue
            cand = ((h + w) / (h * w), w, -h, bi, bj)
            if best is None or cand < best:
                best, lookahead = cand, (2 if spare <= 1 else 4 * spare)
    if best is None:
        return GeneralParams(bi=1, bj=1, tail=0, lookahead=1, store_first=False)
    return GeneralParams(
        bi=best[3],
        bj=best[4],
        partition="balanced",
        inner="lshape",
        tail=0,
        lookahead=lookahead,
        store_first=False,
    )


@settings(max_examples=examples(200), deadline=None)
@given(
    m=st.integers(1, 400),
    k=dims,
    n=st.integers(1, 400),
    params=params_strategy,
    slots=st.integers(1, 90),
)
def test_closed_forms_equal_the_listings(m, k, n, params, slots):
    # slots_needed and default_params no longer list blocks, units or every band size (a huge
    # shape or slot count stays cheap); they must give what the listings gave.
    shape, machine = Shape(m, k, n), Machine(slots=slots)
    assert slots_needed(shape, machine, params) == _slots_needed_by_listing(shape, machine, params)
    assert default_params(shape, machine) == _default_params_by_search(shape, machine)
