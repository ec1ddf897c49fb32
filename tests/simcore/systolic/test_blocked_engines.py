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
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.machine_parse import parse_machine
from simcore.systolic.model import DATAFLOWS, EDGES, FOLDS, Assumptions, SystolicDesign
from tests.helpers.memory_strategies import designs_on, machines, schedules_for, shapes

EXAMPLES = 150


def _check(machine, design, schedule, shape) -> None:  # type: ignore[no-untyped-def]
    timeline = run_reference(machine, design, schedule, shape)
    fast = run_fast(machine, design, schedule, shape)
    assert (fast.cycles, fast.compute_cycles) == (timeline.cycles, timeline.compute_cycles)
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
    # A: 1 + 4 cycles on the link, in place at 5 + 3; B: 5..10, in place at 13; the tile loads
    # from 13 as the scratchpad reads its 4 weights (8 a cycle), and the array runs its closed
    # form; the outputs (4 words) drain from its end, 5 cycles, plus 3.
    compute = array_cycles(design, shape)
    expected = 13 + compute + 5 + 3
    run = evaluate(machine, design, BlockSchedule(2, 2, 2, "mnk", (1, 1, 1)), shape)
    assert run.cycles == expected
    assert run.compute_cycles == compute
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
    ("tpu-v1", (4096, 4096, 11008), (2048, 256, 256, "mnk", (2, 2, 2)), 17642904, 14824090),
    ("tpu-v1", (4096, 4096, 11008), (4096, 512, 128, "nmk", (1, 2, 2)), 36947836, 31311102),
    ("gemmini", (512, 1024, 1024), (128, 256, 64, "mnk", (2, 2, 2)), 2363126, 3784),
    ("edge-npu", (1, 4096, 4096), (1, 512, 64, "nkm", (2, 2, 2)), 2174472, 77301),
    ("tpuv4i", (1, 4096, 11008), (1, 4096, 512, "mnk", (2, 2, 2)), 159610, 69083),
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


def _wide(rows: int, cols: int, dataflow: str) -> SystolicMachine:
    """Ports wide enough never to hold the array; a slow link, so that memory is late."""
    port = {"read_width": 64, "write_width": 64}
    return parse_machine(
        {
            "name": "wide",
            "array": {"rows": rows, "cols": cols, "dataflow": dataflow, "clock": "1 GHz"},
            "words": {"accumulator_bits": 8},
            "buffers": {"s": {"holds": ["a", "b", "c"], "capacity": "100000 words", **port}},
            "dram": {"bandwidth": "1 words/cycle", "latency": 7, "setup": 1},
        }
    )


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(DATAFLOWS),
    st.integers(1, 4),
    st.integers(1, 4),
    st.booleans(),
    st.sampled_from(EDGES),
    st.booleans(),
    st.sampled_from(FOLDS),
    shapes(10),
)
def test_one_block_with_its_data_in_place_runs_the_closed_form(
    dataflow: str,
    rows: int,
    cols: int,
    shadow: bool,
    edges: str,
    drain: bool,
    folds: str,
    shape: Shape,
) -> None:
    machine = _wide(rows, cols, dataflow)
    design = SystolicDesign(machine.array, dataflow, None, Assumptions(shadow, edges, drain, folds))
    schedule = BlockSchedule(shape.m, shape.k, shape.n)
    run = evaluate(machine, design, schedule, shape)
    assert run.compute_cycles == array_cycles(design, shape)


@pytest.mark.parametrize("dataflow", DATAFLOWS)
def test_blocks_that_cut_the_array_tile_order_run_as_the_unblocked_gemm(dataflow: str) -> None:
    # ws: k blocks of whole row folds inside n blocks of one column fold are the closed form's
    # own tile order (column folds outer); is and os likewise with their array dimensions
    machine = _wide(3, 2, dataflow)
    design = SystolicDesign(machine.array, dataflow)
    shape = Shape(7, 12, 8)
    schedule = {
        "ws": BlockSchedule(7, 6, 2, "mnk"),
        "is": BlockSchedule(2, 6, 8, "nmk"),
        "os": BlockSchedule(3, 12, 2, "nmk"),
    }[dataflow]
    fast = evaluate(machine, design, schedule, shape)
    slow = evaluate(machine, design, schedule, shape, engine="reference")
    assert fast.compute_cycles == slow.compute_cycles == array_cycles(design, shape)
    assert fast.cycles == slow.cycles > fast.compute_cycles  # the link is late


def test_the_unblocked_array_time_is_no_bound() -> None:
    # M = N = 1, K = 7 on 4 rows without shadow registers: unblocked, row folds of 4 and 3 and
    # the last drains through 3 rows (10 cycles); blocks of k = 1 load one row each in the same
    # 7 cycles and the last drains through one row (8 cycles)
    machine = _wide(4, 3, "ws")
    design = SystolicDesign(machine.array, "ws", None, Assumptions(shadow=False, drain=False))
    shape = Shape(1, 7, 1)
    run = evaluate(machine, design, BlockSchedule(1, 1, 1, "mkn"), shape)
    assert (run.compute_cycles, array_cycles(design, shape)) == (8, 10)
    assert run.cycles >= run.bound.cycles
