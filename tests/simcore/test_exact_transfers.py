"""The fewest transfers of the pebbling game: a lower bound on every program's loads plus stores,
at least the I/O bound's, and the decision questions that start from it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore import Machine, Shape, simulate
from simcore.ga1.exact.transfers import fewest_transfers, fewest_transfers_of
from simcore.ga1.generator import general, slots_needed
from simcore.ga1.lower_bounds import io_bound_tiles
from simcore.ga1.verify import verify_matmul
from tests.helpers.examples import examples
from tests.helpers.generator_strategies import general_params

tiny_tiles = st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2))


def transfers_of(program) -> int:  # type: ignore[no-untyped-def]
    counts = program.opcode_counts()
    return counts["load"] + counts["store"]


def compulsory(tiles: tuple[int, int, int]) -> int:
    Mt, Kt, Nt = tiles
    return Mt * Kt + Kt * Nt + Mt * Nt


def test_one_product_moves_its_three_tiles():
    assert fewest_transfers_of((1, 1, 1), 3) == 3


def test_a_roomy_scratchpad_moves_each_tile_once():
    assert fewest_transfers_of((2, 2, 2), 12) == compulsory((2, 2, 2)) == 12


def test_a_tight_scratchpad_moves_more_than_the_io_bound_says():
    shape, machine = Shape(16, 16, 16), Machine(slots=4)
    assert fewest_transfers(shape, machine) == 14 > io_bound_tiles(shape, machine) == 13


def test_three_slots_are_the_least_and_large_instances_are_left_alone():
    with pytest.raises(ValueError, match="3 slots"):
        fewest_transfers_of((1, 1, 1), 2)
    assert fewest_transfers(Shape(32, 32, 32), Machine(slots=8)) is None


@settings(max_examples=examples(25), deadline=None)
@given(tiles=tiny_tiles, slots=st.integers(3, 8))
def test_never_below_the_io_bound_and_never_rising_with_more_slots(tiles, slots):
    Mt, Kt, Nt = tiles
    shape, machine = Shape(8 * Mt, 8 * Kt, 8 * Nt), Machine(slots=slots)
    fewest = fewest_transfers_of(tiles, slots)
    assert fewest is not None
    assert compulsory(tiles) <= io_bound_tiles(shape, machine) <= fewest
    assert fewest_transfers_of(tiles, slots + 1) <= fewest


@settings(max_examples=examples(40), deadline=None)
@given(
    tiles=tiny_tiles,
    slots=st.integers(3, 8),
    params=general_params(block=2, tail=2, lookahead=6, ramp=2),
)
def test_never_above_a_verified_programs_transfers_or_cycles(tiles, slots, params):
    Mt, Kt, Nt = tiles
    shape, machine = Shape(8 * Mt, 8 * Kt, 8 * Nt), Machine(slots=slots)
    if slots_needed(shape, machine, params) > slots:
        return
    program = general(shape, machine, params)
    verification, _ = verify_matmul(machine, program, shape)
    assert verification.ok
    fewest = fewest_transfers(shape, machine)
    assert fewest is not None and fewest <= transfers_of(program)
    assert fewest * machine.dma_cycles <= simulate(machine, program).cycles


def test_fewer_slots_than_a_product_needs_have_no_answer():
    assert fewest_transfers(Shape(8, 8, 8), Machine(slots=2)) is None
