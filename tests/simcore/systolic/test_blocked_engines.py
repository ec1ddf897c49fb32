"""The block-level timing: the fast engine equals the reference engine, the counts from the loop
structure equal the reference program's, the audit finds the reference timeline clean, and no
run beats the lower bound (property tests on random machines, designs, schedules and shapes);
plus a case worked by hand and fixed regression cases."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked import BlockSchedule, evaluate
from simcore.systolic.blocked.audit import audit
from simcore.systolic.blocked.counts import block_counts
from simcore.systolic.blocked.evaluate import InfeasibleSchedule
from simcore.systolic.blocked.fast import run_fast
from simcore.systolic.blocked.reference import reference_dram, run_reference
from simcore.systolic.closed_form import cycles as array_cycles
from simcore.systolic.machine_parse import parse_machine
from simcore.systolic.model import SystolicDesign
from tests.helpers.memory_strategies import designs_on, machines, schedules_for, shapes

EXAMPLES = 150


def _check(machine, design, schedule, shape) -> None:  # type: ignore[no-untyped-def]
    timeline = run_reference(machine, design, schedule, shape)
    fast = run_fast(machine, design, schedule, shape)
    assert fast.cycles == timeline.cycles
    counts = block_counts(machine, design, schedule, shape)
    dram = reference_dram(timeline)
    assert dram == {
        "a_reads": counts.dram.a_reads,
        "b_reads": counts.dram.b_reads,
        "c_reads": counts.dram.c_reads,
        "c_partial_writes": counts.dram.c_partial_writes,
        "c_final_writes": counts.dram.c_final_writes,
        "a_requests": counts.dram.a_requests,
        "b_requests": counts.dram.b_requests,
        "c_read_requests": counts.dram.c_read_requests,
        "c_write_requests": counts.dram.c_write_requests,
    }
    assert timeline.compute_cycles == counts.compute_cycles
    assert sum(op.elements for op in timeline.ops if op.kind == "compute") == shape.macs
    assert audit(machine, design, timeline) == []
    run = evaluate(machine, design, schedule, shape)
    assert run.cycles >= run.bound.cycles
    assert counts.dram.elements >= run.bound.traffic_elements
    assert run.stall_cycles >= 0


@st.composite
def cases(draw: st.DrawFn) -> tuple:
    machine = draw(machines())
    shape = draw(shapes())
    return machine, draw(designs_on(machine)), draw(schedules_for(machine, shape)), shape


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(cases())
def test_fast_equals_reference_on_random_cases(case: tuple) -> None:
    _check(*case)


@pytest.mark.slow
@settings(
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(cases())
def test_fast_equals_reference_on_many_random_cases(case: tuple) -> None:
    _check(*case)


def _tiny(bandwidth: str = "1 words/cycle", latency: int = 3, setup: int = 1):  # type: ignore[no-untyped-def]
    return parse_machine(
        {
            "name": "tiny",
            "array": {"rows": 2, "cols": 2, "dataflow": "ws", "clock": "1 GHz"},
            "buffers": {
                "spad": {
                    "holds": ["a", "b"],
                    "capacity": "64 words",
                    "read_width": 8,
                    "write_width": 8,
                }
            },
            "accumulator": {"capacity": "64 B", "read_width": 8, "write_width": 8},
            "dram": {"bandwidth": bandwidth, "latency": latency, "setup": setup},
        }
    )


def test_one_block_worked_by_hand() -> None:
    machine = _tiny()
    design = SystolicDesign(machine.array, "ws")
    shape = Shape(2, 2, 2)
    # A: 1 + 4 cycles on the link, in place at 5 + 3; B: 5..10, in place at 13; the block
    # computes from 13; the outputs (4 words) drain from the block's end, 5 cycles, plus 3.
    compute = array_cycles(design, shape)
    expected = 13 + compute + 5 + 3
    run = evaluate(machine, design, BlockSchedule(2, 2, 2, "mnk", (1, 1, 1)), shape)
    assert run.cycles == expected
    assert run.stall_cycles == expected - compute


def test_latency_is_overlapped_by_the_next_request() -> None:
    machine = _tiny(latency=50)
    design = SystolicDesign(machine.array, "ws")
    run = evaluate(machine, design, BlockSchedule(2, 2, 2, "mnk", (1, 1, 1)), Shape(2, 2, 2))
    # both loads occupy the link back to back; only the last one's latency is waited for
    assert run.cycles == 10 + 50 + array_cycles(design, Shape(2, 2, 2)) + 5 + 50


def test_double_buffering_never_slower_on_a_stream_of_blocks() -> None:
    machine = _tiny(bandwidth="2 words/cycle", latency=4, setup=0)
    design = SystolicDesign(machine.array, "ws")
    shape = Shape(4, 8, 4)
    single = evaluate(machine, design, BlockSchedule(2, 2, 2, "mnk", (1, 1, 1)), shape)
    double = evaluate(machine, design, BlockSchedule(2, 2, 2, "mnk", (2, 2, 2)), shape)
    assert double.cycles < single.cycles
    assert single.counts.dram == double.counts.dram


def test_an_infeasible_schedule_is_refused_with_the_words_over() -> None:
    machine = _tiny()
    design = SystolicDesign(machine.array, "ws")
    with pytest.raises(InfeasibleSchedule) as refused:
        evaluate(machine, design, BlockSchedule(8, 8, 8, "mnk", (2, 2, 1)), Shape(8, 8, 8))
    assert str(refused.value).endswith(
        "buffers.spad: 192 words over its 64 (needs 256); accumulator: 48 words over its 16 (needs 64)"
    )


REGRESSION = [
    # arch, shape, schedule, cycles, stall cycles
    ("tpu-v1", (4096, 4096, 11008), (2048, 256, 256, "mnk", (2, 2, 2)), 17642904, 13770840),
    ("tpu-v1", (4096, 4096, 11008), (4096, 512, 128, "nmk", (1, 2, 2)), 36947836, 30872796),
    ("gemmini", (512, 1024, 1024), (128, 256, 64, "mnk", (2, 2, 2)), 2363080, 3784),
    ("edge-npu", (1, 4096, 4096), (1, 512, 64, "nkm", (2, 2, 2)), 2173448, 68616),
    ("tpuv4i", (1, 4096, 11008), (1, 4096, 512, "mnk", (2, 2, 2)), 194875, 7505),
]


@pytest.mark.parametrize("arch, dims, params, cycles, stalls", REGRESSION)
def test_bundled_machines_at_llm_size(
    arch: str, dims: tuple, params: tuple, cycles: int, stalls: int
) -> None:
    machine = load_arch(arch)
    design = SystolicDesign(machine.array, machine.dataflow)
    shape, schedule = Shape(*dims), BlockSchedule(*params)
    fast = evaluate(machine, design, schedule, shape)
    slow = evaluate(machine, design, schedule, shape, engine="reference")
    assert fast.cycles == slow.cycles
    assert (fast.cycles, fast.stall_cycles) == (cycles, stalls)
    assert fast.cycles >= fast.bound.cycles
