"""Regenerate tests/simcore/golden/scalesim.json: SCALE-Sim 3.0's figures for GEMMs on arrays in
its three dataflows, the golden data `tests/simcore/test_scalesim_golden.py` checks the systolic
model against under `--assume scalesim`.

SCALE-Sim is not a dependency of autotune (it needs numpy < 2.4). Install it in its own virtual
environment, outside the repository, then run this script with the project's Python:

    python3 -m venv /work/scalesim-venv
    /work/scalesim-venv/bin/pip install 'numpy<2.4' scalesim
    python tools/scalesim_golden.py --venv /work/scalesim-venv

Without the environment the script says so and exits 0 (CI does not install SCALE-Sim). Each
case runs SCALE-Sim as its own command line `python -m scalesim.scale -c scale.cfg -t gemm.csv -l
layout.csv -i gemm -p out -s N` does, through tools/scalesim_driver.py (run by the environment's
Python), with SRAMs large enough that nothing stalls and its CALC bandwidth mode; it records the
reports' Total Cycles, Stall Cycles, SRAM reads and writes, and the rows of the demand matrices.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scalesim_driver import DATAFLOWS, probe, python_of  # tools/, this script's folder

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
SCALESIM_COMMAND = (
    "python -m scalesim.scale -c scale.cfg -t gemm.csv -l layout.csv -i gemm -p out -s N"
)


def generate(python: Path) -> dict[str, object]:
    cases = []
    version = None
    for m, k, n, rows, cols in CASES:
        for dataflow in DATAFLOWS:
            found = probe(python, "gemm", *map(str, (m, k, n, rows, cols)), dataflow)
            version = {"scalesim": found["scalesim"], "numpy": found["numpy"]}
            figures = found["layers"][0]
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
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path("/work/scalesim-venv"),
        help="SCALE-Sim's virtual environment",
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
    data = generate(python)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(args.out)
    print(f"wrote {len(data['cases'])} cases to {args.out}", file=sys.stderr)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
