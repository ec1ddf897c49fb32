"""The systolic oracle on an architecture (a machine with its memory system): its machine as
recorded and rebuilt, block schedules timed exactly as simcore's engines time them, refused by
the buffer limit before any timing, verified, bounded, costed and counted within 64 bits."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autotune.errors import Infeasible
from autotune.oracles.systolic import ORACLE
from autotune.oracles.systolic_memory import run as memory_run
from autotune.oracles.systolic_memory.machine import ArchMachine
from search_spaces.base import EXACT, SCALED
from search_spaces.domains import Point
from search_spaces.systolic import systolic_family
from search_spaces.systolic_blocked import FAMILY, BlockedFamily, design, point_of, schedule
from simcore.shape import Shape
from simcore.systolic.archs import bundled_archs
from simcore.systolic.blocked import BlockSchedule
from simcore.systolic.blocked.bounds import bound
from simcore.systolic.blocked.evaluate import evaluate
from simcore.systolic.blocked.schedule import LOOP_ORDERS, feasibility
from simcore.systolic.model import SystolicDesign, hbm_words
from tests.helpers.scalesim_cfg import scalesim_cfg

LLM = Shape(4096, 4096, 11008)


def arch(text: str) -> ArchMachine:
    found = ORACLE.parse_machine(text)
    assert isinstance(found, ArchMachine)
    return found


SCALE_CFG = scalesim_cfg(8, 16, name="small_ws", ifmap_kb=4, filter_kb=8, ofmap_kb=2)


def test_a_scalesim_config_is_an_architecture(tmp_path: Path) -> None:
    cfg = tmp_path / "small.cfg"
    cfg.write_text(SCALE_CFG)
    machine = arch(f"arch={cfg},dram.latency=20 cycles")
    system = machine.system
    assert (system.array.rows, system.array.cols, system.dataflow) == (8, 16, "ws")
    capacities = {s.name: (s.holds, s.capacity) for s in system.memory.stores}
    assert capacities == {
        "ifmap": (("a",), 4096),
        "filter": (("b",), 8192),
        "ofmap": (("c",), 2048),
    }
    assert system.memory.dram.words_per_cycle == 10 and system.memory.dram.latency == 20
    rebuilt = ORACLE.machine_from_record(ORACLE.machine_record(machine))
    assert rebuilt.system == system
    shape = Shape(64, 64, 64)
    whole = SystolicDesign(system.array, system.dataflow)
    run = evaluate(system, whole, BlockSchedule(8, 64, 16, "mnk", (1, 1, 1)), shape)
    assert run.cycles >= run.bound.cycles > 0
    cfg.write_text(SCALE_CFG.replace("InterfaceBandwidth: USER", "InterfaceBandwidth: CALC"))
    with pytest.raises(ValueError, match="CALC gives no bandwidth") as caught:
        ORACLE.parse_machine(f"arch={cfg}")
    assert "\n" not in str(caught.value)


def test_an_architecture_is_recorded_and_rebuilt_from_its_record() -> None:
    machine = arch("arch=tpu-v1")
    record = ORACLE.machine_record(machine)
    assert "sources" not in record["arch_spec"]
    assert set(record) == {"arch", "arch_spec", "unified_kib", "weight_fifo_kib"} | {
        "accumulator_kib",
        "dram_mb_per_s",
    }
    assert record["unified_kib"] == 24 * 1024 and record["dram_mb_per_s"] == 34000
    assert ORACLE.machine_from_record(record) == machine
    rebuilt = ORACLE.machine_from_record(record)
    assert isinstance(rebuilt, ArchMachine) and rebuilt.system == machine.system
    own = BlockedFamily(machine.system)
    assert ORACLE.families((), machine) == ORACLE.families(("systolic-blocked",), machine) == (own,)
    assert own != FAMILY and own.name == FAMILY.name  # FAMILY rebuilds records by name
    with pytest.raises(ValueError, match="searches the space 'systolic'"):
        ORACLE.families(("systolic-blocked",), ORACLE.parse_machine(""))


def test_overrides_are_another_machine_and_another_study() -> None:
    plain, faster = arch("arch=tpu-v1"), arch("arch=tpu-v1,dram.bandwidth=68 GB/s")
    assert faster != plain and faster.key() != plain.key()
    assert faster.system.memory.dram.words_per_cycle == 2 * plain.system.memory.dram.words_per_cycle
    assert ORACLE.plain_machine(faster) == plain  # its study name carries a digest
    assert ORACLE.identity(faster) != ORACLE.identity(plain)
    assert ORACLE.study_prefix(LLM, plain) == "systolic-4096x4096x11008-tpu-v1"
    spad = arch("arch=gemmini,buffers.scratchpad.holds=a,b")  # a comma inside a value
    assert spad.system.memory.store_of("b") is not None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("arch=tpu-v1,pe_budget=64", "pe_budget: an architecture fixes its array"),
        ("dram.bandwidth=68 GB/s", "dram.bandwidth: a part of an architecture"),
        ("arch=tpu-v1,speed=3", "'speed': with an architecture, keys are its parts"),
        ("arch=tpu-v1,arch=gemmini", "arch is given twice"),
        ("arch=missing.cfg", "missing.cfg"),
        ("arch=tpu-v1,dram.latency=-3 cycles", "dram.latency"),
        ("arch=gemmini,buffers.scratchpad.capacity=64 words", "buffers.scratchpad.capacity"),
    ],
)
def test_bad_machines_are_one_line_naming_the_key(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        ORACLE.parse_machine(text)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", bundled_archs())
def test_seeds_fit_and_time_as_the_reference_engine_does(name: str) -> None:
    machine = arch(f"arch={name}")
    shape = Shape(40, 56, 72)
    seeds = FAMILY.seed_points(shape, machine)
    assert seeds
    for point in seeds[:4]:
        assert FAMILY.violation(point, shape, machine) == 0
        metrics = ORACLE.evaluate(FAMILY, point, shape, machine)
        slow = evaluate(
            machine.system, design(machine.system, point), schedule(point), shape, "reference"
        )
        assert metrics["cycles"] == slow.cycles
        assert metrics["stall_cycles"] == slow.stall_cycles >= 0
        assert metrics["lower_bound"] == ORACLE.bound(shape, machine) <= slow.cycles
        parts = sum(float(metrics[p]) for p in ("a_reads", "b_reads", "c_reads", "c_writes"))  # type: ignore[arg-type, misc]
        assert parts == pytest.approx(metrics["dram_words"])
        assert float(metrics["a_reads"]) >= shape.m * shape.k  # type: ignore[arg-type]
        assert 0 < float(metrics["buffer_area_mm2"]) < float(metrics["area_mm2"])  # type: ignore[arg-type]
        assert ORACLE.area_mm2(FAMILY, point, shape, machine) == pytest.approx(metrics["area_mm2"])


def test_blocks_over_the_buffers_are_refused_by_the_words_over() -> None:
    machine = arch("arch=gemmini")
    shape = Shape(1024, 1024, 1024)
    whole = point_of(BlockSchedule(1024, 1024, 1024, "mnk", (2, 2, 2)))
    over = feasibility(machine.system, schedule(whole), shape).over
    words = float(sum(w for _s, w, _c in over))
    assert FAMILY.violation(whole, shape, machine) == words > 0
    with pytest.raises(Infeasible) as caught:
        ORACLE.evaluate(FAMILY, whole, shape, machine)
    assert (caught.value.limit, caught.value.over_by, caught.value.unit) == (
        "buffer",
        words,
        "words",
    )
    assert "buffers.scratchpad" in str(caught.value)
    assert FAMILY.limit == "buffer"


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(("edge-npu", "gemmini")),
    st.integers(1, 40),
    st.integers(1, 40),
    st.integers(1, 40),
    st.data(),
)
def test_random_points_fit_or_are_refused_and_never_beat_the_bound(
    name: str, m: int, k: int, n: int, data: st.DataObject
) -> None:
    machine, shape = arch(f"arch={name}"), Shape(m, k, n)
    point: Point = {
        "bm": data.draw(st.integers(1, m)),
        "bk": data.draw(st.integers(1, k)),
        "bn": data.draw(st.integers(1, n)),
        "loop_order": data.draw(st.sampled_from(LOOP_ORDERS)),
        **{f"buffer_{x}": data.draw(st.sampled_from((1, 2))) for x in "abc"},
        **{f"span_{x}": data.draw(st.integers(0, 3)) for x in "abc"},
        "tile_order": data.draw(st.sampled_from(("col-outer", "row-outer"))),
    }
    if FAMILY.violation(point, shape, machine) > 0:
        with pytest.raises(Infeasible):
            ORACLE.evaluate(FAMILY, point, shape, machine)
        return
    metrics = ORACLE.evaluate(FAMILY, point, shape, machine)
    assert int(metrics["cycles"]) >= ORACLE.bound(shape, machine)  # type: ignore[call-overload]
    assert int(metrics["stall_cycles"]) >= 0  # type: ignore[call-overload]


def test_a_small_shape_is_verified_exactly() -> None:
    machine, shape = arch("arch=edge-npu"), Shape(24, 20, 36)
    point = FAMILY.seed_points(shape, machine)[0]
    verdict = ORACLE.verify(FAMILY, point, shape, machine)
    assert verdict.ok and verdict.level == EXACT and verdict.verified
    assert "C == numpy" in verdict.detail


def test_an_llm_shape_is_verified_on_fewer_blocks_of_the_same_size() -> None:
    machine = arch("arch=tpu-v1")
    point = FAMILY.seed_points(LLM, machine)[0]
    s = schedule(point).clipped(LLM)
    plan = memory_run.verify_plan(design(machine.system, point), s, LLM)
    assert not plan.exact and plan.shape.macs < LLM.macs
    for dim, small, block in zip(
        (LLM.m, LLM.k, LLM.n), (plan.shape.m, plan.shape.k, plan.shape.n), (s.bm, s.bk, s.bn)
    ):
        assert small == dim or -(-small // block) <= 3
    verdict = ORACLE.verify(FAMILY, point, LLM, machine)
    assert verdict.ok and verdict.level == SCALED and not verdict.verified
    assert f"scaled-down shape {plan.shape}" in verdict.detail


@pytest.mark.parametrize("name", bundled_archs())
def test_llm_counts_fit_64_bits_and_bound_every_seed(name: str) -> None:
    machine = arch(f"arch={name}")
    ORACLE.check_size(LLM, machine)
    most = dict((what, count) for count, what in ORACLE.largest_counts(LLM, machine))
    cycles_most = next(c for what, c in most.items() if what.startswith("the cycles"))
    assert (
        ORACLE.bound(LLM, machine) == bound(machine.system, LLM, design(machine.system, {})).cycles
    )
    for point in FAMILY.seed_points(LLM, machine)[:3]:
        metrics = ORACLE.evaluate(FAMILY, point, LLM, machine)
        assert ORACLE.bound(LLM, machine) <= int(metrics["cycles"]) <= cycles_most  # type: ignore[call-overload]


def test_the_array_oracle_reports_its_hbm_link_as_stalls_and_words() -> None:
    family, shape = systolic_family(64, 4), Shape(20, 30, 40)
    budget = ORACLE.parse_machine("")
    for point in family.seed_points(shape, budget):
        metrics = ORACLE.evaluate(family, point, shape, budget)
        assert int(metrics["stall_cycles"]) >= 0  # type: ignore[call-overload]
        assert metrics["dram_words"] == hbm_words(family.design(point), shape)
        assert "a_reads" not in metrics


@pytest.mark.parametrize("name", bundled_archs())
@pytest.mark.parametrize("shape", [LLM, Shape(1, 4096, 11008), Shape(100, 37, 300)], ids=str)
def test_seeds_lie_in_the_family_space_of_their_machine(name: str, shape: Shape) -> None:
    machine = arch(f"arch={name}")
    (family,) = ORACLE.families((), machine)
    domains = {p.name: p.domain for p in family.params(shape, 1)}
    seeds = family.seed_points(shape, machine)
    assert seeds
    for point in seeds:
        assert set(point) == set(domains)
        assert all(domains[k].contains(v) for k, v in point.items()), point


@settings(max_examples=60, deadline=None)
@given(
    st.fixed_dictionaries(
        {
            "rows": st.integers(1, 12),
            "cols": st.integers(1, 12),
            "dataflow": st.sampled_from(("ws", "os", "is")),
            "shadow": st.booleans(),
            "hbm_buffers": st.sampled_from((1, 2)),
            "hbm_words": st.integers(1, 8),
            "map_rows": st.integers(1, 12),
            "map_cols": st.integers(1, 12),
            "tile_order": st.sampled_from(("col-outer", "row-outer")),
        }
    ),
    st.integers(1, 40),
    st.integers(1, 40),
    st.integers(1, 40),
)
def test_the_hbm_link_never_makes_a_design_faster(point: Point, m: int, k: int, n: int) -> None:
    metrics = ORACLE.evaluate(
        systolic_family(144, 8), point, Shape(m, k, n), ORACLE.parse_machine("")
    )
    assert int(metrics["stall_cycles"]) >= 0  # type: ignore[call-overload]
