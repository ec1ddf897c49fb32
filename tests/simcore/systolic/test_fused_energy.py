"""A fused group's energy: every kernel's counts, the vector unit's lane operations at the
table's energies, and fusion saving what it does not move."""

from __future__ import annotations

import dataclasses

from simcore.energy.fused import fused_cost
from simcore.energy.technology import default_technology
from simcore.fusion.groups import FusedMlp
from simcore.systolic.archs import load_arch
from simcore.systolic.fused import GemmSchedule, MlpSchedule, evaluate_fused, evaluate_unfused
from simcore.systolic.model import SystolicDesign


def test_fusion_saves_the_hidden_tensors_traffic_and_its_energy() -> None:
    machine = load_arch("gemmini")
    design = SystolicDesign(machine.array, machine.dataflow)
    group = FusedMlp(256, 128, 512, 128)
    tech = default_technology()
    fused = fused_cost(evaluate_fused(machine, design, group, MlpSchedule(64, 128, 64, 128)), tech)
    apart = fused_cost(
        evaluate_unfused(
            machine,
            design,
            group,
            (GemmSchedule(64, 128, 64), GemmSchedule(64, 64, 128)),
            epilogues=True,
        ),
        tech,
    )
    assert fused.macs == apart.macs == group.macs
    assert fused.category("off_chip").pj < apart.category("off_chip").pj
    lanes = {item.name: item.amount for item in fused.category("compute").items}
    assert lanes["vector unit sfu lane operations"] == 256 * 512  # one exp per hidden element
    assert lanes["vector unit add lane operations"] == 256 * 512 * 3 + 256 * 128  # b1, gelu's 2; b2


def test_without_vector_energies_the_arithmetic_is_listed_as_not_counted() -> None:
    machine = load_arch("gemmini")
    design = SystolicDesign(machine.array, machine.dataflow)
    run = evaluate_fused(machine, design, FusedMlp(32, 32, 64, 32), MlpSchedule(16, 32, 16, 32))
    tech = dataclasses.replace(default_technology(), sfu_pj=None)
    cost = fused_cost(run, tech)
    assert any("vector unit's arithmetic" in reason for reason in cost.not_counted)
