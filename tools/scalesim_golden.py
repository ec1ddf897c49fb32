"""Regenerate tests/simcore/golden/scalesim.json: SCALE-Sim 3.0's figures for GEMMs on arrays in
its three dataflows, the golden data `tests/simcore/test_scalesim_golden.py` checks the systolic
model against under `--assume scalesim`.

SCALE-Sim is not a dependency of autotune (it needs numpy < 2.4). Install it in its own virtual
environment, outside the repository, then run this script with the project's Python:

    python3 -m venv /work/scalesim-venv
    /work/scalesim-venv/bin/pip install 'numpy<2.4' scalesim
    python tools/scalesim_golden.py --venv /work/scalesim-venv

Without the environment the script says so and exits 0 (CI does not install SCALE-Sim). Each
case runs SCALE-Sim's own command line, `python -m scalesim.scale -c scale.cfg -t gemm.csv -l
layout.csv -i gemm -p out -s N`, through `probe` below (run by the environment's Python), with
SRAMs large enough that nothing stalls and its CALC bandwidth mode; it records the reports'
Total Cycles, Stall Cycles, SRAM reads and writes, and the rows of the demand matrices.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "simcore" / "golden" / "scalesim.json"

# (M, K, N, array rows, array cols): divisible and ragged shapes, M or N below the array, K below
# the array, decode-like M = 1, rectangular arrays, the chapter's 6x6x6 on 3x3.
CASES: tuple[tuple[int, int, int, int, int], ...] = (
    (64, 64, 64, 8, 8),
    (6, 6, 6, 3, 3),
    (100, 70, 50, 16, 8),
    (1, 64, 64, 8, 8),
    (5, 300, 7, 32, 16),
    (33, 5, 40, 8, 8),
    (128, 96, 80, 4, 16),
    (17, 33, 9, 32, 8),
    (48, 40, 100, 12, 20),
    (3, 2, 1, 4, 4),
)
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
SCALESIM_COMMAND = (
    "python -m scalesim.scale -c scale.cfg -t gemm.csv -l layout.csv -i gemm -p out -s N"
)


def _report(path: Path) -> dict[str, str]:
    header, values = path.read_text().splitlines()[:2]
    return {h.strip(): v.strip() for h, v in zip(header.split(","), values.split(",")) if h.strip()}


def probe(m: int, k: int, n: int, rows: int, cols: int, dataflow: str) -> dict[str, object]:
    """Run SCALE-Sim on one case (inside its environment) and collect its figures."""
    import contextlib
    import importlib.metadata
    import io

    import numpy
    from scalesim.scale_sim import scalesim

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "scale.cfg").write_text(CONFIG.format(rows=rows, cols=cols, dataflow=dataflow))
        (work / "gemm.csv").write_text(
            f"Layer, M, N, K,\ngemm, {m}, {n}, {k},\n"
        )  # SCALE-Sim's column order
        (work / "layout.csv").write_text("Layer,\n")
        with contextlib.redirect_stdout(io.StringIO()):
            sim = scalesim(
                save_disk_space=True,
                verbose=False,
                config=str(work / "scale.cfg"),
                topology=str(work / "gemm.csv"),
                layout=str(work / "layout.csv"),
                input_type_gemm=True,
            )
            sim.run_scale(top_path=str(work / "out"))
        compute = _report(work / "out" / "golden" / "COMPUTE_REPORT.csv")
        access = _report(work / "out" / "golden" / "DETAILED_ACCESS_REPORT.csv")
        system = sim.runner.single_layer_sim_object_list[0].compute_system
        rows_of = [mat.shape[0] for mat in system.get_demand_matrices()]
    return {
        "scalesim": importlib.metadata.version("scalesim"),
        "numpy": numpy.__version__,
        "total_cycles": int(compute["Total Cycles"]),
        "stall_cycles": int(compute["Stall Cycles"]),
        "demand_rows": rows_of[0],
        "demand_rows_all": rows_of,
        "ifmap_sram_reads": int(float(access["SRAM IFMAP Reads"])),
        "filter_sram_reads": int(float(access["SRAM Filter Reads"])),
        "ofmap_sram_writes": int(float(access["SRAM OFMAP Writes"])),
    }


def generate(venv: Path) -> dict[str, object]:
    python = venv / "bin" / "python"
    cases = []
    version = None
    for m, k, n, rows, cols in CASES:
        for dataflow in DATAFLOWS:
            argv = [
                str(python),
                str(Path(__file__).resolve()),
                "probe",
                *map(str, (m, k, n, rows, cols)),
                dataflow,
            ]
            figures = json.loads(
                subprocess.run(argv, check=True, capture_output=True, text=True).stdout
            )
            version = {"scalesim": figures.pop("scalesim"), "numpy": figures.pop("numpy")}
            cases.append(
                {
                    "m": m,
                    "k": k,
                    "n": n,
                    "rows": rows,
                    "cols": cols,
                    "dataflow": dataflow,
                    **figures,
                }
            )
            print(
                f"{m}x{k}x{n} on {rows}x{cols} {dataflow}: {figures['total_cycles']} total cycles",
                file=sys.stderr,
            )
    return {
        "provenance": {
            "tool": "SCALE-Sim (PyPI package scalesim)",
            **(version or {}),
            "produced_by": "python tools/scalesim_golden.py --venv /work/scalesim-venv",
            "each_case": SCALESIM_COMMAND
            + " (scale.cfg: the case's ArrayHeight, ArrayWidth and Dataflow, 64 MiB "
            "SRAMs, InterfaceBandwidth CALC; gemm.csv: 'Layer, M, N, K,' then the case)",
            "notes": [
                "total_cycles is the report's Total Cycles: the last 0-based cycle index, one less than the rows of "
                "the demand matrices (demand_rows) when nothing stalls.",
                "ofmap_sram_writes for os adds folds x (R + C) to the true count M N: after flipping each fold's "
                "padded R x C output block it adds shape[0] + shape[1] (systolic_compute_os.py).",
                "ifmap = A (M x K), filter = B (K x N), ofmap = C.",
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
    for name in ("m", "k", "n", "rows", "cols"):
        run.add_argument(name, type=int)
    run.add_argument("dataflow", choices=DATAFLOWS)
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path("/work/scalesim-venv"),
        help="SCALE-Sim's virtual environment",
    )
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the golden data")
    args = parser.parse_args(argv)
    if args.command == "probe":
        print(json.dumps(probe(args.m, args.k, args.n, args.rows, args.cols, args.dataflow)))
        return 0
    if not (args.venv / "bin" / "python").exists():
        print(
            f"skipping: no SCALE-Sim environment at {args.venv} (see this script's docstring)",
            file=sys.stderr,
        )
        return 0
    data = generate(args.venv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(args.out)
    print(f"wrote {len(data['cases'])} cases to {args.out}", file=sys.stderr)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
