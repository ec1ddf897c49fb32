"""The delayed space: the general and strip families with a searched store delay, registered
under their own names, compiled by the engine exactly as the reference compiler does."""

from __future__ import annotations

import numpy as np
import pytest

from search_spaces import registry
from search_spaces.delayed import MAX_STORE_DELAY, DelayedGeneralFamily, DelayedStripsFamily
from search_spaces.general import GeneralFamily
from search_spaces.strips import StripsFamily
from simcore import Machine, Shape
from simcore.ga1.generator import general, strips

SHAPE = Shape(128, 128, 128)
STRIP_POINT = {
    "strip_axis": "col",
    "reserve": 2,
    "strip_order": "narrow",
    "first_reverse": False,
    "partition": "balanced",
    "split": 0,
    "flip": True,
    "tail": 0,
    "lookahead": 10,
    "store_first": False,
    "protect": 24,
}


def test_the_space_is_a_default_and_its_families_have_their_own_names() -> None:
    assert "delayed" in registry.available() and "delayed" in registry.DEFAULT_SPACES
    assert not {"general", "strips"} & set(registry.DEFAULT_SPACES)  # delayed holds them
    names = [f.name for f in registry.get("delayed").families]
    assert names == ["general_delayed", "strips_delayed"]
    registry.families(("chapter", "general", "strips", "delayed"))  # no clash of names


@pytest.mark.parametrize(
    "delayed, plain",
    [(DelayedGeneralFamily(), GeneralFamily()), (DelayedStripsFamily(), StripsFamily())],
)
def test_one_parameter_more_than_the_plain_family(delayed, plain) -> None:
    extra = [p for p in delayed.params(SHAPE, 8) if p not in plain.params(SHAPE, 8)]
    assert [p.name for p in extra] == ["store_delay"]
    assert extra[0].domain.low == 0 and extra[0].domain.high == MAX_STORE_DELAY
    machine = Machine(slots=16)
    seeds, plain_seeds = delayed.seed_points(SHAPE, machine), plain.seed_points(SHAPE, machine)
    # the plain family's seeds without a delay, then (strips) the tight point with a delay of 1
    assert [{**p, "store_delay": 0} for p in plain_seeds] == seeds[: len(plain_seeds)]
    assert [s["store_delay"] for s in seeds[len(plain_seeds) :]] in ([], [1])
    for seed in seeds:
        assert delayed.violation(seed, SHAPE, machine) <= 0


@pytest.mark.parametrize("delay", range(MAX_STORE_DELAY + 1))
def test_a_delayed_strip_point_is_the_reference_compilers_program(delay: int) -> None:
    shape, machine = Shape(64, 48, 40), Machine(slots=12, dma_setup=4)
    family = DelayedStripsFamily()
    point = {**STRIP_POINT, "store_delay": delay}
    ours = family.generator(point, shape, machine).program()
    reference = strips(shape, machine, family.to_params(point))
    assert np.array_equal(ours.code, reference.code)
    blocks = DelayedGeneralFamily()
    seed = {**blocks.seed_points(shape, machine)[0], "store_delay": delay}
    ours = blocks.generator(seed, shape, machine).program()
    assert np.array_equal(ours.code, general(shape, machine, blocks.to_params(seed)).code)


def test_the_delay_shortens_the_tuned_strip_schedule_at_16_slots() -> None:
    # 128^3 on 16 slots: the default run's best strip point, then the same with a delay of 2
    machine = Machine(slots=16)
    plain = StripsFamily().generator(STRIP_POINT, SHAPE, machine).timing().cycles
    delayed = DelayedStripsFamily().generator({**STRIP_POINT, "store_delay": 2}, SHAPE, machine)
    assert plain == 58_260 and delayed.timing().cycles == 58_224


@pytest.mark.parametrize(
    "shape, overrides, optimum",
    [
        (Shape(16, 16, 24), {"slots": 6, "dma_setup": 4}, 160),
        (Shape(24, 16, 16), {"slots": 6, "dma_setup": 4}, 160),
        (Shape(16, 24, 16), {"slots": 4}, 484),
    ],
)
def test_the_tight_strip_seed_is_the_proven_optimum(shape, overrides, optimum) -> None:
    machine = Machine(**overrides)
    family = DelayedStripsFamily()
    tight = family.seed_points(shape, machine)[-1]
    assert tight["store_delay"] == 1
    assert family.generator(tight, shape, machine).timing().cycles == optimum
