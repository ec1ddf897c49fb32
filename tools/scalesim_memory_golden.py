"""Regenerate tests/simcore/golden/scalesim_memory.json: SCALE-Sim 3.0's per-layer Total Cycles,
Stall Cycles, DRAM reads and writes (and their cycles) in USER bandwidth mode with SRAMs too
small to hold a layer, on the layers of its own topology and GEMM files; the golden data
tests/simcore/test_scalesim_memory_golden.py holds simcore.systolic.scalesim_memory to.

SCALE-Sim is not a dependency of autotune (it needs numpy < 2.4). Install it in its own
environment and give this script a copy of its repository's `topologies/` folder:

    python3 -m venv /work/peers/scalesim-venv
    /work/peers/scalesim-venv/bin/pip install 'numpy<2.4' 'scalesim==3.0.0'
    nice python tools/scalesim_memory_golden.py --venv /work/peers/scalesim-venv \\
        --topologies /path/to/scale-sim-v3/topologies

Every topology file of `FILES` is read as SCALE-Sim reads it (the first eight cells of a
convolution row, the first four of a GEMM row), its distinct layers are kept, and each file runs
on `RUNS_PER_FILE` configurations taken in turn (`config`: every dataflow, several arrays,
SRAMs of 1 to 4 KB, 1 to 50 words per cycle). SCALE-Sim steps every request in Python, and its
cost grows with the square of a layer's DRAM traffic, so a layer the model predicts would take
SCALE-Sim longer than `FULL_SECONDS` runs shortened (`shorten`: the same filter and stride, at
most 6 x 6 outputs, a window of at most 256 and 40 filters, a filter of at most 16 x 16;
layers still estimated over `MAX_SECONDS` are left out). Each run is one subprocess running
`probe` in SCALE-Sim's environment, SCALE-Sim's own entry point on a generated .cfg and
topology; finished runs are kept in --cache, so an interrupted run resumes. `--dry-run` prints
the plan and the model's estimate of SCALE-Sim's time.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "simcore" / "golden" / "scalesim_memory.json"

FILES = (
    *(f"conv_nets/{n}.csv" for n in ("alexnet", "Resnet18", "Resnet50", "Googlenet", "mobilenet")),
    *(f"conv_nets/{n}.csv" for n in ("MobileNet_4k_non_dw", "FasterRCNN", "UNet_2d", "yolo_tiny")),
    *(f"conv_nets/{n}.csv" for n in ("yolo", "test", "alexnet_part", "Resnet_test")),
    *(
        f"GEMM_mnk/{n}.csv"
        for n in ("NCF", "gnmt", "gpt2", "test_mnk_input", "transformer_partial")
    ),
    *(f"GEMM_mnk/{n}.csv" for n in ("unet2d", "vit_l", "vit_s")),
    "mlperf/AlphaGoZero.csv",
    "mlperf/Sentimental_seqCNN.csv",
    "ispass25_models/vit_b.csv",
    "llama/llama3b.csv",
    "dlrm/DLRM.csv",
)
RUNS_PER_FILE = 3
FULL_SECONDS = 1.5
MAX_SECONDS = 12.0  # a shortened layer still estimated longer is left out
ARRAYS = ((8, 8), (16, 16), (32, 32), (8, 32), (32, 8), (4, 16), (16, 4))
SRAM_KB = ((1, 1, 1), (2, 1, 1), (1, 2, 2), (1, 1, 4), (4, 2, 1))
# (Bandwidth, IfmapSRAMBankBandwidth, FilterSRAMBankBandwidth): in USER mode SCALE-Sim 3.0 reads
# the IFMAP and filter SRAMs' DRAM bandwidth from the [layout] bank bandwidths, the OFMAP's
# from Bandwidth; most configurations set all three alike, two set them apart.
BANDWIDTHS = ((1, 1, 1), (2, 2, 2), (5, 5, 5), (10, 10, 10), (20, 20, 20), (50, 50, 50))
BANDWIDTHS += ((10, 1, 50), (4, 20, 2))

CONFIG = """[general]
run_name = memory

[architecture_presets]
ArrayHeight: {rows}
ArrayWidth: {cols}
IfmapSramSzkB: {ifmap_kb}
FilterSramSzkB: {filter_kb}
OfmapSramSzkB: {ofmap_kb}
IfmapOffset: 0
FilterOffset: 10000000
OfmapOffset: 20000000
Bandwidth: {bandwidth}
Dataflow: {dataflow}
MemoryBanks: 1
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: {ifmap_bandwidth}
IfmapSRAMBankNum: 1
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: {filter_bandwidth}
FilterSRAMBankNum: 1
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport: false
SparseRep: ellpack_block
OptimizedMapping: false
BlockSize: 8
RandomNumberGeneratorSeed: 40

