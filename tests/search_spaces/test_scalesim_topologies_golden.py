"""SCALE-Sim's own topologies (its ResNet-50 and AlexNet files) layer by layer: read as a
workload, every layer's GEMM has, under SCALE-Sim's assumptions on the same array and dataflow,
the compute cycles and the SRAM reads and writes SCALE-Sim 3.0 reported for it.

Golden data: tests/search_spaces/golden/scalesim_topologies.json, produced by SCALE-Sim itself
through tools/scalesim_topology_golden.py (its provenance block names the version, the command,
the configuration and each topology file's SHA-256). It records every layer as SCALE-Sim read
it, so the topology is rebuilt here in SCALE-Sim's format. With SCALESIM_TOPOLOGIES set to a
folder holding the published files, the reader is also checked on the files as published.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from autotune.cli import main
from simcore.systolic import SCALESIM, SystolicArray, SystolicDesign, cycles
from simcore.systolic.scalesim import ScalesimReport, scalesim_report
from workloads import Gemm, load_workload

GOLDEN = json.loads((Path(__file__).parent / "golden" / "scalesim_topologies.json").read_text())
CASES = GOLDEN["cases"]
HEADER = (
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
    "Num Filter, Strides,"
)


def _id(case: dict) -> str:
    return f"{case['topology']}-{case['rows']}x{case['cols']}-{case['dataflow']}"


def _topology(case: dict) -> str:
    lines = [HEADER]
    for layer in case["layers"]:
        *dims, stride_h, stride_w = layer["row"]
        assert stride_h == stride_w  # SCALE-Sim's format has one stride
        lines.append(",".join([layer["name"], *map(str, dims), str(stride_h)]) + ",")
    return "\n".join(lines) + "\n"


def _by_layer(path: Path) -> dict[str, Gemm]:
    return {layer: gemm for gemm in load_workload(path).gemms for layer in gemm.layers}


def test_the_golden_data_says_where_it_came_from() -> None:
    provenance = GOLDEN["provenance"]
    assert (
        provenance["scalesim"] == "3.0.0"
        and "tools/scalesim_topology_golden.py" in provenance["produced_by"]
    )
    assert set(provenance["topologies"]) == {"Resnet50.csv", "alexnet.csv"}
    assert all(len(f["sha256"]) == 64 for f in provenance["topologies"].values())
    for topology in provenance["topologies"]:
        runs = {(c["rows"], c["cols"], c["dataflow"]) for c in CASES if c["topology"] == topology}
        arrays = {(r, c) for r, c, _ in runs}
        assert len(arrays) >= 2 and runs == {
            (r, c, d) for r, c in arrays for d in ("ws", "os", "is")
        }


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_every_layer_equals_scalesim(tmp_path: Path, case: dict) -> None:
    path = tmp_path / case["topology"]
    path.write_text(_topology(case))
    gemms = _by_layer(path)
    design = SystolicDesign(
        SystolicArray(case["rows"], case["cols"]), case["dataflow"], None, SCALESIM
    )
    for layer in case["layers"]:
        assert layer["stall_cycles"] == 0 and set(layer["demand_rows_all"]) == {
            layer["demand_rows"]
        }
        shape = gemms[layer["name"]].shape
        assert cycles(design, shape) == layer["demand_rows"], layer["name"]
        assert scalesim_report(design, shape) == ScalesimReport(
            layer["total_cycles"],
            layer["ifmap_sram_reads"],
            layer["filter_sram_reads"],
            layer["ofmap_sram_writes"],
        ), layer["name"]
    assert sum(g.weight for g in set(gemms.values())) == len(case["layers"])


def test_the_command_prints_scalesims_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = next(c for c in CASES if c["topology"] == "alexnet.csv" and c["dataflow"] == "os")
    path = tmp_path / "alexnet.csv"
    path.write_text(_topology(case))
    argv = [
        "systolic",
        "--workload",
        str(path),
        "--array",
        f"{case['rows']}x{case['cols']}",
        "--dataflow",
        "os",
        "--assume",
        "scalesim",
        "--json",
    ]
    assert main(argv) == 0
    *layers, total = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    figures = {name: row["scalesim"] for row in layers for name in row["layers"]}
    for layer in case["layers"]:
        assert figures[layer["name"]] == {
            key: layer[key]
            for key in (
                "total_cycles",
                "ifmap_sram_reads",
                "filter_sram_reads",
                "ofmap_sram_writes",
            )
        }
    assert total["scalesim"]["ifmap_sram_reads"] == sum(
        layer["ifmap_sram_reads"] for layer in case["layers"]
    )


@pytest.mark.skipif(
    "SCALESIM_TOPOLOGIES" not in os.environ,
    reason="SCALESIM_TOPOLOGIES names no folder with SCALE-Sim's published topology files",
)
@pytest.mark.parametrize("name", ["Resnet50.csv", "alexnet.csv"])
def test_the_published_files_read_as_scalesim_reads_them(name: str) -> None:
    path = Path(os.environ["SCALESIM_TOPOLOGIES"]) / name
    assert (
        hashlib.sha256(path.read_bytes()).hexdigest()
        == GOLDEN["provenance"]["topologies"][name]["sha256"]
    )
    case = next(c for c in CASES if c["topology"] == name)
    gemms = _by_layer(path)
    assert len(gemms) == len(case["layers"])
    for layer in case["layers"]:  # the same GEMM as from SCALE-Sim's reading of the row
        height, width, fh, fw, channels, filters, stride, _ = layer["row"]
        pixels = (-(-(height - fh + stride) // stride)) * (-(-(width - fw + stride) // stride))
        shape = gemms[layer["name"]].shape
        assert (shape.m, shape.k, shape.n) == (pixels, fh * fw * channels, filters)
