"""Regenerate tests/search_spaces/golden/scalesim_topologies.json: SCALE-Sim 3.0's per-layer
figures for whole convolution topologies (its own ResNet-50 and AlexNet files) on several arrays
in its three dataflows, the golden data `tests/search_spaces/test_scalesim_topologies_golden.py`
checks the systolic model against under `--assume scalesim`.

SCALE-Sim is not a dependency of autotune. Install it in its own virtual environment, outside
the repository (see tools/scalesim_golden.py), give this script the topology files as SCALE-Sim's
repository publishes them (topologies/conv_nets/Resnet50.csv and alexnet.csv), and run it with
the project's Python (SCALE-Sim itself runs through tools/scalesim_driver.py):

    python tools/scalesim_topology_golden.py --venv /work/scalesim-venv \\
        --topology /path/to/scale-sim-v3/topologies/conv_nets/Resnet50.csv \\
        --topology /path/to/scale-sim-v3/topologies/conv_nets/alexnet.csv

SCALE-Sim's own reader (scalesim/topology_utils.py, load_arrays_conv) fails on Resnet50.csv as
published: it drops each row's last cell, reads a ninth cell as an N:M sparsity ratio, and the
file has an empty row of commas and annotation columns (Eh, Ew, e2). So each topology is handed to
SCALE-Sim as its first eight columns per non-empty row, each row ending in a comma (its format).
The JSON records every layer as SCALE-Sim read it (its topo_arrays row), so the test needs no
copy of the topology files. Each case is one subprocess running the driver in the SCALE-Sim
environment; finished cases are kept in --cache, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

from scalesim_driver import DATAFLOWS, probe, python_of  # tools/, this script's folder

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "search_spaces" / "golden" / "scalesim_topologies.json"
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


def _case(python: Path, topology: Path, rows: int, cols: int, dataflow: str, cache: Path) -> dict:
    key = f"{topology.stem}-{rows}x{cols}-{dataflow}"
    done = cache / f"{key}.json"
    if done.is_file():
        return json.loads(done.read_text())
    start = time.monotonic()
    per_layer = ["--per-layer"] if topology.stem in PER_LAYER else []
    figures = probe(python, "topology", str(topology), str(rows), str(cols), dataflow, *per_layer)
    figures["seconds"] = round(time.monotonic() - start, 1)
    done.write_text(json.dumps(figures))
    print(f"{key}: {len(figures['layers'])} layers in {figures['seconds']} s", file=sys.stderr)
    return figures


def generate(python: Path, topologies: list[Path], cache: Path) -> dict[str, object]:
    cache.mkdir(parents=True, exist_ok=True)
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
            "-t topology.csv -p out (scale.cfg: tools/scalesim_driver.py's, with the case's "
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
    python = python_of(args.venv)
    if python is None:
        print(
            f"skipping: no SCALE-Sim environment at {args.venv} (see this script's docstring)",
            file=sys.stderr,
        )
        return 0
    unknown = [t.name for t in args.topology if t.stem not in ARRAYS]
    if not args.topology or unknown:
        parser.error(f"give --topology for each of {', '.join(f'{s}.csv' for s in ARRAYS)}")
    data = generate(python, args.topology, args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(args.out)
    print(f"wrote {len(data['cases'])} cases to {args.out}", file=sys.stderr)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
