"""Our block schedules move no more DRAM elements than the best mapping ZigZag's and AccelForge's
mappers found for the same machine and GEMM (golden files from benchmarks/bench_memory_mappers.py,
run in the peers' own virtualenvs); our fewest DRAM elements are recomputed here, by the counts
of every candidate of the enumerative search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked.bounds import bound
from simcore.systolic.blocked.enumerate import least_traffic
from simcore.systolic.model import SystolicDesign

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
PEERS = {
    "zigzag": GOLDEN / "zigzag_mapper.json",
    "accelforge": GOLDEN / "accelforge_mapper.json",
}
QUICK = ("tpu-v1:resnet50 conv2 3x3", "tpuv4i:resnet50 conv4 3x3")


def _dram_elements(peer: str, result: dict) -> float:
    if peer == "accelforge":
        d = result["dram_elements"]
        return d["A_read"] + d["B_read"] + d["C_read"] + d["C_write"]
    dram = {
        op: next(lv["elements"] for lv in levels if lv["memory"] == "dram")
        for op, levels in result["levels"].items()
    }
    return (
        dram["A"]["rd_out_to_low"]
        + dram["B"]["rd_out_to_low"]
        + dram["C"]["rd_out_to_low"]
        + dram["C"]["wr_in_by_low"]
    )


def _peers() -> dict[str, dict[str, float]]:
    """Per case id, each peer's DRAM elements."""
    out: dict[str, dict[str, float]] = {}
    for peer, path in PEERS.items():
        golden = json.loads(path.read_text())
        for result in golden["results"]:
            out.setdefault(result["id"], {})[peer] = _dram_elements(peer, result)
    return out


def _cases() -> dict[str, dict]:
    golden = json.loads(PEERS["zigzag"].read_text())
    return {case["id"]: case for case in golden["cases"]}


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_the_golden_files_say_where_they_come_from(peer: str) -> None:
    golden = json.loads(PEERS[peer].read_text())
    for key in ("tool", "version", "command", "runner", "date", "architectures", "mapper"):
        assert golden["provenance"][key]
    assert {r["id"] for r in golden["results"]} == {c["id"] for c in golden["cases"]}


def _check(case_id: str) -> None:
    case = _cases()[case_id]
    machine = load_arch(case["machine"])
    design = SystolicDesign(machine.array, machine.dataflow)
    shape = Shape(case["m"], case["k"], case["n"])
    ours = least_traffic(machine, design, shape, by="elements").value
    assert ours >= bound(machine, shape, design).traffic_elements
    for peer, theirs in _peers()[case_id].items():
        assert ours <= theirs, f"{case_id}: ours {ours:,.0f} > {peer} {theirs:,.0f}"


@pytest.mark.parametrize("case_id", QUICK)
def test_fewer_or_as_many_dram_elements_as_the_peers(case_id: str) -> None:
    _check(case_id)


@pytest.mark.slow
@pytest.mark.parametrize("case_id", sorted(set(_cases()) - set(QUICK)))
def test_fewer_or_as_many_dram_elements_as_the_peers_on_every_case(case_id: str) -> None:
    _check(case_id)
