"""Regenerate tests/search_spaces/golden/scalesim_topologies.json: SCALE-Sim 3.0's per-layer
figures for whole convolution topologies (its own ResNet-50 and AlexNet files) on several arrays
in its three dataflows, the golden data `tests/search_spaces/test_scalesim_topologies_golden.py`
checks the systolic model against under `--assume scalesim`.

SCALE-Sim is not a dependency of autotune. Install it in its own virtual environment, outside
the repository (see tools/scalesim_golden.py), give this script the topology files as SCALE-Sim's
repository publishes them (topologies/conv_nets/Resnet50.csv and alexnet.csv), and run it with
the project's Python:

    python tools/scalesim_topology_golden.py --venv /work/scalesim-venv \\
        --topology /path/to/scale-sim-v3/topologies/conv_nets/Resnet50.csv \\
        --topology /path/to/scale-sim-v3/topologies/conv_nets/alexnet.csv

SCALE-Sim's own reader (scalesim/topology_utils.py, load_arrays_conv) fails on Resnet50.csv as
published: it drops each row's last cell, reads a ninth cell as an N:M sparsity ratio, and the
file has an empty row of commas and annotation columns (Eh, Ew, e2). So each topology is handed to
SCALE-Sim as its first eight columns per non-empty row, each row ending in a comma (its format).
The JSON records every layer as SCALE-Sim read it (its topo_arrays row), so the test needs no
copy of the topology files. Each case is one subprocess running `probe` in the SCALE-Sim
environment; finished cases are kept in --cache, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scalesim_golden import CONFIG  # noqa: E402  (the same SCALE-Sim configuration as the GEMM golden)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "search_spaces" / "golden" / "scalesim_topologies.json"
DATAFLOWS = ("ws", "os", "is")
# topology file stem -> arrays (rows, cols); square and rectangular, small and large.
ARRAYS: dict[str, tuple[tuple[int, int], ...]] = {
    "alexnet": ((128, 128), (32, 32), (64, 256)),
    "Resnet50": ((128, 128), (256, 256)),
}
# SCALE-Sim simulates every layer on its own (its own operand, demand matrices and memory system),
# but a run of the whole file keeps every layer's matrices: ResNet-50 on 128x128, about 10 GB. Its
# layers run one SCALE-Sim run each, which reports the same figures.
PER_LAYER = frozenset({"Resnet50"})
SOURCE = "github.com/scalesim-project/scale-sim-v3, topologies/conv_nets/"


def scalesim_rows(text: str) -> str:
    """The topology as SCALE-Sim 3.0 can read it: header, then the first eight columns of every
    row that has any, each row ending in a comma."""
    lines = text.lstrip("\ufeff").splitlines()
    out = [lines[0].strip()]
    for line in lines[1:]:
        cells = [c.strip() for c in line.split(",")][:8]
        if any(cells):
            out.append(",".join(cells) + ",")
    return "\n".join(out) + "\n"


def _report(path: Path) -> list[dict[str, str]]:
    lines = path.read_text().splitlines()
    header = [h.strip() for h in lines[0].split(",")]
    return [
        {h: v.strip() for h, v in zip(header, line.split(",")) if h}
        for line in lines[1:]
        if line.strip()
    ]


def _run_scalesim(text: str, rows: int, cols: int, dataflow: str) -> list[dict[str, object]]:
    """One SCALE-Sim run on a topology (SCALE-Sim's format): each layer's figures."""
    import contextlib
    import io

    from scalesim.scale_sim import scalesim

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "scale.cfg").write_text(CONFIG.format(rows=rows, cols=cols, dataflow=dataflow))
        (work / "topology.csv").write_text(text)
        (work / "layout.csv").write_text("Layer,\n")
        with contextlib.redirect_stdout(io.StringIO()):
            sim = scalesim(
                save_disk_space=True,
                verbose=False,
                config=str(work / "scale.cfg"),
                topology=str(work / "topology.csv"),
                layout=str(work / "layout.csv"),
                input_type_gemm=False,
            )
            sim.run_scale(top_path=str(work / "out"))
        compute = _report(work / "out" / "golden" / "COMPUTE_REPORT.csv")
        access = _report(work / "out" / "golden" / "DETAILED_ACCESS_REPORT.csv")
        layers = []
        for index, (row, comp, acc) in enumerate(zip(sim.topo.topo_arrays, compute, access)):
            system = sim.runner.single_layer_sim_object_list[index].compute_system
            demand = [mat.shape[0] for mat in system.get_demand_matrices()]
            layers.append(
                {
                    "name": str(row[0]),
                    "row": [int(v) for v in row[1:9]],
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


def probe(
    topology: Path, rows: int, cols: int, dataflow: str, per_layer: bool
) -> dict[str, object]:
    """Run SCALE-Sim on one topology, array and dataflow (inside its environment): the whole
    file in one run, or (per_layer) each layer in a run of its own."""
    import gc
    import importlib.metadata

    import numpy

    text = scalesim_rows(topology.read_text())
    if not per_layer:
        layers = _run_scalesim(text, rows, cols, dataflow)
    else:
        header, *body = text.splitlines()
        layers = []
        for line in body:
            layers += _run_scalesim(f"{header}\n{line}\n", rows, cols, dataflow)
            gc.collect()
    return {
        "scalesim": importlib.metadata.version("scalesim"),
        "numpy": numpy.__version__,
        "per_layer": per_layer,
        "layers": layers,
    }


def _case(python: Path, topology: Path, rows: int, cols: int, dataflow: str, cache: Path) -> dict:
    key = f"{topology.stem}-{rows}x{cols}-{dataflow}"
    done = cache / f"{key}.json"
    if done.is_file():
        return json.loads(done.read_text())
    start = time.monotonic()
    argv = [
        str(python),
        str(Path(__file__).resolve()),
        "probe",
        str(topology),
        str(rows),
        str(cols),
        dataflow,
        *(["--per-layer"] if topology.stem in PER_LAYER else []),
    ]
    figures = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
    figures["seconds"] = round(time.monotonic() - start, 1)
    done.write_text(json.dumps(figures))
    print(f"{key}: {len(figures['layers'])} layers in {figures['seconds']} s", file=sys.stderr)
    return figures


def generate(venv: Path, topologies: list[Path], cache: Path) -> dict[str, object]:
    cache.mkdir(parents=True, exist_ok=True)
    python = venv / "bin" / "python"
    cases, version, files = [], {}, {}
    for topology in topologies:
        data = topology.read_bytes()
        files[topology.name] = {
            "source": SOURCE + topology.name,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        }
        for rows, cols in ARRAYS[topology.stem]:
            for dataflow in DATAFLOWS:
                figures = _case(python, topology, rows, cols, dataflow, cache)
                version = {"scalesim": figures["scalesim"], "numpy": figures["numpy"]}
                cases.append(
                    {
                        "topology": topology.name,
                        "rows": rows,
                        "cols": cols,
                        "dataflow": dataflow,
                        "seconds": figures["seconds"],
                        "per_layer": figures.get("per_layer", False),
                        "layers": figures["layers"],
                    }
                )
    return {
        "provenance": {
            "tool": "SCALE-Sim (PyPI package scalesim)",
            **version,
            "produced_by": "python tools/scalesim_topology_golden.py --venv /work/scalesim-venv "
            "--topology .../Resnet50.csv --topology .../alexnet.csv",
            "topologies": files,
            "per_layer": "a case with per_layer true ran SCALE-Sim once per layer (a one-layer "
            "topology each), else once on the whole file. SCALE-Sim simulates each layer on its "
            "own, with its own memory system, so the figures are the same; a run of the whole "
            "file holds every layer's matrices in memory (ResNet-50 on 128x128: about 10 GB).",
            "each_case": "scalesim.scale_sim.scalesim(config=scale.cfg, topology=topology.csv, "
            "input_type_gemm=False).run_scale(), the same as python -m scalesim.scale -c scale.cfg "
            "-t topology.csv -p out (scale.cfg: tools/scalesim_golden.py's, with the case's "
            "ArrayHeight, ArrayWidth and Dataflow, 64 MiB SRAMs, InterfaceBandwidth CALC)",
            "notes": [
                "topology.csv is the published file reduced to its first eight columns per "
                "non-empty row (SCALE-Sim's reader fails on Resnet50.csv as published); 'row' is "
                "each layer as SCALE-Sim read it: IFMAP height, width, filter height, width, "
                "channels, filters, stride h, stride w.",
                "total_cycles is the report's Total Cycles: the last 0-based cycle index, one "
                "less than the demand rows when nothing stalls.",
                "ofmap_sram_writes for os adds folds x (R + C) to M N (systolic_compute_os.py).",
                "ifmap = A (M x K, im2col of the input), filter = B (K x N), ofmap = C.",
            ],
        },
        "cases": cases,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser(
        "probe", help="(inside the SCALE-Sim environment) run one case, print JSON"
    )
    run.add_argument("topology", type=Path)
    run.add_argument("rows", type=int)
    run.add_argument("cols", type=int)
    run.add_argument("dataflow", choices=DATAFLOWS)
    run.add_argument("--per-layer", action="store_true", help="run each layer on its own")
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path("/work/scalesim-venv"),
        help="SCALE-Sim's virtual environment",
    )
    parser.add_argument(
        "--topology",
        type=Path,
        action="append",
        default=[],
        help="a SCALE-Sim topology file (repeatable): Resnet50.csv, alexnet.csv",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "scalesim-topology-golden",
        help="where finished cases are kept",
    )
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the golden data")
    args = parser.parse_args(argv)
    if args.command == "probe":
        print(json.dumps(probe(args.topology, args.rows, args.cols, args.dataflow, args.per_layer)))
        return 0
    if not (args.venv / "bin" / "python").exists():
        print(
            f"skipping: no SCALE-Sim environment at {args.venv} (see this script's docstring)",
            file=sys.stderr,
        )
        return 0
    unknown = [t.name for t in args.topology if t.stem not in ARRAYS]
    if not args.topology or unknown:
        parser.error(f"give --topology for each of {', '.join(f'{s}.csv' for s in ARRAYS)}")
    data = generate(args.venv, args.topology, args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(args.out)
    print(f"wrote {len(data['cases'])} cases to {args.out}", file=sys.stderr)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
