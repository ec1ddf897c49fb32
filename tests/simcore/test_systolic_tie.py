"""GA-1's matrix unit as a systolic array: mxu_array=RxC derives mxu_cycles and mxu_fill."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.ga1.machine import Machine, MachineError, machine_from, parse_overrides
from simcore.shape import Shape
from simcore.systolic import (
    SystolicArray,
    SystolicDesign,
    schedule,
    simulate_systolic,
    simulate_systolic_reference,
)
from simcore.systolic.tie import mxu_timing, parse_array, pes


def test_default_machine_is_unchanged() -> None:
    assert machine_from(parse_overrides("")) == Machine()
    assert machine_from({}, 64) == Machine(slots=64)
    assert Machine().key() == (
        "T=8,slots=16,dma_setup=16,dma_words_per_cycle=16,mxu_cycles=8,"
        "mxu_fill=8,vpu_lanes=16,sfu_lanes=4"
    )


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        ("8x8", (8, 14)),
        ("16x16", (8, 14)),
        ("4x4", (32, 6)),
        ("4x8", (16, 10)),
        ("8x4", (16, 10)),
        ("3x3", (72, 2)),
        ("1x1", (512, 0)),
    ],
)
def test_documented_timings_at_t8(array: str, expected: tuple[int, int]) -> None:
    machine = machine_from(parse_overrides(f"mxu_array={array}"))
    assert (machine.mxu_cycles, machine.mxu_fill) == expected
    assert mxu_timing(8, *parse_array(array)) == expected


@pytest.mark.parametrize("T", [1, 5, 8, 12, 16])
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 8, 16])
@pytest.mark.parametrize("cols", [1, 3, 4, 8, 20])
def test_closed_form(T: int, rows: int, cols: int) -> None:
    kt, nt = -(-T // rows), -(-T // cols)
    k_last, n_last = T - (kt - 1) * rows, T - (nt - 1) * cols
    assert mxu_timing(T, rows, cols) == (kt * nt * T, k_last + n_last - 2)


def test_bigger_arrays_give_fewer_cycles_per_product() -> None:
    cycles = [mxu_timing(8, side, side)[0] for side in (1, 2, 4, 8)]
    assert cycles == sorted(cycles, reverse=True) and len(set(cycles)) == 4
    # Past the tile edge an array has nothing more to do in one T x T x T product.
    assert mxu_timing(8, 16, 16) == mxu_timing(8, 8, 8)
    assert Machine().replace(mxu_cycles=mxu_timing(8, 4, 4)[0]).peak_macs_per_cycle == 16


@pytest.mark.parametrize(("rows", "cols"), [(8, 8), (4, 4), (2, 8), (8, 1)])
def test_back_to_back_products_match_the_schedule_and_cycle_model(rows: int, cols: int) -> None:
    """P products in a row (B side by side) take first load + P intervals + fill, cycle-exact."""
    T, P = 8, 3
    interval, fill = mxu_timing(T, rows, cols)
    design = SystolicDesign(SystolicArray(rows, cols), "ws")
    first_load = min(rows, T)
    run = schedule(design, Shape(T, T, P * T))
    assert run.cycles == first_load + P * interval + fill
    rng = np.random.default_rng(3)
    a, b = rng.integers(-9, 10, (T, T)), rng.integers(-9, 10, (T, P * T))
    for engine in (simulate_systolic, simulate_systolic_reference):
        result = engine(design, a, b)
        assert result.cycles == run.cycles
        np.testing.assert_array_equal(result.c, a @ b)


def test_t_override_is_used() -> None:
    machine = machine_from(parse_overrides("T=16,mxu_array=8x8"))
    assert (machine.T, machine.mxu_cycles, machine.mxu_fill) == (16, 4 * 16, 14)
    assert machine_from({"mxu_array": (4, 4)}, 32).mxu_cycles == 32


def test_parse_overrides_returns_the_array_as_a_tuple() -> None:
    assert parse_overrides("mxu_array=8x16, slots=32") == {"mxu_array": (8, 16), "slots": 32}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mxu_array=8x8,mxu_cycles=4", "do not also give mxu_cycles"),
        ("mxu_array=8x8,mxu_fill=0", "do not also give mxu_fill"),
        ("mxu_array=8", "malformed array"),
        ("mxu_array=0x8", "must be positive"),
        ("mxu_array=axb", "malformed array"),
        ("mxu_arrays=8x8", "unknown machine parameter"),
        ("mxu_array=8x8,T=0", "T must not be zero"),
    ],
)
def test_bad_mxu_array(text: str, message: str) -> None:
    with pytest.raises(MachineError, match=message):
        machine_from(parse_overrides(text))


def test_bad_tuple_value() -> None:
    with pytest.raises(MachineError, match="RxC"):
        machine_from({"mxu_array": (0, 8)})


def test_pes() -> None:
    assert pes(8, 16) == 128
    with pytest.raises(ValueError):
        pes(0, 4)
