"""Energy and area of GA-1 and systolic runs: a hand-worked GA-1 program, counts read from the
oracles' own results, and properties (non-negative, the breakdown sums to the total, energy never
falls when a count grows)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.energy import (
    CATEGORIES,
    CountError,
    Ga1Counts,
    VectorWork,
    ga1_cost,
    ga1_counts,
    ga1_counts_of_program,
    load_technology,
    systolic_cost,
    systolic_counts,
)
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.schedules import blocked, kouter
from simcore.ga1.timing import run_timing
from simcore.shape import Shape
from simcore.systolic import simulate_systolic
from simcore.systolic.closed_form import cycles as closed_form_cycles
from tests.helpers.examples import examples
from tests.helpers.systolic_strategies import designs, operands, shapes

TECH = load_technology()
CHAPTER_PROGRAM = [
    ("zero", 2),
    ("load", 0, "A", 0, 0),
    ("load", 1, "B", 0, 0),
    ("mxu", 2, 0, 1),
    ("mxu", 2, 0, 1),
    ("store", 2, "C", 0, 0),
]


def _total_matches_breakdown(cost) -> None:  # type: ignore[no-untyped-def]
    assert [c.name for c in cost.categories] == list(CATEGORIES)
    parts = sum(c.pj for c in cost.categories)
    assert cost.energy_pj == pytest.approx(parts) and cost.energy_pj >= 0
    assert all(item.amount >= 0 and item.each >= 0 for c in cost.categories for item in c.items)
    assert cost.area_mm2 >= 0


def test_the_chapters_six_instruction_program_by_hand() -> None:
    machine = Machine()  # T = 8, 16 slots: a 1 KiB scratchpad of 8-bit words
    program = Program.from_tuples(CHAPTER_PROGRAM)
    counts = ga1_counts_of_program(run_timing(machine, program), program)
    assert counts == Ga1Counts(84, 2, 1, 2, 1)
    cost = ga1_cost(machine, counts, TECH)
    words, sram = 64, TECH.sram_read_pj(1.0)
    assert cost.category("compute").pj == pytest.approx(2 * 512 * 0.3)
    # loads and zero write 3 tiles, the store reads one, each product reads 3 and writes 1
    assert cost.category("on_chip").pj == pytest.approx((3 + 1 + 2 * 4) * words * sram)
    assert cost.category("off_chip").pj == pytest.approx(3 * words * 162.5 + 3 * 70.0)
    assert not cost.category("register").counted and cost.breakdown()["register"] is None
    assert cost.edp == pytest.approx(cost.energy_pj * 84)
    assert cost.energy_per_mac_pj == pytest.approx(cost.energy_pj / 1024)
    assert cost.area_mm2 == pytest.approx((64 * 636 + 1 * 4049 + 16 * 173.2) / 1e6)


@pytest.mark.parametrize(
    "build",
    [
        lambda s, m: blocked(s, m, 2, 2),
        lambda s, m: blocked(s, m, 1, 4, 1, "col"),
        lambda s, m: kouter(s, m),
    ],
)
def test_zeros_read_from_timing_equal_the_programs_own_count(build) -> None:  # type: ignore[no-untyped-def]
    machine, shape = Machine(slots=32), Shape(40, 24, 32)
    program = build(shape, machine)
    timing = run_timing(machine, program)
    assert ga1_counts(timing, machine) == ga1_counts_of_program(timing, program)


def test_a_program_with_other_vector_instructions_is_counted_from_the_program() -> None:
    machine = Machine()
    program = Program.from_tuples([("load", 0, "A", 0, 0), ("exp", 1, 0), ("store", 1, "A", 0, 0)])
    counts = ga1_counts_of_program(run_timing(machine, program), program)
    assert (counts.loads, counts.stores, counts.zeros, counts.other_vector) == (1, 1, 0, 1)
    assert counts.vector == VectorWork(special=1, tile_reads=1, tile_writes=1)
    cost = ga1_cost(machine, counts, TECH)  # 64 exps, a tile read and written by the vector unit
    compute = {item.name: item.total for item in cost.category("compute").items}
    assert compute["special functions: exp, sfu (T^2 per instruction)"] == 64 * TECH.sfu_pj
    on_chip = {item.name: item.amount for item in cost.category("on_chip").items}
    assert (
        on_chip["scratchpad reads: vector unit"] == on_chip["scratchpad writes: vector unit"] == 64
    )
    assert not any("vector" in note for note in cost.not_counted)
    without = dataclasses.replace(TECH, vector_add_pj=None)  # a table without the vector lines
    assert "the vector unit's arithmetic" in ga1_cost(machine, counts, without).not_counted[0]


def test_counts_must_be_whole_and_non_negative() -> None:
    with pytest.raises(CountError, match="loads must be a non-negative integer"):
        Ga1Counts(10, -1, 0, 0, 0)


ga1_counts_strategy = st.builds(Ga1Counts, *(st.integers(0, 10**6) for _ in range(6)))
machines = st.builds(
    Machine,
    T=st.sampled_from([4, 8, 16]),
    slots=st.integers(3, 256),
    dma_words_per_cycle=st.integers(1, 64),
)


@given(
    machines,
    ga1_counts_strategy,
    st.sampled_from(["cycles", "loads", "stores", "products", "zeros"]),
    st.integers(1, 1000),
)
def test_ga1_energy_is_non_negative_sums_up_and_grows_with_every_count(
    machine, counts, field, more
) -> None:  # type: ignore[no-untyped-def]
    cost = ga1_cost(machine, counts, TECH)
    _total_matches_breakdown(cost)
    bigger = ga1_cost(
        machine, dataclasses.replace(counts, **{field: getattr(counts, field) + more}), TECH
    )
    assert bigger.energy_pj >= cost.energy_pj and bigger.edp >= cost.edp
    if field != "cycles":
        assert bigger.energy_pj > cost.energy_pj


@settings(max_examples=examples(60), deadline=None)
@given(designs(max_side=5), shapes())
def test_systolic_counts_from_the_formula_equal_the_cycle_models_moves(design, shape) -> None:  # type: ignore[no-untyped-def]
    a, b = operands(shape)
    result = simulate_systolic(design, a, b)
    from_model = systolic_counts(design, shape, result.cycles, TECH, result.traffic)
    from_formula = systolic_counts(design, shape, closed_form_cycles(design, shape), TECH)
    assert from_model == from_formula
    assert result.hbm_words == from_model.hbm_reads + from_model.hbm_writes
    _total_matches_breakdown(systolic_cost(design, from_model, TECH))


COUNT_FIELDS = (
    "fetch_writes",
    "writeback_reads",
    "hbm_reads",
    "hbm_writes",
    "transfers",
    "stationary_reads",
    "stationary_writes",
    "accumulator_reads",
    "accumulator_writes",
    "forward_reads",
    "forward_writes",
)
TRAFFIC_FIELDS = ("a_reads", "b_reads", "psum_writes", "psum_readbacks", "c_writes")


@settings(max_examples=examples(80), deadline=None)
@given(
    designs(max_side=8),
    shapes(40, 40, 40),
    st.sampled_from(COUNT_FIELDS + TRAFFIC_FIELDS + ("macs",)),
    st.integers(1, 10**4),
)
def test_systolic_energy_grows_with_every_count(design, shape, field, more) -> None:  # type: ignore[no-untyped-def]
    counts = systolic_counts(design, shape, closed_form_cycles(design, shape), TECH)
    cost = systolic_cost(design, counts, TECH)
    _total_matches_breakdown(cost)
    if field in TRAFFIC_FIELDS:
        traffic = dataclasses.replace(
            counts.traffic, **{field: getattr(counts.traffic, field) + more}
        )
        grown = dataclasses.replace(counts, traffic=traffic)
    else:
        grown = dataclasses.replace(counts, **{field: getattr(counts, field) + more})
    assert systolic_cost(design, grown, TECH).energy_pj > cost.energy_pj


def test_shadow_registers_cost_register_energy_and_area() -> None:
    from simcore.systolic import Assumptions, SystolicArray, SystolicDesign

    shape = Shape(64, 64, 64)
    plain = SystolicDesign(SystolicArray(16, 16), "ws", assumptions=Assumptions(shadow=False))
    shadowed = SystolicDesign(SystolicArray(16, 16), "ws", assumptions=Assumptions(shadow=True))
    costs = [systolic_cost(d, systolic_counts(d, shape, 1, TECH), TECH) for d in (plain, shadowed)]
    extra = costs[1].category("register").pj - costs[0].category("register").pj
    assert extra == pytest.approx(
        64 * 64 * (0.03 + 0.03)
    )  # every weight written and read once more
    assert costs[1].area_mm2 - costs[0].area_mm2 == pytest.approx(256 * 36.2 / 1e6)
