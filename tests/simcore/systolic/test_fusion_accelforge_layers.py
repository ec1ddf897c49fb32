"""One BERT-base layer and one LLaMA-2-7B layer (prefill and decode) fused and unfused against
AccelForge's fusion-aware mapper, without AccelForge: its figures
(benchmarks/peers/bench_fusion_peer.py, provenance in the file) are in
tests/simcore/golden/accelforge_fusion.json. Each part is two products with the intermediate
between them (an MLP; attention's Q K^T and (Q K^T) V, one head, times the heads, no softmax in
AccelForge's einsums). Our schedules are the ones the benchmark's search finds by DRAM words,
evaluated again here exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simcore.fusion.groups import FusedMlp
from simcore.systolic.fused import (
    FusedRun,
    GemmSchedule,
    MlpSchedule,
    evaluate_fused,
    evaluate_unfused,
)
from simcore.systolic.machine import SystolicMachine, machine_from_dict
from simcore.systolic.model import SystolicDesign

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "accelforge_fusion.json").read_text())
CASES = {c["id"]: c for c in GOLDEN["cases"] if c.get("layer", "GPT-2") != "GPT-2"}
PEER = {r["id"]: r for r in GOLDEN["results"]}
Mlp, Gemm = MlpSchedule, GemmSchedule
SCHEDULES: dict[str, tuple[Any, ...]] = {
    "BERT-base attention, 4 MiB, 128 bits/cycle, fused": (
        Mlp(128, 64, 128, 64, False, False, 1, 1),
    ),
    "BERT-base attention, 4 MiB, 128 bits/cycle, unfused": (
        Gemm(128, 64, 128, "mkn", (2, 2, 2)),
        Gemm(128, 128, 64, "mkn", (2, 2, 2)),
    ),
    "BERT-base attention, 1 MiB, 128 bits/cycle, fused": (
        Mlp(128, 64, 128, 64, False, False, 1, 1),
    ),
    "BERT-base attention, 1 MiB, 128 bits/cycle, unfused": (
        Gemm(128, 64, 128, "mkn", (2, 2, 2)),
        Gemm(128, 128, 64, "mkn", (2, 2, 2)),
    ),
    "BERT-base MLP, 4 MiB, 128 bits/cycle, fused": (Mlp(128, 128, 128, 128, True, True, 2, 2),),
    "BERT-base MLP, 4 MiB, 128 bits/cycle, unfused": (
        Gemm(128, 768, 128, "mkn", (2, 2, 2)),
        Gemm(128, 128, 768, "mkn", (2, 2, 2)),
    ),
    "BERT-base MLP, 1 MiB, 128 bits/cycle, fused": (Mlp(128, 128, 128, 128, True, True, 2, 2),),
    "BERT-base MLP, 1 MiB, 128 bits/cycle, unfused": (
        Gemm(128, 768, 128, "mkn", (2, 2, 2)),
        Gemm(128, 128, 768, "mkn", (2, 2, 2)),
    ),
    "LLaMA-2-7B prefill attention, 4 MiB, 128 bits/cycle, fused": (
        Mlp(2048, 128, 256, 128, True, True, 2, 2),
    ),
    "LLaMA-2-7B prefill attention, 4 MiB, 128 bits/cycle, unfused": (
        Gemm(128, 128, 2048, "mkn", (2, 2, 2)),
        Gemm(128, 2048, 128, "mkn", (2, 2, 2)),
    ),
    "LLaMA-2-7B prefill attention, 1 MiB, 128 bits/cycle, fused": (
        Mlp(512, 128, 128, 128, True, True, 1, 2, True),
    ),
    "LLaMA-2-7B prefill attention, 1 MiB, 128 bits/cycle, unfused": (
        Gemm(256, 128, 2048, "mkn", (1, 1, 1)),
        Gemm(2048, 256, 128, "mkn", (1, 1, 1)),
    ),
    "LLaMA-2-7B prefill MLP, 4 MiB, 128 bits/cycle, fused": (
        Mlp(1024, 128, 1024, 256, False, False, 2, 1),
    ),
    "LLaMA-2-7B prefill MLP, 4 MiB, 128 bits/cycle, unfused": (
        Gemm(2048, 512, 1024, "mnk", (1, 1, 1)),
        Gemm(1024, 512, 2048, "mnk", (1, 1, 1)),
    ),
    "LLaMA-2-7B prefill MLP, 1 MiB, 128 bits/cycle, fused": (
        Mlp(512, 128, 512, 128, False, False, 2, 1),
    ),
    "LLaMA-2-7B prefill MLP, 1 MiB, 128 bits/cycle, unfused": (
        Gemm(512, 256, 1024, "mnk", (1, 1, 1)),
        Gemm(512, 256, 1024, "mnk", (1, 1, 1)),
    ),
    "LLaMA-2-7B decode attention, 4 MiB, 128 bits/cycle, fused": (
        Mlp(1, 128, 128, 128, True, True, 1, 1),
    ),
    "LLaMA-2-7B decode attention, 4 MiB, 128 bits/cycle, unfused": (
        Gemm(1, 128, 128, "mkn", (2, 2, 2)),
        Gemm(1, 128, 128, "mkn", (2, 2, 2)),
    ),
    "LLaMA-2-7B decode attention, 1 MiB, 128 bits/cycle, fused": (
        Mlp(1, 128, 128, 128, True, True, 1, 1),
    ),
    "LLaMA-2-7B decode attention, 1 MiB, 128 bits/cycle, unfused": (
        Gemm(1, 128, 128, "mkn", (2, 2, 2)),
        Gemm(1, 128, 128, "mkn", (2, 2, 2)),
    ),
    "LLaMA-2-7B decode MLP, 4 MiB, 128 bits/cycle, fused": (
        Mlp(1, 128, 128, 128, True, True, 2, 1),
    ),
    "LLaMA-2-7B decode MLP, 4 MiB, 128 bits/cycle, unfused": (
        Gemm(1, 4096, 128, "mkn", (2, 2, 2)),
        Gemm(1, 128, 4096, "mkn", (2, 2, 2)),
    ),
    "LLaMA-2-7B decode MLP, 1 MiB, 128 bits/cycle, fused": (
        Mlp(1, 128, 128, 128, True, True, 2, 1),
    ),
    "LLaMA-2-7B decode MLP, 1 MiB, 128 bits/cycle, unfused": (
        Gemm(1, 4096, 128, "mkn", (1, 1, 1)),
        Gemm(1, 128, 4096, "mkn", (1, 1, 1)),
    ),
}
PAIRS = sorted({key.rsplit(", ", 1)[0] for key in SCHEDULES})  # a part on a machine


def _machine(case: dict[str, Any]) -> SystolicMachine:
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
                    "capacity": f"{case['buffer_bits'] // 2**23} MiB",
                    "read_width": f"{case['port_bits'] // 8} words/cycle",
                    "write_width": f"{case['port_bits'] // 8} words/cycle",
                }
            },
            "dram": {"bandwidth": f"{case['dram_bits'] // 8} B/cycle", "latency": "100 cycles"},
        }
    )


def _group(case: dict[str, Any]) -> FusedMlp:
    activation = "relu"  # where attention's softmax would be
    if case["part"] == "MLP":
        activation = "gelu" if case["layer"].startswith("BERT") else "silu"
    return FusedMlp(case["m"], case["d"], case["hidden"], case["d_out"], activation, bias=False)


def _ours(key: str) -> FusedRun:
    case = CASES[key]
    machine = _machine(case)
    design = SystolicDesign(machine.array, machine.dataflow)
    schedules = SCHEDULES[key]
    if case["fused"]:
        return evaluate_fused(machine, design, _group(case), schedules[0])
    return evaluate_unfused(machine, design, _group(case), schedules, epilogues=True)


def _moved(key: str) -> tuple[float, float]:
    """Ours and AccelForge's DRAM bits for the whole part (every head)."""
    times = CASES[key]["times"]
    peer = sum(PEER[key]["dram_bits"].values())
    return times * float(_ours(key).dram_bytes) * 8, times * peer


