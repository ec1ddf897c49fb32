"""The GPT-2 MLP fused and unfused against AccelForge's fusion-aware mapper, without AccelForge:
its figures (accelforge 1.0.467, benchmarks/bench_fusion_peer.py, provenance in the file) are in
tests/simcore/golden/accelforge_fusion.json. Same machine, every tensor 8 bits wide as
AccelForge takes them; our schedules are the ones the benchmark's search finds (by DRAM words)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simcore.fusion.groups import FusedMlp
from simcore.systolic.fused import GemmSchedule, MlpSchedule, evaluate_fused, evaluate_unfused
from simcore.systolic.machine import machine_from_dict
from simcore.systolic.model import SystolicDesign

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "accelforge_fusion.json").read_text())
PEER = {r["id"]: r for r in GOLDEN["results"]}
GROUP = FusedMlp(1024, 768, 3072, 768, activation="relu", bias=False)
FUSED = {
    (4, 512): MlpSchedule(1024, 256, 512, 256, True, True, 2, 2),
    (4, 128): MlpSchedule(1024, 256, 512, 256, True, True, 2, 2),
    (1, 128): MlpSchedule(512, 256, 128, 256, True, True, 2, 1),
}
UNFUSED = {
    4: (GemmSchedule(1024, 768, 128, "mkn"), GemmSchedule(1024, 128, 768, "mkn")),
    1: (
        GemmSchedule(1024, 768, 128, "mkn", (1, 1, 1)),
        GemmSchedule(1024, 128, 768, "mkn", (1, 1, 1)),
    ),
}


def _machine(mib: int, bits: int):  # type: ignore[no-untyped-def]
    case = next(
        c for c in GOLDEN["cases"] if c["buffer_bits"] == mib * 8 * 2**20 and c["dram_bits"] == bits
    )
    return machine_from_dict(
        {
            "name": case["id"],
            "array": {
                "rows": case["rows"],
                "cols": case["cols"],
                "dataflow": "ws",
                "clock": "1 GHz",
            },
            "words": {"operand_bits": 8, "accumulator_bits": 8, "output_bits": 8},
            "buffers": {
                "global": {
                    "holds": ["a", "b", "c"],
                    "capacity": f"{mib} MiB",
                    "read_width": "256 words/cycle",
                    "write_width": "256 words/cycle",
                }
            },
            "dram": {"bandwidth": f"{bits // 8} B/cycle", "latency": "100 cycles"},
        }
    )


def _peer(mib: int, bits: int, fused: bool) -> dict:
    return PEER[f"{mib} MiB, {bits} bits/cycle, {'fused' if fused else 'unfused'}"]


def _bits(result: dict, action: str) -> float:
    return sum(v for k, v in result["dram_bits"].items() if k.endswith(action))


@pytest.mark.parametrize("mib, bits", sorted(FUSED))
def test_accelforge_fusion_keeps_the_hidden_tensor_off_dram(mib: int, bits: int) -> None:
    fused, apart = _peer(mib, bits, True), _peer(mib, bits, False)
    assert "H write" not in fused["dram_bits"] and apart["dram_bits"]["H write"] == 1024 * 3072 * 8
    assert _bits(fused, "write") == 1024 * 768 * 8  # Y alone: 6.3 M bits against 31.5 M
    assert fused["latency_cycles"] <= apart["latency_cycles"]
    assert fused["energy_pj"] < apart["energy_pj"]


@pytest.mark.parametrize("mib, bits", sorted(FUSED))
def test_ours_moves_no_more_dram_bits_than_accelforge(mib: int, bits: int) -> None:
    machine = _machine(mib, bits)
    design = SystolicDesign(machine.array, machine.dataflow)
    fused = evaluate_fused(machine, design, GROUP, FUSED[(mib, bits)])
    apart = evaluate_unfused(machine, design, GROUP, UNFUSED[mib], epilogues=True)
    for run, peer in ((fused, _peer(mib, bits, True)), (apart, _peer(mib, bits, False))):
        assert float(run.dram_bytes) * 8 <= _bits(peer, "read") + _bits(peer, "write")
        assert float(run.dram_write_bytes) * 8 == _bits(peer, "write")
    assert fused.cycles < apart.cycles
