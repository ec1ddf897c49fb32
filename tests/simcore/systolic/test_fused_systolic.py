"""Fused groups on the systolic array: the fast engine equals the reference on random machines,
groups and schedules; the schedule verifies on numbers; the counts equal the loop structure's;
a single product equals the memory system's block schedule; nothing beats its bound; a group
that does not fit is refused by arithmetic, naming the store."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simcore.fusion.groups import EpilogueGemm, FusedMlp
from simcore.memory import Buffer, Link
from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked import BlockSchedule, evaluate, feasibility
from simcore.systolic.fused import (
    GemmSchedule,
    InfeasibleFused,
    MlpSchedule,
    evaluate_fused,
    evaluate_unfused,
)
from simcore.systolic.fused.counts import fused_counts
from simcore.systolic.fused.engine import run_fast, run_reference
from simcore.systolic.fused.evaluate import fused_build, tree_of
from simcore.systolic.fused.slots import Costs
from simcore.systolic.fused.verify import verify_fused
from simcore.systolic.machine import MemorySystem, Store, SystolicMachine
from simcore.systolic.model import SystolicArray, SystolicDesign
from simcore.systolic.vector_unit import VectorUnit, default_vector_unit
from tests.helpers.fused_systolic_strategies import (
    assume_fits,
    schedules_of,
    small_groups,
    vector_units,
)
from tests.helpers.memory_strategies import machines

SETTINGS = dict(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)


@st.composite
def cases(draw: st.DrawFn):  # type: ignore[no-untyped-def]
    machine = draw(machines(max_side=3))
    design = SystolicDesign(machine.array, machine.dataflow)
    vector = draw(vector_units())
    group = draw(small_groups())
    schedule = draw(schedules_of(group))
    assume_fits(machine, design, vector, group, schedule)
    return machine, design, vector, group, schedule


def _one_word_machine(stores: tuple[Store, ...]) -> SystolicMachine:
    """A 1x1 ws array, 8-bit words, DRAM one word a cycle without latency."""
    return SystolicMachine(
        name="one word",
        array=SystolicArray(rows=1, cols=1),
        dataflow="ws",
        clock_hz=Fraction(10**9),
        memory=MemorySystem(stores, None, Link(words_per_cycle=Fraction(1), latency=0, setup=0)),
        word_bits=8,
        accumulator_bits=8,
        output_bits=8,
    )


def _one_word(capacity: int) -> Buffer:
    return Buffer(capacity=capacity, read_width=Fraction(1), write_width=Fraction(1))


# Five hidden blocks with the weights resident: the first row block loads every weight block
# into a slot of its own, so its hidden blocks are not one period repeated.
RESIDENT_MACHINE = _one_word_machine(
    (
        Store("ifmap", ("a",), _one_word(8)),
        Store("filter", ("b",), _one_word(15)),
        Store("ofmap", ("c",), _one_word(8)),
    )
)
RESIDENT_CASE = (
    RESIDENT_MACHINE,
    SystolicDesign(RESIDENT_MACHINE.array, "ws"),
    VectorUnit(lanes=1, special=1),
    FusedMlp(1, 1, 5, 2, activation="relu", bias=False),
    MlpSchedule(1, 1, 1, 2, False, True, 1, 1, w_resident=True),
)


@settings(max_examples=120, **SETTINGS)
@given(case=cases())
@example(case=RESIDENT_CASE)
def test_random_fused_schedules_verify_and_the_engines_agree(case) -> None:
    machine, design, vector, group, schedule = case
    verdict = verify_fused(machine, design, group, schedule, vector, seed=3)
    assert verdict.ok, f"{group.describe()} {schedule}: {verdict.detail}"
    run = evaluate_fused(machine, design, group, schedule, vector)
    assert run.cycles >= run.bound.cycles
    assert run.dram_words >= run.bound.compulsory_words


@settings(max_examples=80, **SETTINGS)
@given(case=cases())
def test_tree_counts_equal_the_expanded_schedules(case) -> None:
    machine, design, vector, group, schedule = case
    build = fused_build(Costs(machine, design, vector), group, schedule)
    tree, flat = tree_of(build), tree_of(build, compress=False)
    assert fused_counts(tree, build.slots, design) == fused_counts(flat, build.slots, design)
    n = len(build.slots)
    assert run_fast(tree, n).cycles == run_reference(flat, n).cycles == run_fast(flat, n).cycles


def _mlp_traffic(g: FusedMlp, s: MlpSchedule) -> dict[str, int]:
    """DRAM elements by tensor, from the schedule's loops."""
    bm, bh = min(s.bm, g.m), min(s.bh, g.hidden)
    rows, hidden = -(-g.m // bm), -(-g.hidden // bh)
    spills = 0 if s.y_resident else (hidden - 1) * g.m * g.d_out
    found = {
        "X": g.m * g.d * (1 if s.x_resident else hidden),
        "W1": g.d * g.hidden * (1 if s.w_resident else rows),
        "W2": g.hidden * g.d_out * (1 if s.w_resident else rows),
        "Y": g.m * g.d_out,
        "Y.partial": 2 * spills,
    }
    if g.bias:
        found.update(B1=g.hidden * rows, B2=g.d_out * rows)
    return {k: v for k, v in found.items() if v}


@settings(max_examples=100, **SETTINGS)
@given(data=st.data())
def test_mlp_traffic_is_the_loop_structures(data) -> None:
    machine = load_arch("gemmini")
    design = SystolicDesign(machine.array, machine.dataflow)
    group = data.draw(small_groups(most=80).filter(lambda g: isinstance(g, FusedMlp)))
    schedule = data.draw(schedules_of(group))
    run = evaluate_fused(machine, design, group, schedule)
    counts = run.kernels[0].counts
    got = {name: t.reads + t.writes for name, t in counts.dram.items()}
    assert got == _mlp_traffic(group, schedule)


@settings(max_examples=100, **SETTINGS)
@given(data=st.data())
def test_a_single_product_is_the_memory_systems_block_schedule(data) -> None:
    machine = data.draw(machines(max_side=3))
    design = SystolicDesign(machine.array, machine.dataflow)
    m, k, n = (data.draw(st.integers(1, 12)) for _ in range(3))
    s = data.draw(schedules_of(EpilogueGemm(m, k, n)))
    block = BlockSchedule(s.bm, s.bk, s.bn, s.order, s.buffering)
    if not feasibility(machine, block, Shape(m, k, n)).ok:
        return
    want = evaluate(machine, design, block, Shape(m, k, n))
    got = evaluate_fused(machine, design, EpilogueGemm(m, k, n), s)
    assert got.cycles == want.cycles
    assert got.dram_words == want.counts.dram.link_words(machine)


def test_resident_weights_come_in_once_for_all_row_blocks() -> None:
    machine = load_arch("gemmini")
    design = SystolicDesign(machine.array, machine.dataflow)
    group = FusedMlp(96, 32, 64, 48, activation="gelu", bias=True)
    for h_buffers in (1, 2):
        schedule = MlpSchedule(32, 16, 32, 16, True, True, 2, h_buffers, w_resident=True)
        run = evaluate_fused(machine, design, group, schedule)
        dram = run.kernels[0].counts.dram
        assert (dram["W1"].reads, dram["W2"].reads, dram["X"].reads) == (32 * 64, 64 * 48, 96 * 32)
        assert verify_fused(machine, design, group, schedule, seed=5).ok
        streamed = evaluate_fused(
            machine, design, group, dataclasses.replace(schedule, w_resident=False)
        )
        assert run.dram_words < streamed.dram_words


def test_resident_weights_loaded_in_the_first_row_block_are_timed_by_hand() -> None:
    # Hidden block 0: X 0-1, W1 1-2, up 2-4 (fetch 2-3, stream 3), ReLU 4-5, W2 (two words)
    # 2-4, down 4-7 (two tiles, streams 5 and 6). Each further hidden block loads into fresh
    # slots and runs 4 cycles later: X 4-5, W1 5-6, up 6-8, ReLU 8-9, W2 6-8, down 8-11; the
    # fifth's down ends at 23 and Y drains 23-25.
    machine, design, vector, group, schedule = RESIDENT_CASE
    build = fused_build(Costs(machine, design, vector), group, schedule)
    n = len(build.slots)
    assert run_reference(tree_of(build, compress=False), n).cycles == 25
    assert run_fast(tree_of(build), n).cycles == 25
    for engine in ("fast", "reference"):
        assert evaluate_fused(machine, design, group, schedule, vector, engine).cycles == 25


def test_a_one_element_product_on_a_shared_port_is_timed_by_hand() -> None:
    # A 1x1 ws array, one buffer for a, b and c with a port of one word a cycle each way, DRAM
    # one word a cycle without latency. Loads: A 0-1, B 1-2. The port reads the weight 2-3 and
    # the load follows it (L >= F - kt = 2); the stream starts at 3 and its window is the port's
    # 2 reads (the tile's input and its weight), so the tile ends at 3 + 2 + 1 + 1 - 2 = 5; the
    # output drains 5-6.
    port = Buffer(capacity=8, read_width=Fraction(1), write_width=Fraction(1))
    machine = SystolicMachine(
        name="shared port",
        array=SystolicArray(rows=1, cols=1),
        dataflow="ws",
        clock_hz=Fraction(10**9),
        memory=MemorySystem(
            stores=(Store(name="shared", holds=("a", "b", "c"), buffer=port),),
            accumulator=None,
            dram=Link(words_per_cycle=Fraction(1), latency=0, setup=0),
            dram_kind="ddr",
        ),
        word_bits=8,
        accumulator_bits=8,
        output_bits=8,
        description="",
        sources=(),
        assumed=(),
    )
    design = SystolicDesign(machine.array, machine.dataflow)
    block = BlockSchedule(1, 1, 1, "mkn", (1, 1, 1))
    assert evaluate(machine, design, block, Shape(1, 1, 1)).cycles == 6
    for engine in ("fast", "reference"):
        run = evaluate_fused(
            machine,
            design,
            EpilogueGemm(1, 1, 1),
            GemmSchedule(1, 1, 1, "mkn", (1, 1, 1)),
            engine=engine,
        )
        assert run.cycles == 6


def test_fusion_keeps_the_hidden_block_on_chip() -> None:
    machine = load_arch("gemmini")
    design = SystolicDesign(machine.array, machine.dataflow)
    group = FusedMlp(256, 128, 512, 128)
    fused = evaluate_fused(machine, design, group, MlpSchedule(64, 64, 64, 64))
    unfused = evaluate_unfused(
        machine, design, group, (GemmSchedule(64, 64, 64), GemmSchedule(64, 64, 64)), epilogues=True
    )
    assert "H" not in fused.kernels[0].counts.dram
    h = sum(
        k.counts.dram["H"].reads + k.counts.dram["H"].writes
        for k in unfused.kernels
        if "H" in k.counts.dram
    )
    assert h == 256 * 512 * (1 + 2)  # written once, read for each of the 2 column blocks of Y
    assert fused.dram_words < unfused.dram_words


def test_a_group_that_does_not_fit_names_the_store() -> None:
    machine = load_arch("tpu-v1")
    design = SystolicDesign(machine.array, machine.dataflow)
    with pytest.raises(InfeasibleFused, match=r"buffers\.weight_fifo: .* words over its 262144"):
        evaluate_fused(
            machine, design, FusedMlp(1024, 768, 3072, 768), MlpSchedule(256, 768, 512, 768)
        )


def test_an_llm_sized_group_is_timed_by_jumps() -> None:
    machine = load_arch("tpuv4i")
    design = SystolicDesign(machine.array, machine.dataflow)
    group = FusedMlp(2048, 4096, 11008, 4096, activation="silu", bias=False)
    schedule = MlpSchedule(512, 1024, 512, 1024, y_resident=False)
    build = fused_build(
        Costs(machine, design, default_vector_unit(machine.array.cols)), group, schedule
    )
    tree = tree_of(build)
    fast = run_fast(tree, len(build.slots))
    assert fast.jumps > 0 and fast.ops_timed < 5000
    assert evaluate_fused(machine, design, group, schedule).cycles == fast.cycles


def test_bounds_hold_for_fused_and_unfused_alike() -> None:
    machine = load_arch("gemmini")
    design = SystolicDesign(machine.array, machine.dataflow)
    group = EpilogueGemm(300, 200, 100, ("bias", "gelu"))
    for run in (
        evaluate_fused(machine, design, group, GemmSchedule(64, 64, 64)),
        evaluate_unfused(machine, design, group, (GemmSchedule(64, 64, 64),)),
    ):
        assert run.cycles >= run.bound.cycles and run.dram_words >= run.bound.link_words
        assert run.bound.compulsory_words == 300 * 200 + 200 * 100 + 100 + 300 * 100 * Fraction(1)
