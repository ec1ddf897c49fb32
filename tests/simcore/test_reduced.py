"""Reduced shapes (simcore/ga1/reduced.py): the same kinds of blocks as the full schedule, read
from the engine's own order (its bands, blocks and strips, block by block), the same edges and
k steps, no larger than the full shape, reduced once for all, and a schedule that verifies."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore import Machine, Shape
from simcore.ga1 import engine
from simcore.ga1.engine import units
from simcore.ga1.engine.plan import TAIL
from simcore.ga1.generator import GeneralParams, default_params, slots_needed
from simcore.ga1.generator.strips import StripParams
from simcore.ga1.reduced import (
    reduced_blocked,
    reduced_general,
    reduced_generator,
    reduced_kouter,
    reduced_strips,
)
from simcore.ga1.schedules import ScheduleError
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params, strip_params

SIDES = st.integers(1, 240)
QUICK = settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _line(lengths: list[int], i: int) -> tuple[int, bool, bool, int]:
    last = len(lengths) - 1
    return lengths[i], i == 0, i == last, lengths[i + 1] if i < last else 0


def engine_block_kinds(generator: engine.Generator) -> frozenset[tuple[object, ...]]:
    """Every block of the engine's order, as its band's and column's kinds and its k direction."""
    st_ = generator._begin()
    found: set[tuple[object, ...]] = set()
    strips = isinstance(generator, engine.Strips)
    for u0 in range(units.unit_count(st_, 0, 0, 0)):
        count = units.unit_count(st_, 1, u0, 0)
        blocks = [units.block_at(st_, u0, u1) for u1 in range(count)]
        if strips:  # a strip: its blocks in visiting order are its bands
            heights = [b[2] for b in blocks]
            found |= {(_line(heights, v), blocks[v][4], int(blocks[v][6])) for v in range(count)}
            continue
        by_column = sorted(blocks, key=lambda b: b[3])
        widths = [b[4] for b in by_column]
        for block in blocks:
            found.add(
                (
                    block[2],
                    block[4],
                    by_column.index(block) == 0,
                    block[3] + block[4] == by_column[-1][3] + widths[-1],
                    int(block[6]),
                    blocks.index(block) == 0,
                    blocks.index(block) == count - 1,
                )
            )
    rows = [units.block_at(st_, u0, 0)[2] for u0 in range(units.unit_count(st_, 0, 0, 0))]
    found |= {("band", _line(rows, r)) for r in range(len(rows))} if not strips else set()
    return frozenset(found)


def same_edges(full: Shape, small: Shape, T: int) -> None:
    for a, b, ta, tb in zip(
        (full.m, full.k, full.n), (small.m, small.k, small.n), full.tiles(T), small.tiles(T)
    ):
        assert ta * T - a == tb * T - b and 1 <= tb <= ta


def check(generator: engine.Generator, small: engine.Generator) -> None:
    T = generator.machine.T
    same_edges(generator.shape, small.shape, T)
    assert small.products <= generator.products
    assert engine_block_kinds(small) == engine_block_kinds(generator)
    assert int(small._begin()[TAIL]) == int(generator._begin()[TAIL])
    assert reduced_generator(small).shape == small.shape  # reduced once for all


@QUICK
@given(
    m=SIDES,
    k=SIDES,
    n=SIDES,
    params=general_params(block=6, tail=4, lookahead=20, ramp=3),
    T=st.sampled_from([4, 8]),
)
def test_general_reductions_keep_every_kind_of_block(
    m: int, k: int, n: int, params: GeneralParams, T: int
) -> None:
    shape = Shape(m, k, n)
    machine = Machine(T=T)
    machine = machine.replace(slots=slots_needed(shape, machine, params) + 2)
    generator = engine.General(shape, machine, params)
    small = reduced_generator(generator)
    if params.structure == "blocks":
        check(generator, small)
    else:
        same_edges(shape, small.shape, T)
    assert small.verify().ok


@QUICK
@given(m=SIDES, k=SIDES, n=SIDES, params=strip_params(), slots=st.integers(8, 40))
def test_strip_reductions_keep_every_kind_of_block(
    m: int, k: int, n: int, params: StripParams, slots: int
) -> None:
    generator = engine.Strips(Shape(m, k, n), Machine(T=8, slots=slots), params)
    try:
        generator._begin()
    except ScheduleError:
        return
    small = reduced_generator(generator)

    def widths(g: engine.Generator) -> set[int]:
        state = g._begin()
        return {units.block_at(state, u0, 0)[4] for u0 in range(units.unit_count(state, 0, 0, 0))}

    assert widths(small) == widths(generator)
    check(generator, small)
    assert small.verify().ok


@QUICK
@given(
    m=SIDES,
    k=SIDES,
    n=SIDES,
    bi=st.integers(1, 5),
    bj=st.integers(1, 5),
    buffers=st.integers(1, 3),
    order=st.sampled_from(["row", "col"]),
)
def test_chapter_reductions(
    m: int, k: int, n: int, bi: int, bj: int, buffers: int, order: str
) -> None:
    shape, machine = (
        Shape(m, k, n),
        Machine(T=8, slots=max(bi * bj + buffers * (bi + bj), 3 * buffers)),
    )
    small = reduced_blocked(shape, machine, bi, bj, buffers, order)
    same_edges(shape, small, 8)
    (Mt, Kt, Nt), (mt, kt, nt) = shape.tiles(8), small.tiles(8)

    def edge(total: int, size: int) -> set[int]:
        return {min(size, total - s) for s in range(0, total, size)}

    assert edge(Mt, bi) == edge(mt, bi) and edge(Nt, bj) == edge(nt, bj)
    assert kt % buffers == Kt % buffers and (kt == Kt or kt >= 2 * buffers)
    assert engine.Blocked(small, machine, bi, bj, buffers, order).verify().ok
    small = reduced_kouter(shape, machine, buffers)
    assert all(s % buffers == f % buffers for s, f in zip(small.tiles(8), shape.tiles(8)))
    assert engine.KOuter(small, machine, buffers).verify().ok


def test_an_llm_layer_reduces_to_a_few_thousand_products() -> None:
    # LLaMA-7B's feed-forward product at a 4096-token prefill: 3.6 * 10^8 tile products.
    shape, machine = Shape(4096, 4096, 11008), Machine(slots=64)
    generator = engine.General(shape, machine, default_params(shape, machine))
    small = reduced_generator(generator)
    assert (
        isinstance(small, engine.General)
        and small.products < 10_000
        and small.params == generator.params
    )
    assert small.verify().ok
    strips = engine.Strips(shape, Machine(slots=16), StripParams(split=2, tail=2, protect=8))
    assert reduced_strips(shape, Machine(slots=16), strips.params).tiles(8)[0] < 64


def test_a_small_shape_is_its_own_reduction() -> None:
    shape, machine = Shape(24, 40, 16), Machine(slots=16)
    params = GeneralParams(bi=2, bj=2)
    assert reduced_general(shape, machine, params) == reduced_general(
        reduced_general(shape, machine, params), machine, params
    )
