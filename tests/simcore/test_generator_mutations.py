"""The generators' compiled twins (simcore/ga1/engine) make the reference generators'
decisions; a mistake in one yields another valid schedule, which the chapter's checks cannot see.
The reference program can: each mutant, a Rewrite of one engine function's syntax tree
(tests/helpers/ast_mutation.py), changes the program of at least one of GENERATOR_CASES.
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore import Machine, Shape
from simcore.ga1.generator import GeneralParams, StripParams, general, strips
from tests.helpers.ast_mutation import Rewrite
from tests.helpers.simcore_copies import load_simcore_copy

GENERATOR_MUTANTS: dict[str, tuple[Rewrite, ...]] = {
    "a load takes a slot freed by a product before one freed by a store": (
        Rewrite(
            "ga1.engine.compile_steps", "take_slot", "$loads if for_load else $others", "$others"
        ),
    ),
    "eviction ties go to the largest slot": (
        Rewrite("ga1.engine.evict", "add", "((1 << bits) - 1) - $s", "$s"),
        Rewrite("ga1.engine.evict", "farthest", "((1 << bits) - 1) - $s", "$s"),
    ),
    "the rotating window's next unit always waits a period": (
        Rewrite(
            "ga1.engine.order",
            "unit_product",
            "st[pos + POS_NEXT_ENTRY] <= $t",
            "st[pos + POS_NEXT_ENTRY] < $t",
        ),
    ),
    "a block's row operands are not reused by the row band's next block": (
        Rewrite("ga1.engine.order", "general_next_row", "$b % st[N_CB] == 0", "True"),
    ),
    "the tail's products run step by step": (
        Rewrite("ga1.engine.blocks", "block_products", "s < plain", "s < kt"),
    ),
    "a strip's row operands are not reused by the next strip": (
        Rewrite("ga1.engine.strip_order", "strip_next_row", "strip + 1 >= st[N_STRIPS]", "True"),
    ),
    "the next strip's blocks are looked up top to bottom even when it runs bottom to top": (
        Rewrite(
            "ga1.engine.strip_order",
            "strip_next_row",
            "strip_block(st, $strip, $flipped if $reversed else $band)",
            "strip_block(st, $strip, $band)",
        ),
    ),
    "a prefetch evicts protected tiles": (
        Rewrite("ga1.engine.compile_steps", "advance", "horizon = $spared", "horizon = key"),
    ),
}
GENERATOR_CASES = (
    ("general", (40, 48, 56), 14, dict(bi=2, bj=3, lookahead=8, store_first=True)),
    (
        "general",
        (48, 40, 64),
        24,
        dict(bi=3, bj=3, block_order="col", tail=2, k_direction="up", inner="zigzag", lookahead=3),
    ),
    ("general", (56, 32, 48), 12, dict(bi=2, bj=3, structure="rotate", ramp=2, lookahead=10)),
    (
        "general",
        (64, 40, 40),
        20,
        dict(bi=3, bj=2, structure="rotate", block_order="col", serpentine=False, lookahead=6),
    ),
    (
        "general",
        (36, 33, 28),
        11,
        dict(bi=2, bj=3, tail=0, lookahead=0, structure="rotate"),
    ),  # a search found it: eviction ties
    ("strips", (64, 48, 72), 16, dict(split=2, tail=2, protect=8)),
    (
        "strips",
        (72, 40, 64),
        12,
        dict(axis="row", reserve=3, first_reverse=True, split=0, protect=24, lookahead=20),
    ),
    (
        "strips",
        (80, 24, 56),
        20,
        dict(strip_order="wide", partition="uniform", flip=False, tail=1, store_first=True),
    ),
)


@pytest.mark.parametrize("name", GENERATOR_MUTANTS)
def test_generator_mutant_is_caught_by_the_reference_program(name: str) -> None:
    copy = load_simcore_copy(GENERATOR_MUTANTS[name])
    reference = {"general": (general, GeneralParams), "strips": (strips, StripParams)}
    ours = {
        "general": (copy.ga1.engine.General, copy.ga1.generator.GeneralParams),
        "strips": (copy.ga1.engine.Strips, copy.ga1.generator.StripParams),
    }
    differs = []
    for family, dims, slots, params in GENERATOR_CASES:
        build, params_type = reference[family]
        expected = build(Shape(*dims), Machine(slots=slots), params_type(**params)).code
        generator, copy_params = ours[family]
        try:
            got = (
                generator(copy.Shape(*dims), copy.Machine(slots=slots), copy_params(**params))
                .program()
                .code
            )
        except Exception:  # noqa: BLE001 - a crash is caught too
            differs.append(dims)
            continue
        if not np.array_equal(got, expected):
            differs.append(dims)
    assert differs, f"NOT CAUGHT: {name}"
