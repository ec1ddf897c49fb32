"""SCALE-Sim, driven the one way both golden files use it (tools/scalesim_golden.py for GEMMs,
tools/scalesim_topology_golden.py for convolution topologies).

Run inside SCALE-Sim's own virtual environment (it imports nothing of this project):

    /work/scalesim-venv/bin/python tools/scalesim_driver.py gemm M K N ROWS COLS DATAFLOW
    /work/scalesim-venv/bin/python tools/scalesim_driver.py topology FILE ROWS COLS DATAFLOW [--per-layer]

Each prints one JSON object: the versions of SCALE-Sim and numpy, and the figures of every layer
(Total Cycles, Stall Cycles, SRAM reads and writes from its reports, the rows of its demand
matrices). SCALE-Sim runs with SRAMs large enough that nothing stalls and its CALC bandwidth
mode (CONFIG). The project's side calls `probe(python, ...)`, which runs this file with the
environment's Python.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

DATAFLOWS = ("ws", "os", "is")
CONFIG = """[general]
run_name = golden

[architecture_presets]
ArrayHeight: {rows}
ArrayWidth: {cols}
IfmapSramSzkB: 65536
FilterSramSzkB: 65536
OfmapSramSzkB: 65536
IfmapOffset: 0
FilterOffset: 100000000
OfmapOffset: 200000000
Dataflow: {dataflow}
Bandwidth: 10
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 10
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 10
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport: false
SparseRep: ellpack_block
OptimizedMapping: false
BlockSize: 8
RandomNumberGeneratorSeed: 40

[run_presets]
InterfaceBandwidth: CALC
UseRamulatorTrace: False
"""


def python_of(venv: Path) -> Path | None:
    """The environment's Python, or None where there is no such environment."""
    python = venv / "bin" / "python"
    return python if python.exists() else None


def probe(python: Path, *argv: str) -> dict:
    """This driver's JSON for `argv` (gemm ... or topology ...), run by SCALE-Sim's Python."""
    done = subprocess.run(
        [str(python), str(Path(__file__).resolve()), *argv],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)


# --- inside SCALE-Sim's environment -------------------------------------------------------------


def _rows_of(path: Path) -> list[dict[str, str]]:
    lines = path.read_text().splitlines()
    header = [h.strip() for h in lines[0].split(",")]
    return [
        {h: v.strip() for h, v in zip(header, line.split(",")) if h}
        for line in lines[1:]
        if line.strip()
    ]


def run(topology: str, rows: int, cols: int, dataflow: str, gemm: bool) -> list[dict[str, object]]:
    """One SCALE-Sim run on a topology in its own format (GEMM or convolution): each layer's
    figures, and for a convolution the layer as SCALE-Sim read it."""
    import contextlib
    import io

    from scalesim.scale_sim import scalesim

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "scale.cfg").write_text(CONFIG.format(rows=rows, cols=cols, dataflow=dataflow))
        (work / "topology.csv").write_text(topology)
        (work / "layout.csv").write_text("Layer,\n")
        with contextlib.redirect_stdout(io.StringIO()):
            sim = scalesim(
                save_disk_space=True,
                verbose=False,
                config=str(work / "scale.cfg"),
                topology=str(work / "topology.csv"),
                layout=str(work / "layout.csv"),
                input_type_gemm=gemm,
            )
            sim.run_scale(top_path=str(work / "out"))
        compute = _rows_of(work / "out" / "golden" / "COMPUTE_REPORT.csv")
        access = _rows_of(work / "out" / "golden" / "DETAILED_ACCESS_REPORT.csv")
        layers = []
        for index, (comp, acc) in enumerate(zip(compute, access)):
            system = sim.runner.single_layer_sim_object_list[index].compute_system
            demand = [mat.shape[0] for mat in system.get_demand_matrices()]
            layer: dict[str, object] = {}
            if not gemm:
                row = sim.topo.topo_arrays[index]
                layer = {"name": str(row[0]), "row": [int(v) for v in row[1:9]]}
            layers.append(
                {
                    **layer,
                    "total_cycles": int(comp["Total Cycles"]),
                    "stall_cycles": int(comp["Stall Cycles"]),
                    "demand_rows": demand[0],
                    "demand_rows_all": demand,
                    "ifmap_sram_reads": int(float(acc["SRAM IFMAP Reads"])),
                    "filter_sram_reads": int(float(acc["SRAM Filter Reads"])),
                    "ofmap_sram_writes": int(float(acc["SRAM OFMAP Writes"])),
                }
            )
    return layers


def scalesim_rows(text: str) -> str:
    """A published topology as SCALE-Sim 3.0 can read it: header, then the first eight columns
    of every row that has any, each row ending in a comma."""
    lines = text.lstrip("\ufeff").splitlines()
    out = [lines[0].strip()]
    for line in lines[1:]:
        cells = [c.strip() for c in line.split(",")][:8]
        if any(cells):
            out.append(",".join(cells) + ",")
    return "\n".join(out) + "\n"


def _versions() -> dict[str, str]:
    import importlib.metadata

    import numpy

    return {"scalesim": importlib.metadata.version("scalesim"), "numpy": numpy.__version__}


def gemm(m: int, k: int, n: int, rows: int, cols: int, dataflow: str) -> dict[str, object]:
    """One GEMM (SCALE-Sim's column order is M, N, K)."""
    layers = run(f"Layer, M, N, K,\ngemm, {m}, {n}, {k},\n", rows, cols, dataflow, gemm=True)
    return {**_versions(), "layers": layers}


def topology(path: Path, rows: int, cols: int, dataflow: str, per_layer: bool) -> dict[str, object]:
    """A convolution topology file: in one run, or (per_layer) each layer in a run of its own."""
    import gc

    text = scalesim_rows(path.read_text())
    if not per_layer:
        layers = run(text, rows, cols, dataflow, gemm=False)
    else:
        header, *body = text.splitlines()
        layers = []
        for line in body:
            layers += run(f"{header}\n{line}\n", rows, cols, dataflow, gemm=False)
            gc.collect()
    return {**_versions(), "per_layer": per_layer, "layers": layers}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("gemm", help="one GEMM on one array and dataflow")
    for name in ("m", "k", "n", "rows", "cols"):
        one.add_argument(name, type=int)
    one.add_argument("dataflow", choices=DATAFLOWS)
    net = sub.add_parser("topology", help="a convolution topology on one array and dataflow")
    net.add_argument("file", type=Path)
    net.add_argument("rows", type=int)
    net.add_argument("cols", type=int)
    net.add_argument("dataflow", choices=DATAFLOWS)
    net.add_argument("--per-layer", action="store_true", help="run each layer on its own")
    args = parser.parse_args(argv)
    if args.command == "gemm":
        found = gemm(args.m, args.k, args.n, args.rows, args.cols, args.dataflow)
    else:
        found = topology(args.file, args.rows, args.cols, args.dataflow, args.per_layer)
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
