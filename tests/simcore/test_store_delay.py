"""The compiler's store delay (CompileOptions.store_delay): every program is exact and
hazard-free, needs no more slots than without the delay, and on the instances where the families
miss the proven optimum it reaches it (benchmarks/optimum/grid_store_delay.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from simcore import Machine, Shape
from simcore.ga1.engine import time_program
from simcore.ga1.generator import (
    CompileOptions,
    StripParams,
    compile_products,
    strip_order,
    strip_slots_needed,
)
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.shape import parse_shape
from tests.helpers.examples import examples
from tests.helpers.schedule_checks import run_exact

OPTIMA = Path(__file__).parent / "data" / "searched_optima.json"


@settings(max_examples=examples(40), deadline=None)
@given(
    m=st.integers(1, 40),
    k=st.integers(1, 40),
    n=st.integers(1, 40),
    seed=st.integers(0, 10**6),
    lookahead=st.integers(0, 12),
    store_first=st.booleans(),
    protect=st.integers(0, 8),
    store_delay=st.integers(0, 6),
)
def test_any_order_compiles_exact_with_a_delay(
    m: int,
    k: int,
    n: int,
    seed: int,
    lookahead: int,
    store_first: bool,
    protect: int,
    store_delay: int,
) -> None:
    shape = Shape(m, k, n)
    Mt, Kt, Nt = shape.tiles(8)
    order = [(i, j, kk) for i in range(Mt) for j in range(Nt) for kk in range(Kt)]
    np.random.default_rng(seed).shuffle(order)
    order = [(int(i), int(j), int(kk)) for i, j, kk in order]
    machine = Machine(slots=Mt * Nt + 2)  # a random order may keep every accumulator live
    options = CompileOptions(lookahead, store_first, protect, store_delay)
    program = compile_products(shape, machine, order, options)
    _cycles, hazards = run_exact(shape, machine, program, seed % 100)
    assert hazards == []


@settings(max_examples=examples(60), deadline=None)
@given(
    m=st.integers(8, 96),
    k=st.integers(8, 96),
    n=st.integers(8, 96),
    slots=st.integers(4, 12),
    reserve=st.integers(1, 3),
    lookahead=st.integers(0, 16),
    protect=st.integers(0, 12),
    store_delay=st.integers(1, 8),
)
def test_a_delay_needs_no_more_slots(
    m: int,
    k: int,
    n: int,
    slots: int,
    reserve: int,
    lookahead: int,
    protect: int,
    store_delay: int,
) -> None:
    # On as few slots as a strip schedule needs, the delayed stores give way to a product that
    # waits for a slot, so the program compiles with the delay as it does without it.
    shape, machine = Shape(m, k, n), Machine(slots=slots)
    params = StripParams(reserve=reserve, split=0, tail=0, lookahead=lookahead, protect=protect)
    assume(strip_slots_needed(shape, machine, params) <= slots)
    order = strip_order(shape, machine, params)
    compile_products(shape, machine, order, CompileOptions(lookahead, False, protect))
    delayed = CompileOptions(lookahead, False, protect, store_delay)
    _cycles, hazards = run_exact(shape, machine, compile_products(shape, machine, order, delayed))
    assert hazards == []


def proven(shape: str, machine: str) -> int:
    rows = json.loads(OPTIMA.read_text())
    return next(
        int(row["optimum"])
        for row in rows
        if (row["shape"], row["machine"]) == (shape, machine) and row["complete"]
    )


# Orders and options the grid found (grid_store_delay.py): C tiles by (i, j, k) products.
CASES = [
    (
        "16x16x24",
        "slots=5,dma_setup=4",
        [(0, 0, 0), (1, 0, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
        + [(1, 1, 0), (0, 1, 0), (0, 2, 0), (1, 2, 0), (0, 2, 1), (1, 2, 1)],
        1,
    ),
    (
        "16x16x16",
        "slots=6,dma_setup=4",
        [(0, 0, 0), (0, 1, 0), (0, 0, 1), (0, 1, 1), (1, 0, 1), (1, 1, 1), (1, 0, 0), (1, 1, 0)],
        2,
    ),
]


@pytest.mark.parametrize("shape_text, overrides, order, store_delay", CASES)
def test_a_delay_reaches_what_the_families_miss(
    shape_text: str, overrides: str, order: list[tuple[int, int, int]], store_delay: int
) -> None:
    shape, machine = parse_shape(shape_text), machine_from(parse_overrides(overrides), None)
    optimum = proven(shape_text, overrides)

    def cycles(delay: int) -> int:
        program = compile_products(shape, machine, order, CompileOptions(1, False, 0, delay))
        return time_program(machine, program).cycles

    delayed = compile_products(shape, machine, order, CompileOptions(1, False, 0, store_delay))
    measured, hazards = run_exact(shape, machine, delayed)
    assert hazards == [] and measured == cycles(store_delay)
    assert optimum <= measured <= optimum * 1.01  # the optimum or within 1% of it
    assert cycles(0) > measured  # the same order and options without the delay are slower