[run_presets]
InterfaceBandwidth: USER
UseRamulatorTrace: False
"""
COLUMNS = (
    "Total Cycles (incl. prefetch)",
    "Total Cycles",
    "Stall Cycles",
    *(
        f"{where} {name} {what}"
        for where in ("SRAM", "DRAM")
        for name in ("IFMAP", "Filter", "OFMAP")
        for what in ("Start Cycle", "Stop Cycle", "Reads" if name != "OFMAP" else "Writes")
    ),
)
CONV_HEADER = (
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
    "Num Filter, Strides,"
)
GEMM_HEADER = "Layer, M, N, K,"


def config(turn: int) -> dict[str, object]:
    """The configuration of the `turn`-th run: each setting cycles at its own period."""
    rows, cols = ARRAYS[turn % len(ARRAYS)]
    ifmap_kb, filter_kb, ofmap_kb = SRAM_KB[turn % len(SRAM_KB)]
    bandwidth, ifmap_bandwidth, filter_bandwidth = BANDWIDTHS[turn % len(BANDWIDTHS)]
    return {
        "rows": rows,
        "cols": cols,
        "ifmap_kb": ifmap_kb,
        "filter_kb": filter_kb,
        "ofmap_kb": ofmap_kb,
        "bandwidth": bandwidth,
        "ifmap_bandwidth": ifmap_bandwidth,
        "filter_bandwidth": filter_bandwidth,
        "dataflow": ("ws", "os", "is")[turn % 3],
    }


def read_topology(path: Path) -> tuple[bool, list[tuple[str, list[int]]]]:
    """(GEMM format?, distinct rows): each row as SCALE-Sim's reader takes its cells."""
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    gemm = [c.strip().upper() for c in lines[0].split(",")][1:4] == ["M", "N", "K"]
    width = 3 if gemm else 7
    rows, seen = [], set()
    for line in lines[1:]:
        cells = [c.strip() for c in line.split(",")]
        if not any(cells):
            continue
        values = [int(c) for c in cells[1 : 1 + width]]
        if len(values) != width or min(values) <= 0:
            raise ValueError(f"row {cells[0]!r} has no {width} positive sizes")
        if tuple(values) not in seen:
            seen.add(tuple(values))
            rows.append((cells[0], values))
    return gemm, rows


def layer_of(gemm: bool, name: str, values: list[int]):  # -> ScalesimLayer
    from simcore.systolic.scalesim_layer import ScalesimLayer

    if gemm:
        m, n, k = values
        return ScalesimLayer.gemm(name, m, n, k)
    h, w, r, s, c, f, stride = values
    return ScalesimLayer(name, h, w, r, s, c, f, stride, stride)


