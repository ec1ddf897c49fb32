"""The memory of an architecture searched with the block schedules of one product: which values
each store's capacity and the link's bandwidth take, the machines they make, the area budget
that makes them a trade-off, and what the array oracle keeps (no machine search, its budgets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autotune.cli.main import main
from autotune.errors import PlanError
from autotune.oracles.capabilities import MachineSearch, MachineSettings
from autotune.oracles.systolic import ORACLE
from autotune.oracles.systolic_memory.machine import ArchMachine
from autotune.oracles.systolic_memory.search import MemorySpace, record_of
from autotune.run.resolve import plan_of


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def tpu(text: str = "") -> ArchMachine:
    return ORACLE.arch_machine("tpu-v1", text)


def test_each_store_and_the_link_take_a_few_values_around_the_architectures() -> None:
    space = MemorySpace.create(tpu())
    ranges = dict(space.ranges)
    assert ranges["unified_kib"] == (3072, 6144, 12288, 24576, 49152)
    assert ranges["weight_fifo_kib"] == (64, 128, 256, 512)  # one 256x256 tile is 64 KiB
    assert ranges["accumulator_kib"] == (512, 1024, 2048, 4096, 8192)
    assert ranges["dram_mb_per_s"] == (34000, 68000, 136000)
    assert space.seed_point(tpu()) == record_of(tpu().system)
    assert space.apply(tpu(), space.seed_point(tpu())) == tpu()


def test_a_point_is_a_machine_recorded_with_its_values() -> None:
    space = MemorySpace.create(tpu())
    point = {"unified_kib": 6144, "weight_fifo_kib": 128, "accumulator_kib": 1024}
    machine = space.apply(tpu(), {**point, "dram_mb_per_s": 68000})
    assert (
        machine.system
        == tpu(
            "buffers.unified.capacity=6 MiB,buffers.weight_fifo.capacity=128 KiB,"
            "accumulator.capacity=1 MiB,dram.bandwidth=68 GB/s"
        ).system
    )
    record = ORACLE.machine_record(machine)
    assert {k: record[k] for k in point} == point and record["dram_mb_per_s"] == 68000
    assert ORACLE.machine_from_record(record) == machine
    small, large = space.corners(tpu())
    assert small.system.memory.store_of("a").capacity < large.system.memory.store_of("a").capacity  # type: ignore[union-attr]
    assert space.reachable(tpu()) == [large]


def test_ranges_are_given_as_values_and_checked() -> None:
    space = MemorySpace.create(tpu(), "weight_fifo_kib=128|256,dram_mb_per_s=34000")
    assert dict(space.ranges)["weight_fifo_kib"] == (128, 256)
    assert dict(space.ranges)["dram_mb_per_s"] == (34000,)
    for text, message in [
        ("slots=4|8", "not a searchable key"),
        ("weight_fifo_kib=16", "buffers.weight_fifo.capacity: .* too small for one 256x256 tile"),
        ("unified_kib=1.5", "expected whole numbers"),
        ("unified_kib=0", "expected positive numbers"),
    ]:
        with pytest.raises(ValueError, match=message):
            MemorySpace.create(tpu(), text)


def test_only_an_architecture_offers_the_machine_search() -> None:
    budget = ORACLE.parse_machine("")
    assert ORACLE.capability(MachineSearch) is None
    assert ORACLE.for_machine(budget).capability(MachineSearch) is None
    found = ORACLE.for_machine(tpu()).capability(MachineSearch)
    assert found is not None and isinstance(
        found.machine_space(tpu(), MachineSettings()), MemorySpace
    )
    # The array oracle keeps its budgets without a machine search, and refuses one.
    plan_of("64x64x64", oracle="systolic", area_budget=5.0, pe_budget=256).validate()
    with pytest.raises(PlanError, match="searches its machine itself"):
        plan_of("64x64x64", oracle="systolic", search_machine=True).validate()
    # An architecture's area budget is for a search of its memory.
    with pytest.raises(PlanError, match="needs search_machine"):
        plan_of("64x64x64", arch="tpu-v1", area_budget=5.0).validate()
    with pytest.raises(PlanError, match="not a workload"):
        plan_of(workload="resnet50", arch="tpu-v1", search_machine=True).validate()


def test_a_memory_search_keeps_to_the_area_budget(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--shape", "256x256x256", "--arch", "gemmini", "--search-machine", "--trials", "24"]
    budget = 1.0  # below the architecture's own 1.47 mm2: smaller buffers must be found
    extra = ["--area-budget", str(budget), "--storage", ":memory:", "--json", "--verify-top", "1"]
    assert main([*argv, *extra]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    feasible = [r for r in rows if r["feasible"]]
    assert feasible, "no machine within the budget was found"
    for row in feasible:
        assert row["area_mm2"] <= budget
        assert row["scratchpad_kib"] < 256 or row["accumulator_kib"] < 64
        spec = json.loads(row["arch_spec"])
        assert spec["buffers"]["scratchpad"]["capacity"] == f"{row['scratchpad_kib']} KiB"


def test_other_oracles_run_as_they_are_and_keep_their_objectives() -> None:
    from autotune import oracles

    ga1 = oracles.get("ga1")
    machine = ga1.default_machine()
    assert ga1.for_machine(machine) is ga1
    assert ga1.objectives_of(machine) == tuple(ga1.default_objectives)
    budget = ORACLE.parse_machine("")
    assert ORACLE.objectives_of(budget) == ("cycles", "words_per_mac")
    assert ORACLE.objectives_of(tpu()) == ("cycles",)
    assert plan_of("64x64x64", arch="tpu-v1").objectives == ("cycles",)


def test_studies_on_other_architectures_are_not_near() -> None:
    import math

    from autotune.search.transfer import distance
    from simcore.shape import Shape

    shape = Shape(64, 64, 64)
    assert distance(shape, tpu(), shape, tpu(), ORACLE) == 0
    assert distance(shape, tpu(), shape, ORACLE.arch_machine("gemmini"), ORACLE) == math.inf
    assert distance(shape, tpu(), Shape(64, 64, 128), tpu(), ORACLE) == 1


def test_a_workload_is_tuned_gemm_by_gemm_on_an_architecture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "w.csv").write_text("name,shape,weight\nq,64x128x96,2\nff,64x96x256,1\n")
    argv = ["--workload", "w.csv", "--arch", "edge-npu", "--trials", "5", "--verify-top", "1"]
    assert main([*argv, "--storage", ":memory:"]) == 0
    out = capsys.readouterr().out
    assert "weighted total" in out and out.count("systolic-blocked") == 2
