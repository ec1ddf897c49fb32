"""SCALE-Sim 3.0's memory system reproduced: on the layers of its own topology and GEMM files, in
USER bandwidth mode with SRAMs too small to hold a layer, every layer's Total Cycles, Stall
Cycles, Total Cycles incl. prefetch, DRAM reads and writes, and the cycles of its DRAM and SRAM
traffic equal SCALE-Sim's reports.

Golden data: tests/simcore/golden/scalesim_memory.json, produced by SCALE-Sim itself through
tools/scalesim_memory_golden.py (its provenance block names the version, the command, the date,
the configuration template and each topology file's SHA-256). Each case's configuration is the
template filled with the case's settings, read here by the .cfg reader from the same text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simcore.systolic.scalesim_buffers import ScalesimMemoryReport
from simcore.systolic.scalesim_config import ScalesimConfig, parse_scalesim_config
from simcore.systolic.scalesim_layer import ScalesimLayer
from simcore.systolic.scalesim_memory import scalesim_memory_report
from simcore.systolic.scalesim_memory_reference import reference_memory_report

GOLDEN = json.loads((Path(__file__).parent / "golden" / "scalesim_memory.json").read_text())
CASES = GOLDEN["cases"]
TEMPLATE = GOLDEN["provenance"]["config_template"]
COLUMNS = GOLDEN["provenance"]["columns"]
READS = ("SRAM IFMAP Reads", "SRAM Filter Reads", "SRAM OFMAP Writes")  # the compute model's


def _id(case: dict) -> str:
    c = case["config"]
    return (
        f"{case['topology']}-{c['rows']}x{c['cols']}-{c['dataflow']}-"
        f"{c['ifmap_kb']}.{c['filter_kb']}.{c['ofmap_kb']}kB-{c['bandwidth']}.{c['ifmap_bandwidth']}.{c['filter_bandwidth']}w"
    )


def _config(case: dict) -> ScalesimConfig:
    return parse_scalesim_config(TEMPLATE.format(**case["config"]))


def _layer(layer: dict) -> ScalesimLayer:
    return ScalesimLayer(layer["name"], *layer["row"])


def _scalesims(layer: dict) -> dict[str, int]:
    """SCALE-Sim's figures for the layer, less the SRAM counts (the compute model's)."""
    return {c: v for c, v in zip(COLUMNS, layer["figures"], strict=True) if c not in READS}


def _figures(report: ScalesimMemoryReport) -> dict[str, int]:
    """The report as SCALE-Sim's columns."""
    out = {
        "Total Cycles": report.total_cycles,
        "Stall Cycles": report.stall_cycles,
        "Total Cycles (incl. prefetch)": report.cycles_with_prefetch,
        "DRAM IFMAP Reads": report.ifmap_dram_reads,
        "DRAM Filter Reads": report.filter_dram_reads,
        "DRAM OFMAP Writes": report.ofmap_dram_writes,
    }
    for name, dram, sram in (
        ("IFMAP", report.ifmap_dram_cycles, report.ifmap_sram_cycles),
        ("Filter", report.filter_dram_cycles, report.filter_sram_cycles),
        ("OFMAP", report.ofmap_dram_cycles, report.ofmap_sram_cycles),
    ):
        out[f"DRAM {name} Start Cycle"], out[f"DRAM {name} Stop Cycle"] = dram
        out[f"SRAM {name} Start Cycle"], out[f"SRAM {name} Stop Cycle"] = sram
    return out


def test_the_golden_data_says_where_it_came_from() -> None:
    provenance = GOLDEN["provenance"]
    assert provenance["scalesim"] == "3.0.0" and provenance["date"]
    assert "tools/scalesim_memory_golden.py" in provenance["produced_by"]
    assert "InterfaceBandwidth: USER" in TEMPLATE
    assert all(len(f["sha256"]) == 64 for f in provenance["topologies"]["files"].values())
    settings = [case["config"] for case in CASES]
    assert {s["dataflow"] for s in settings} == {"ws", "os", "is"}
    assert {s["bandwidth"] for s in settings} >= {1, 2, 5, 10, 20, 50}
    assert len({(s["rows"], s["cols"]) for s in settings}) >= 4
    assert max(max(s["ifmap_kb"], s["filter_kb"], s["ofmap_kb"]) for s in settings) <= 4


def test_the_layers_stall_and_spill() -> None:
    """The SRAMs are too small: most layers stall (all but some at 50 words per cycle), and
    almost all read an operand from DRAM more than once."""
    layers = [layer for case in CASES for layer in case["layers"]]
    figures = [_scalesims(layer) for layer in layers]
    assert sum(f["Stall Cycles"] > 0 for f in figures) >= 0.7 * len(layers)
    spilled = 0
    for layer, f in zip(layers, figures):
        shaped = _layer(layer)
        spilled += (
            f["DRAM IFMAP Reads"] > shaped.pixels * shaped.window
            or f["DRAM Filter Reads"] > shaped.window * shaped.filters
        )
    assert spilled >= 0.9 * len(layers)
    assert sum(not layer["shortened"] for layer in layers) >= 100


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_every_layer_equals_scalesim(case: dict) -> None:
    config = _config(case)
    for layer in case["layers"]:
        got = _figures(scalesim_memory_report(config, _layer(layer)))
        assert got == _scalesims(layer), layer["name"]


SMALL = [
    (case, layer)
    for case in CASES
    for layer in case["layers"]
    if _layer(layer).pixels * _layer(layer).window * _layer(layer).filters <= 60_000
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "layer"), SMALL[::7], ids=[f"{_id(c)}-{la['name']}" for c, la in SMALL[::7]]
)
def test_the_reference_engine_equals_scalesim(case: dict, layer: dict) -> None:
    got = _figures(reference_memory_report(_config(case), _layer(layer)))
    assert got == _scalesims(layer)