def test_the_golden_file_has_a_result_for_every_case_with_its_provenance() -> None:
    assert {c["id"] for c in GOLDEN["cases"]} == set(PEER)
    assert set(CASES) == set(SCHEDULES)
    assert {"tool", "version", "command", "runner", "date"} <= set(GOLDEN["provenance"])
    layers = {(c["layer"], c["part"]) for c in CASES.values()}
    for layer in ("BERT-base", "LLaMA-2-7B prefill", "LLaMA-2-7B decode"):
        assert {(layer, "attention"), (layer, "MLP")} <= layers


@pytest.mark.parametrize("pair", PAIRS)
def test_ours_moves_no_more_dram_bits_than_accelforge(pair: str) -> None:
    """Unfused against unfused; fused where fusing is a choice (the fused group or the
    products apart, the fewer DRAM words) against AccelForge's mapping free to fuse."""
    fused, fused_peer = _moved(f"{pair}, fused")
    apart, apart_peer = _moved(f"{pair}, unfused")
    assert apart <= apart_peer
    assert min(fused, apart) <= fused_peer


@pytest.mark.parametrize("pair", PAIRS)
def test_fusion_pays_in_dram_traffic_where_accelforge_says_it_does(pair: str) -> None:
    """Our fused group against the products apart, AccelForge's mapping free to fuse against
    its mapping with the intermediate in DRAM: both save DRAM traffic, or neither does."""
    fused, fused_peer = _moved(f"{pair}, fused")
    apart, apart_peer = _moved(f"{pair}, unfused")
    assert (fused < apart) == (fused_peer < apart_peer)
