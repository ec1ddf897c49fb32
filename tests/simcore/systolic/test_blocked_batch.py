"""Independent GEMMs timed as one batch over lanes of side-by-side arrays: the fast engine equals
the reference engine, the reference program moves every run's words, the audit finds its
timeline clean, and no batch beats its lower bound or the search's own bound (property tests on
random machines, lane counts, designs, schedules and shapes); a batch of one is the single run;
the machine file's `arrays` is validated."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked import BlockSchedule, evaluate
from simcore.systolic.blocked.audit import audit
from simcore.systolic.blocked.batch import (
    evaluate_batch,
    fastest_batch,
    lane_counts,
    lane_design,
)
from simcore.systolic.blocked.counts import block_counts
from simcore.systolic.blocked.enumerate import own_bound
from simcore.systolic.blocked.fast import run_fast
from simcore.systolic.blocked.reference import reference_dram, run_reference
from simcore.systolic.blocked.schedule import LOOP_ORDERS, Batch, feasibility
from simcore.systolic.machine import ArchError
from simcore.systolic.machine_parse import parse_machine
from simcore.systolic.model import SystolicDesign
from tests.helpers.memory_strategies import designs_on, machines, shapes

EXAMPLES = 120
PORT = {"capacity": "4 KiB", "read_width": "8 words/cycle", "write_width": "8 words/cycle"}


@st.composite
def batch_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    base = draw(machines(max_side=6))
    cols = base.array.cols
    arrays = draw(st.sampled_from([a for a in range(1, cols + 1) if cols % a == 0]))
    machine = dataclasses.replace(base, arrays=arrays)
    lanes = draw(st.sampled_from([x for x in range(1, arrays + 1) if arrays % x == 0]))
    batch = Batch(lanes * draw(st.integers(1, 3)), lanes)
    lane = dataclasses.replace(machine, array=machine.lane_array(lanes), arrays=1)
    design = draw(designs_on(lane))
    shape = draw(shapes(8))
    schedule = BlockSchedule(
        draw(st.integers(1, shape.m)),
        draw(st.integers(1, shape.k)),
        draw(st.integers(1, shape.n)),
        draw(st.sampled_from(LOOP_ORDERS)),
        tuple(draw(st.sampled_from([1, 2])) for _ in range(3)),  # type: ignore[arg-type]
        tuple(draw(st.integers(0, 3)) for _ in range(3)),  # type: ignore[arg-type]
    )
    assume(feasibility(machine, schedule, shape, lanes).ok)
    return machine, design, schedule, shape, batch


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(batch_cases())
def test_batch_engines_agree_and_respect_the_bounds(case: tuple[Any, ...]) -> None:
    machine, design, schedule, shape, batch = case
    timeline = run_reference(machine, design, schedule, shape, batch)
    fast = run_fast(machine, design, schedule, shape, batch)
    assert (fast.cycles, fast.compute_cycles) == (timeline.cycles, timeline.compute_cycles)
    assert audit(machine, design, timeline, batch.lanes) == []
    counts = block_counts(machine, design, schedule, shape).dram
    found = reference_dram(timeline)
    assert found["a_reads"] == batch.runs * counts.a_reads
    assert found["b_reads"] == batch.runs * counts.b_reads
    assert found["c_final_writes"] == batch.runs * counts.c_final_writes
    computes = [op for op in timeline.ops if op.kind == "compute"]
    assert sum(op.elements for op in computes) == batch.runs * shape.macs
    assert {op.lane for op in computes} == set(range(batch.lanes))
    run = evaluate_batch(machine, design, schedule, shape, batch, engine="reference")
    assert run.cycles == timeline.cycles
    assert run.cycles >= run.bound.cycles
    assert run.cycles >= own_bound(machine, design, schedule, shape, batch)
    assert run.stall_cycles >= 0


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(batch_cases())
def test_a_batch_of_one_is_the_single_run(case: tuple[Any, ...]) -> None:
    machine, _design, schedule, shape, _batch = case
    whole = lane_design(machine, SystolicDesign(machine.array, machine.dataflow), 1)
    assume(feasibility(machine, schedule, shape).ok)
    single = evaluate(machine, whole, schedule, shape)
    one = evaluate_batch(machine, whole, schedule, shape, Batch(1, 1))
    assert (one.cycles, one.compute_cycles) == (single.cycles, single.compute_cycles)
    assert one.bound == single.bound


def test_attention_heads_on_the_tpuv4i_lanes() -> None:
    """Eight heads of the decode context GEMM: the search's best on four lanes, both engines."""
    machine = load_arch("tpuv4i")
    assert machine.arrays == 4 and lane_counts(machine, 8) == [1, 2, 4]
    design = SystolicDesign(machine.array, machine.dataflow)
    shape = Shape(1, 2048, 128)
    best, evaluated = fastest_batch(machine, design, shape, 8, budget=60)
    assert best.batch.lanes == 4 and 1 <= evaluated <= 60
    slow = evaluate_batch(
        machine, best.one.design, best.one.schedule, shape, best.batch, engine="reference"
    )
    assert slow.cycles == best.cycles
    alone = evaluate(machine, design, best.one.schedule, shape)
    assert best.cycles < 8 * alone.cycles  # the lanes overlap the heads


def test_lanes_must_divide_the_runs_and_the_arrays() -> None:
    machine = load_arch("tpuv4i")
    with pytest.raises(ValueError, match="must divide the runs"):
        Batch(6, 4)
    with pytest.raises(ValueError, match="lanes must divide"):
        machine.lane_array(3)
    design = SystolicDesign(machine.array, machine.dataflow)
    with pytest.raises(ValueError, match="is not the machine's 128x128"):
        run_fast(machine, design, BlockSchedule(1, 128, 128), Shape(1, 128, 128), Batch(4, 4))


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        (3, "array.arrays: 3 arrays do not split the 4 columns evenly"),
        (0, "array.arrays: must be from 1"),
        ("two", "array.arrays: expected a whole number"),
    ],
)
def test_bad_arrays_is_one_line(arrays: object, message: str) -> None:
    data = {
        "name": "four",
        "array": {"rows": 4, "cols": 4, "arrays": arrays, "dataflow": "ws", "clock": "1 GHz"},
        "buffers": {"spad": {"holds": ["a", "b", "c"], **PORT}},
        "dram": {"bandwidth": "2 words/cycle"},
    }
    with pytest.raises(ArchError, match=message) as error:
        parse_machine(data)
    assert "\n" not in str(error.value)
