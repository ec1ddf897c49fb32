"""The vector unit of a systolic machine: every non-GEMM kind's work, the chunk recurrence held
to the cycle-level reference (property tests), hand-timed runs, bounds, energy and the
machine file's [vector] table."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from helpers.memory_strategies import machine_dicts
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.energy import default_technology
from simcore.energy.vector_systolic import vector_cost
from simcore.memory import Link
from simcore.systolic.archs import arch_dict
from simcore.systolic.machine import ArchError
from simcore.systolic.machine_parse import parse_machine
from simcore.systolic.vector_ops import FUNCTIONS, VectorTask, VectorTaskError
from simcore.systolic.vector_reference import reference_cycles
from simcore.systolic.vector_stream import (
    VectorPlan,
    VectorPlanError,
    best_run,
    largest_chunk,
    plans,
    vector_run,
)
from simcore.systolic.vector_unit import VectorUnit

TASKS = [
    ("softmax", {}),
    ("softmax", {"scaled": True, "causal": True}),
    ("layernorm", {}),
    ("rmsnorm", {}),
    ("gelu", {}),
    ("gelu", {"form": "erf"}),
    ("silu", {}),
    ("relu", {}),
    ("scale", {}),
    ("add", {}),
    ("mul", {}),
    ("bias", {}),
    ("transpose", {}),
    ("reduce", {"fn": "mean"}),
    ("reduce", {"fn": "min"}),
    ("pool", {"fn": "MaxPool"}),
    ("pool", {"fn": "GlobalAveragePool"}),
    ("elementwise", {"fn": "Clip"}),
    ("elementwise", {"fn": "Tanh"}),
    ("gather", {}),
    ("copy", {}),
    ("concat", {}),
    ("kv_append", {}),
]


@st.composite
def tasks(draw: st.DrawFn) -> VectorTask:
    kind, options = draw(st.sampled_from(TASKS))
    return VectorTask(
        kind,
        draw(st.integers(1, 3)),
        draw(st.integers(1, 24)),
        draw(st.integers(1, 40)),
        **options,
    )


@st.composite
def machines_with_units(draw: st.DrawFn):  # type: ignore[no-untyped-def]
    data = draw(machine_dicts())
    for store in data["buffers"].values():
        store["capacity"] = f"{draw(st.integers(200, 4000))} words"
    data["vector"] = {
        "lanes": draw(st.sampled_from([1, 2, 3, 8, 16])),
        "special_cycles": draw(st.integers(1, 6)),
        "port_share": draw(st.sampled_from([1, 0.5, 0.25])),
    }
    try:
        return parse_machine(data)
    except ArchError:
        from hypothesis import assume

        assume(False)


@settings(max_examples=150, deadline=None)
@given(machines_with_units(), tasks(), st.data())
def test_the_recurrence_equals_the_cycle_level_reference(machine, task, data) -> None:  # type: ignore[no-untyped-def]
    found = plans(machine, task)
    if not found:
        with pytest.raises(VectorPlanError, match="does not fit"):
            best_run(machine, task)
        return
    plan = data.draw(st.sampled_from(found))
    plan = VectorPlan(data.draw(st.integers(1, plan.chunk_rows)), plan.buffers)
    run = vector_run(machine, task, plan)
    assert run.cycles == reference_cycles(machine, task, plan)
    assert run.bound <= run.cycles


@settings(max_examples=40, deadline=None)
@given(machines_with_units(), tasks())
def test_many_chunks_jump_periods_exactly(machine, task) -> None:  # type: ignore[no-untyped-def]
    """One-row chunks over up to 72 rows: the periodic jumps take over, and stay exact."""
    tall = replace(task, batch=task.batch * 3)
    for buffers in (1, 2):
        if largest_chunk(machine, tall, buffers) >= 1:
            plan = VectorPlan(1, buffers)
            assert vector_run(machine, tall, plan).cycles == reference_cycles(machine, tall, plan)


def _machine(lanes: int = 4, special: int = 4, latency: int = 0, rate: int = 4):  # type: ignore[no-untyped-def]
    data = arch_dict("gemmini")
    system = parse_machine(data)
    dram = Link(Fraction(rate), latency, 0)
    return replace(
        system,
        memory=replace(system.memory, dram=dram),
        vector=VectorUnit(lanes, special, Fraction(64)),
    )


def test_a_relu_by_hand() -> None:
    """8 rows of 8, 4 lanes, link 4 words a cycle, one chunk: load 16, 16 passes, store 16."""
    machine = _machine()
    run = vector_run(machine, VectorTask("relu", 1, 8, 8), VectorPlan(8, 1))
    assert run.cycles == 16 + 16 + 16
    two = vector_run(machine, VectorTask("relu", 1, 8, 8), VectorPlan(4, 2))
    # L0 8, L1 8 (chunk 0 works 8..16), S0 16..24, chunk 1 works 16..24, S1 24..32
    assert two.cycles == 32
    assert run.dram_read_words == 64 and run.dram_write_words == 64


def test_a_softmax_row_by_hand() -> None:
    """One row of 8, 4 lanes, special 4: two passes of add 3 + sfu 4 + div 4, two trees of 2."""
    machine = _machine(latency=5)
    task = VectorTask("softmax", 1, 1, 8)
    assert task.pass_cycles(4) == 11 and task.row_cycles(4, 4) == 4
    run = vector_run(machine, task, VectorPlan(1, 1))
    assert run.cycles == 2 + 5 + (2 * 11 + 4) + 2 + 5


def test_lane_counts_and_refusals() -> None:
    task = VectorTask("layernorm", 2, 3, 8)
    counts = task.lane_counts(lanes=4)
    assert counts["mul"] == 3 * 48 + 2 * 6 and counts["sfu"] == 6
    assert counts["add"] == 5 * 48 + 6 + 2 * 6 * 3  # two trees of 4 lanes: 3 adds a row each
    with pytest.raises(VectorTaskError, match="Foo"):
        VectorTask("elementwise", 1, 1, 1, fn="Foo")
    with pytest.raises(VectorTaskError, match="shape"):
        VectorTask("shape", 1, 1, 1)
    assert "Clip" in FUNCTIONS and "Tanh" in FUNCTIONS


def test_a_plan_over_the_store_is_refused() -> None:
    machine = _machine()
    task = VectorTask("relu", 1, 10**6, 64)
    most = largest_chunk(machine, task, 2)
    with pytest.raises(VectorPlanError, match="buffers.scratchpad"):
        vector_run(machine, task, VectorPlan(most + 1, 2))


def test_energy_counts_lanes_sram_and_dram() -> None:
    machine = _machine()
    run = best_run(machine, VectorTask("gelu", 1, 16, 32))
    cost = vector_cost(machine, run, default_technology())
    assert cost.category("compute").pj > 0 and cost.category("off_chip").pj > 0
    copy = best_run(machine, VectorTask("copy", 1, 16, 32))
    assert vector_cost(machine, copy, default_technology()).category("compute").pj == 0


@pytest.mark.parametrize(
    "table, message",
    [
        ({"lanes": 0}, "vector.lanes"),
        ({"lanes": 4, "special_cycles": 0}, "vector.special_cycles"),
        ({"lanes": 4, "port_share": 1.5}, "vector.port_share"),
        ({"lanes": 4, "port_share": "half"}, "vector.port_share"),
        ({"lanes": 4, "width": 2}, "vector.width"),
        ({}, "vector.lanes"),
    ],
)
def test_bad_vector_tables_are_refused(table: dict, message: str) -> None:
    data = arch_dict("tpuv4i")
    data["vector"] = table
    with pytest.raises(ArchError, match=message):
        parse_machine(data)


def test_bundled_machines_state_their_vector_units() -> None:
    for name in ("tpuv4i", "tpu-v1", "gemmini", "edge-npu"):
        machine = parse_machine(arch_dict(name))
        assert machine.vector is not None and machine.source("vector") is None
        assert "vector" in dict(machine.assumed)
    tpu = parse_machine(arch_dict("tpuv4i"))
    assert tpu.vector_unit.lanes == 1024 and tpu.vector_unit.port == 512


def test_a_machine_without_a_vector_table_gets_the_default() -> None:
    data = arch_dict("gemmini")
    del data["vector"]
    unit = parse_machine(data).vector_unit
    assert (unit.lanes, unit.special, unit.port) == (16, 4, 16)  # a lane a column, the width
