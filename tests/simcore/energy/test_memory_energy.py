"""Energy and area of a block schedule: every line a count of the run times the table's energy."""

from __future__ import annotations

import pytest

from simcore.energy import default_technology, load_technology, shipped_table
from simcore.energy.memory import memory_cost, store_sizes
from simcore.energy.technology import TechnologyError
from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked import BlockSchedule, evaluate
from simcore.systolic.model import SystolicDesign


def _run(arch: str, shape: Shape, schedule: BlockSchedule):  # type: ignore[no-untyped-def]
    machine = load_arch(arch)
    return evaluate(machine, SystolicDesign(machine.array, machine.dataflow), schedule, shape)


def test_dram_bytes_are_costed_with_the_dram_line() -> None:
    tech = default_technology()
    run = _run("gemmini", Shape(64, 128, 64), BlockSchedule(32, 64, 32, "mnk"))
    cost = memory_cost(run, tech)
    off = {item.name: item for item in cost.category("off_chip").items}
    dram = run.counts.dram
    assert off["DRAM reads of A (bytes)"].amount == dram.a_reads
    assert off["DRAM reads of A (bytes)"].each == tech.dram_read_pj
    assert off["DRAM requests (set-ups)"].amount == dram.requests
    assert cost.macs == 64 * 128 * 64
    assert cost.energy_pj == pytest.approx(sum(c.pj for c in cost.categories))


def test_sram_energy_depends_on_each_stores_capacity() -> None:
    tech = default_technology()
    run = _run("tpu-v1", Shape(512, 512, 512), BlockSchedule(512, 256, 256, "mnk"))
    on = {item.name: item for item in memory_cost(run, tech).category("on_chip").items}
    assert on["unified reads (24576 KiB)"].each == pytest.approx(tech.sram_read_pj(24576))
    assert on["weight_fifo reads (256 KiB)"].each == pytest.approx(tech.sram_read_pj(256))
    assert on["accumulator reads (4096 KiB)"].each == pytest.approx(
        tech.sram_read_pj(4096) * 4
    )  # 32-bit
    assert [name for name, _kib, _bits in store_sizes(run.machine)] == [
        "unified",
        "weight_fifo",
        "accumulator",
    ]


def test_hbm_needs_the_tables_hbm_line() -> None:
    run = _run("tpuv4i", Shape(1, 1024, 1024), BlockSchedule(1, 1024, 512, "mnk"))
    cost = memory_cost(run, default_technology())
    names = [item.name for item in cost.category("off_chip").items]
    assert names[0] == "HBM reads of A (bytes)"
    with pytest.raises(TechnologyError, match="^energy.hbm_read_pj: missing key"):
        memory_cost(run, load_technology(shipped_table("zigzag_tpu_like.toml")))


def test_area_has_every_store() -> None:
    run = _run("gemmini", Shape(16, 16, 16), BlockSchedule(16, 16, 16, "mnk"))
    area = {item.name: item.amount for item in memory_cost(run, default_technology()).area}
    assert area["scratchpad SRAM KiB"] == 256 and area["accumulator SRAM KiB"] == 64
    assert area["PEs (16x16)"] == 256