def shorten(gemm: bool, values: list[int]) -> list[int]:
    """The same stride, a filter of at most 16 x 16, at most 6 x 6 outputs, a window of at most
    256 and 40 filters; a GEMM of at most 48 x 256 x 40."""
    if gemm:
        m, n, k = values
        return [min(m, 48), min(n, 40), min(k, 256)]
    h, w, r, s, c, f, stride = values
    r, s = min(r, 16), min(s, 16)
    return [
        min(h, r + 5 * stride),
        min(w, s + 5 * stride),
        r,
        s,
        max(1, min(c, 256 // (r * s))),
        min(f, 40),
        stride,
    ]


def estimated_seconds(config: dict[str, object], layer) -> float:  # type: ignore[no-untyped-def]
    """SCALE-Sim's time for a layer, roughly: its requests at about 10 us each, and each prefetch
    copying its whole DRAM trace so far (the square of the words read)."""
    from simcore.checks import ceil_div
    from simcore.systolic.scalesim_config import parse_scalesim_config
    from simcore.systolic.scalesim_memory import scalesim_memory_report

    m, k, n = layer.pixels, layer.window, layer.filters
    rows, cols = int(config["rows"]), int(config["cols"])
    requests = m * k * ceil_div(n, cols) + k * n * ceil_div(m, rows) + m * n * ceil_div(k, rows)
    if 1e-5 * requests > FULL_SECONDS:
        return 1e-5 * requests
    report = scalesim_memory_report(parse_scalesim_config(CONFIG.format(**config)), layer)
    squares = report.ifmap_dram_reads**2 + report.filter_dram_reads**2
    return 1e-5 * requests + 2e-12 * squares


def topology_files(topologies: Path) -> list[tuple[str, int]]:
    """(file, runs): FILES first, then every other topology file once."""
    others = sorted(
        str(p.relative_to(topologies)) for p in topologies.rglob("*.csv") if p.is_file()
    )
    return [(f, RUNS_PER_FILE) for f in FILES] + [(f, 1) for f in others if f not in FILES]


def plan(topologies: Path, only: str = "") -> tuple[list[dict[str, object]], dict[str, str]]:
    """The runs, and the files SCALE-Sim cannot read (with why)."""
    runs: list[dict[str, object]] = []
    unreadable: dict[str, str] = {}
    turn = 0
    for file, count in topology_files(topologies):
        if only not in file:
            turn += count
            continue
        try:
            gemm, rows = read_topology(topologies / file)
        except (ValueError, IndexError) as error:
            unreadable[file] = f"{type(error).__name__}: {error}"
            continue
        for _ in range(count):
            settings = config(turn)
            turn += 1
            layers, seconds, seen = [], 0.0, set()
            for name, values in rows:
                estimate = estimated_seconds(settings, layer_of(gemm, name, values))
                short = estimate > FULL_SECONDS
                if short:
                    values = shorten(gemm, values)
                    estimate = estimated_seconds(settings, layer_of(gemm, name, values))
                if tuple(values) in seen or estimate > MAX_SECONDS:
                    continue
                seen.add(tuple(values))
                layers.append({"name": name, "values": values, "shortened": short})
                seconds += estimate
            runs.append(
                {
                    "file": file,
                    "gemm": gemm,
                    "config": settings,
                    "layers": layers,
                    "estimate": seconds,
                }
            )
    return runs, unreadable


def topology_text(run: dict[str, object]) -> str:
    header = GEMM_HEADER if run["gemm"] else CONV_HEADER
    rows = [",".join([layer["name"], *map(str, layer["values"])]) + "," for layer in run["layers"]]  # type: ignore[index, union-attr]
    return "\n".join([header, *rows]) + "\n"


def _report(path: Path) -> list[dict[str, str]]:
    lines = path.read_text().splitlines()
    header = [h.strip() for h in lines[0].split(",")]
    return [
        {h: v.strip() for h, v in zip(header, line.split(",")) if h}
        for line in lines[1:]
        if line.strip()
    ]


def probe(case_file: Path) -> dict[str, object]:
    """(Inside SCALE-Sim's environment) run one .cfg and topology; every layer's figures."""
    import contextlib
    import importlib.metadata
    import io

    import numpy
    from scalesim.scale_sim import scalesim

    case = json.loads(case_file.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "scale.cfg").write_text(case["cfg"])
        (work / "topology.csv").write_text(case["topology"])
        (work / "layout.csv").write_text("Layer,\n")
        start = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            sim = scalesim(
                save_disk_space=True,
                verbose=False,
                config=str(work / "scale.cfg"),
                topology=str(work / "topology.csv"),
                layout=str(work / "layout.csv"),
                input_type_gemm=case["gemm"],
            )
            sim.run_scale(top_path=str(work / "out"))
        seconds = time.process_time() - start
        compute = _report(work / "out" / "memory" / "COMPUTE_REPORT.csv")
        access = _report(work / "out" / "memory" / "DETAILED_ACCESS_REPORT.csv")
    layers = []
    for row, comp, acc in zip(sim.topo.topo_arrays, compute, access):
        figures = {key: int(float(value)) for key, value in {**comp, **acc}.items()}
        figures.pop("LayerID")
        for key in ("Overall Util %", "Mapping Efficiency %", "Compute Util %"):
            figures.pop(key)
        layers.append({"name": str(row[0]), "row": [int(v) for v in row[1:9]], **figures})
    return {
        "scalesim": importlib.metadata.version("scalesim"),
        "numpy": numpy.__version__,
        "python": sys.version.split()[0],
        "cpu_seconds": round(seconds, 2),
        "layers": layers,
    }


def _run(python: Path, run: dict[str, object], cache: Path) -> dict[str, object]:
    text = json.dumps(
        {"cfg": CONFIG.format(**run["config"]), "topology": topology_text(run), "gemm": run["gemm"]}
    )  # type: ignore[arg-type]
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    done = cache / f"{key}.json"
    if done.is_file():
        return json.loads(done.read_text())
    case = cache / f"{key}.case.json"
    case.write_text(text)
    argv = [str(python), str(Path(__file__).resolve()), "probe", str(case)]
    result = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
    done.write_text(json.dumps(result))
    return result


def generate(venv: Path, topologies: Path, cache: Path, only: str) -> dict[str, object]:
    cache.mkdir(parents=True, exist_ok=True)
    cases, version, files = [], {}, {}
    runs, unreadable = plan(topologies, only)
    for run in runs:
        data = (topologies / str(run["file"])).read_bytes()
        files[run["file"]] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        result = _run(venv / "bin" / "python", run, cache)
        version = {k: result[k] for k in ("scalesim", "numpy", "python")}
        layers = []
        for layer, planned in zip(result["layers"], run["layers"]):  # type: ignore[call-overload]
            figures = [layer[column] for column in COLUMNS]
            layers.append(
                {
                    "name": layer["name"],
                    "row": layer["row"],
                    "shortened": planned["shortened"],
                    "figures": figures,
                }
            )
        result = {**result, "layers": layers}
        cases.append(
            {
                "topology": run["file"],
                "gemm": run["gemm"],
                "config": run["config"],
                "cpu_seconds": result["cpu_seconds"],
                "layers": result["layers"],
            }
        )  # type: ignore[index]
        print(
            f"{run['file']} {run['config']}: {len(result['layers'])} layers, {result['cpu_seconds']} s",
            file=sys.stderr,
        )  # type: ignore[call-overload]
    return {
        "provenance": {
            "tool": "SCALE-Sim (PyPI package scalesim)",
            **version,
            "date": datetime.date.today().isoformat(),
            "produced_by": "nice python tools/scalesim_memory_golden.py --venv /work/peers/scalesim-venv --topologies .../scale-sim-v3/topologies",
            "topologies": {
                "source": "github.com/scalesim-project/scale-sim-v3, topologies/",
                "files": files,
                "unreadable": unreadable,
            },
            "each_case": "one run of scalesim.scale_sim.scalesim(config=scale.cfg, topology=topology.csv, input_type_gemm=GEMM format).run_scale(), as python -m scalesim.scale -c scale.cfg -t topology.csv -i conv|gemm -s N; scale.cfg is `config_template` with the case's `config`; topology.csv holds the case's layers in SCALE-Sim's format",
            "config_template": CONFIG,
            "columns": list(COLUMNS),
            "notes": [
                "'row' is each layer as SCALE-Sim read it: IFMAP height, width, filter height, width, channels, filters, stride h, stride w (a GEMM row M, N, K reads as M, K, 1, K, 1, N, 1, 1).",
                "a layer with 'shortened' true is the file's layer cut to the same stride, a filter of at most 16 x 16, at most 6 x 6 outputs, a window of at most 256 and 40 filters (a GEMM to at most 48 x 256 x 40; tools/scalesim_memory_golden.py, shorten), because SCALE-Sim would take too long on it at that configuration.",
                "each layer's 'figures' are its COMPUTE_REPORT.csv and DETAILED_ACCESS_REPORT.csv values of 'columns', in that order, as integers.",
            ],
        },
        "cases": cases,
    }


def dump(data: dict[str, object]) -> str:
    """JSON with one line per layer."""
    text = json.dumps(data, indent=1)
    for case in data["cases"]:  # type: ignore[attr-defined]
        for layer in case["layers"]:
            spread = json.dumps(layer, indent=1).replace("\n", "\n" + " " * 4)
            text = text.replace(spread, json.dumps(layer), 1)
    return text + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("probe", help="(inside the SCALE-Sim environment) run one case file")
    run.add_argument("case", type=Path)
    parser.add_argument("--venv", type=Path, default=Path("/work/peers/scalesim-venv"))
    parser.add_argument("--topologies", type=Path, help="scale-sim-v3's topologies/ folder")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "scalesim-memory-golden"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", default="", help="only the files whose path contains this")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the plan and SCALE-Sim's estimated time"
    )
    args = parser.parse_args(argv)
    if args.command == "probe":
        print(json.dumps(probe(args.case)))
        return 0
    if args.topologies is None or not args.topologies.is_dir():
        parser.error("give --topologies: the topologies/ folder of SCALE-Sim's repository")
    if args.dry_run:
        runs, unreadable = plan(args.topologies, args.only)
        for file, why in unreadable.items():
            print(f"{file}: unreadable ({why})")
        for r in runs:
            short = sum(layer["shortened"] for layer in r["layers"])  # type: ignore[union-attr, misc]
            print(
                f"{r['file']} {r['config']}: {len(r['layers'])} layers ({short} shortened), ~{r['estimate']:.1f} s"
            )  # type: ignore[arg-type]
        print(
            f"{len(runs)} runs, {sum(len(r['layers']) for r in runs)} layers, ~{sum(r['estimate'] for r in runs) / 60:.0f} min"
        )  # type: ignore[misc, arg-type]
        return 0
    if not (args.venv / "bin" / "python").exists():
        print(
            f"skipping: no SCALE-Sim environment at {args.venv} (see this script's docstring)",
            file=sys.stderr,
        )
        return 0
    data = generate(args.venv, args.topologies, args.cache, args.only)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(dump(data))
    tmp.replace(args.out)
    print(f"wrote {len(data['cases'])} cases to {args.out}", file=sys.stderr)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
