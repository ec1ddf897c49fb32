"""SCALE-Sim 3.0's memory model, reproduced: how many figures equal, and how fast.

1. The golden data (tests/simcore/golden/scalesim_memory.json, SCALE-Sim's own reports): per
   figure, how many layers the model (simcore.systolic.scalesim_memory) equals; the model's CPU
   time (time.process_time) over all layers against the CPU time SCALE-Sim took on the same runs.
2. With --venv (SCALE-Sim's environment): a few larger layers run in SCALE-Sim (its CPU time,
   measured inside its process around `run_scale`) and in the model, side by side; their
   figures must be equal.

Usage: nice python benchmarks/bench_scalesim_memory.py [--venv /work/peers/scalesim-venv]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from scalesim_memory_golden import CONFIG, CONV_HEADER, GEMM_HEADER  # noqa: E402

from simcore.systolic.scalesim_config import parse_scalesim_config  # noqa: E402
from simcore.systolic.scalesim_layer import ScalesimLayer  # noqa: E402
from simcore.systolic.scalesim_memory import scalesim_memory_report  # noqa: E402

GOLDEN = ROOT / "tests" / "simcore" / "golden" / "scalesim_memory.json"
FIGURES = (
    "Total Cycles",
    "Stall Cycles",
    "Total Cycles (incl. prefetch)",
    "DRAM IFMAP Reads",
    "DRAM Filter Reads",
    "DRAM OFMAP Writes",
)
SETTINGS = {
    "ifmap_kb": 1,
    "filter_kb": 1,
    "ofmap_kb": 1,
    "bandwidth": 10,
    "ifmap_bandwidth": 10,
    "filter_bandwidth": 10,
}
# (what, GEMM format?, topology row, array rows, cols, dataflow)
LIVE = (
    ("GEMM 256 x 256 x 128", True, "g, 256, 128, 256,", 16, 16, "ws"),
    ("conv 14x14x64, 3x3, 64 filters", False, "c, 14, 14, 3, 3, 64, 64, 1,", 16, 16, "os"),
    ("conv 56x56x64, 1x1, 64 filters", False, "c, 56, 56, 1, 1, 64, 64, 1,", 32, 32, "ws"),
)


def figures(report) -> dict[str, int]:  # type: ignore[no-untyped-def]
    return dict(
        zip(
            FIGURES,
            (
                report.total_cycles,
                report.stall_cycles,
                report.cycles_with_prefetch,
                report.ifmap_dram_reads,
                report.filter_dram_reads,
                report.ofmap_dram_writes,
            ),
        )
    )


def golden() -> None:
    data = json.loads(GOLDEN.read_text())
    equal = dict.fromkeys(FIGURES, 0)
    layers, model_seconds, scalesim_seconds = 0, 0.0, 0.0
    for case in data["cases"]:
        config = parse_scalesim_config(
            data["provenance"]["config_template"].format(**case["config"])
        )
        scalesim_seconds += case["cpu_seconds"]
        for layer in case["layers"]:
            start = time.process_time()
            got = figures(
                scalesim_memory_report(config, ScalesimLayer(layer["name"], *layer["row"]))
            )
            model_seconds += time.process_time() - start
            layers += 1
            theirs = dict(zip(data["provenance"]["columns"], layer["figures"]))
            for key in FIGURES:
                equal[key] += got[key] == theirs[key]
    print(f"golden: {len(data['cases'])} runs, {layers} layers")
    for key in FIGURES:
        print(f"  {key}: {equal[key]}/{layers} equal")
    print(f"  CPU: model {model_seconds:.1f} s, SCALE-Sim {scalesim_seconds:.0f} s")


def live(venv: Path) -> None:
    print("| layer | array | dataflow | SCALE-Sim CPU | model CPU | figures equal |")
    print("|---|---|---|---|---|---|")
    for what, gemm, row, rows, cols, dataflow in LIVE:
        settings = {**SETTINGS, "rows": rows, "cols": cols, "dataflow": dataflow}
        text = CONFIG.format(**settings)
        topology = f"{GEMM_HEADER if gemm else CONV_HEADER}\n{row}\n"
        with tempfile.TemporaryDirectory() as tmp:
            case = Path(tmp) / "case.json"
            case.write_text(json.dumps({"cfg": text, "topology": topology, "gemm": gemm}))
            argv = [str(venv / "bin" / "python"), str(ROOT / "tools" / "scalesim_memory_golden.py")]
            out = subprocess.run(
                [*argv, "probe", str(case)], check=True, capture_output=True, text=True
            )
        theirs = json.loads(out.stdout)
        cells = [c.strip() for c in row.split(",")]
        values = [int(c) for c in cells[1:-1]]
        if gemm:
            layer = ScalesimLayer.gemm(cells[0], *values)
        else:
            *dims, stride = values
            layer = ScalesimLayer(cells[0], *dims, stride, stride)
        start = time.process_time()
        ours = figures(scalesim_memory_report(parse_scalesim_config(text), layer))
        seconds = time.process_time() - start
        same = all(ours[k] == theirs["layers"][0][k] for k in FIGURES)
        print(
            f"| {what} | {rows}x{cols} | {dataflow} | {theirs['cpu_seconds']:.1f} s | "
            f"{seconds * 1000:.0f} ms | {'yes' if same else 'NO'} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, help="SCALE-Sim's environment, for the live runs")
    args = parser.parse_args()
    golden()
    if args.venv is not None:
        live(args.venv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
