"""The systolic machine's vector unit: passes over its lanes, composed steps as GA-1 composes
them, its port share, and refusals."""

from __future__ import annotations

from fractions import Fraction

import pytest

from simcore.systolic.vector_unit import STEP_LANE_OPS, VectorUnit, default_vector_unit, lane_ops


def test_a_pass_costs_its_lane_operations() -> None:
    unit = VectorUnit(lanes=16, special=4)
    assert unit.pass_cycles(("relu",)) == 1
    assert unit.pass_cycles(("gelu",)) == 4 + 2 + 4 * 2  # 4 multiplies, 2 adds, exp and divide
    assert unit.pass_cycles(("silu",)) == 2 + 4 * 2
    assert unit.pass_cycles(("bias", "gelu")) == 15


def test_a_block_takes_its_passes_or_its_words_at_the_port() -> None:
    unit = VectorUnit(lanes=16, special=4, port_words=Fraction(4))
    assert unit.cycles(("relu",), 100, Fraction(100), Fraction(100)) == 25  # the port: 100 / 4
    assert unit.cycles(("gelu",), 100, Fraction(100), Fraction(100)) == 7 * 14  # the passes
    assert default_vector_unit(128).lanes == 128


def test_lane_operations_by_kind() -> None:
    assert lane_ops(("bias", "gelu"), 10) == {"add": 30, "mul": 40, "sfu": 10, "div": 10}
    assert set(STEP_LANE_OPS) == {"bias", "residual", "relu", "scale", "gelu", "silu"}


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"lanes": 0}, "lanes"),
        ({"lanes": 4, "special": 0}, "special"),
        ({"lanes": 4, "port_words": -1}, "port_words"),
    ],
)
def test_bad_values_are_refused(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VectorUnit(**fields)
