"""Real networks as workloads: what the importers make of them, how fast, and how bad files fail.

1. Each bundled network's ONNX graph (tools/onnx_nets.py) written to a file and imported
   (`onnx.load` + shape inference + lowering), CPU time (time.process_time), best of --repeats;
   its GEMM shapes, GEMM count and MACs.
2. SCALE-Sim's topologies under `--assume scalesim`, from the golden data
   (tests/search_spaces/golden/scalesim_topologies.json): how many layers equal SCALE-Sim's cycles
   and SRAM counts, the CPU time of `autotune systolic --workload` in process against the
   seconds SCALE-Sim took on the same case.
3. Bad model files through `autotune gemms`: the exit status and the one-line message.
4. Tuning runs of whole networks, each a fresh `python -m autotune` process in an empty results
   folder (imports, tuning, verification and the report included): wall seconds and the CPU
   seconds of the process (user + system, from resource.getrusage). ResNet-50 on the systolic
   oracle with default trials, and the small bundled transformer on GA-1 with default trials;
   `--tuning-only` runs only this part, `--no-tuning` skips it. The LLaMA-2-7B prefill layer on
   GA-1 with default trials, and the layer furthest from its bound.

Usage: python -m benchmarks.workloads.bench_workloads [--repeats N] [--tuning-only | --no-tuning]
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx
from onnx import helper

from autotune.cli import main
from benchmarks import harness
from benchmarks.harness import ROOT
from tools import make_workloads
from workloads import load_workload
from workloads.listing import totals

GOLDEN = ROOT / "tests" / "search_spaces" / "golden" / "scalesim_topologies.json"
HEADER = (
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
    "Num Filter, Strides,"
)


def best_cpu(function, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        started = time.process_time()
        function()
        times.append(time.process_time() - started)
    return min(times)


def imports(tmp: Path, repeats: int) -> None:
    print("| network | shapes | GEMMs | MACs | import CPU ms |\n|---|---|---|---|---|")
    for network in make_workloads.NETWORKS:
        path = tmp / f"{network.name}.onnx"
        onnx.save(network.build(), str(path))
        seconds = best_cpu(lambda: load_workload(path), repeats)
        t = totals(load_workload(path))
        print(
            f"| {network.name} | {t['entries']} | {t['gemms']:,} | {t['macs']:,} | {seconds * 1000:.1f} |"
        )


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue().strip()


def topologies(tmp: Path, repeats: int) -> None:
    if not GOLDEN.is_file():
        print("no golden data: run tools/scalesim_topology_golden.py")
        return
    print("\n| topology | array | dataflow | layers equal | autotune CPU ms | SCALE-Sim s |")
    print("|---|---|---|---|---|---|")
    for case in json.loads(GOLDEN.read_text())["cases"]:
        path = tmp / case["topology"]
        rows = [
            ",".join([layer["name"], *map(str, layer["row"][:7])]) + "," for layer in case["layers"]
        ]
        path.write_text("\n".join([HEADER, *rows]) + "\n")
        argv = [
            "systolic",
            "--workload",
            str(path),
            "--array",
            f"{case['rows']}x{case['cols']}",
            "--dataflow",
            case["dataflow"],
            "--assume",
            "scalesim",
            "--json",
        ]
        seconds = best_cpu(lambda: _run(argv), repeats)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(argv)
        figures = {
            name: obj["scalesim"]
            for obj in map(json.loads, out.getvalue().splitlines())
            for name in obj.get("layers", [])
        }
        keys = ("total_cycles", "ifmap_sram_reads", "filter_sram_reads", "ofmap_sram_writes")
        equal = sum(figures[lay["name"]] == {k: lay[k] for k in keys} for lay in case["layers"])
        print(
            f"| {case['topology']} | {case['rows']}x{case['cols']} | {case['dataflow']} | "
            f"{equal}/{len(case['layers'])} | {seconds * 1000:.1f} | {case['seconds']:.0f} |"
        )


def bad_files(tmp: Path) -> None:
    good = make_workloads.NETWORKS[0].build()
    raw = good.SerializeToString()
    dynamic = onnx.ModelProto()
    dynamic.CopyFrom(good)
    dynamic.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    newer = onnx.ModelProto()
    newer.CopyFrom(good)
    newer.opset_import[0].version = 999
    lstm = helper.make_model(
        helper.make_graph(
            [
                helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=4),
                helper.make_node("MatMul", ["a", "b"], ["c"], name="mm"),
            ],
            "g",
            [
                helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, d)
                for n, d in (
                    ("x", [3, 1, 2]),
                    ("w", [1, 16, 2]),
                    ("r", [1, 16, 4]),
                    ("a", [2, 8]),
                    ("b", [8, 4]),
                )
            ],
            [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in ("y", "c")],
        )
    )
    cases = {
        "corrupt": b"\x08\x07\x12\xff\xff\xff\xff\x0f garbage",
        "truncated": raw[: len(raw) // 2],
        "not ONNX": b"name,shape,weight\n",
        "unsupported opset": newer.SerializeToString(),
        "dynamic, no --input-shape": dynamic.SerializeToString(),
        "only an LSTM unsupported": lstm.SerializeToString(),
    }
    print("\n| file | exit | message |\n|---|---|---|")
    for label, content in cases.items():
        path = tmp / "model.onnx"
        path.write_bytes(content)
        code, err = _run(["gemms", str(path)])
        print(f"| {label} | {code} | `{err.replace(str(path), 'model.onnx')}` |")


TUNING_RUNS: tuple[tuple[str, list[str]], ...] = (
    (
        "resnet50, systolic oracle, default trials",
        ["--oracle", "systolic", "--workload", "resnet50"],
    ),
    ("transformer_b1, GA-1, default trials", ["--workload", "transformer_b1"]),
    (
        "LLaMA-2-7B prefill decoder layer, GA-1, default trials (goal: <= 10 min, every layer "
        "<= 1.02x its bound)",
        ["--workload", "llama2_7b_prefill"],
    ),
)


def timed_run(argv: list[str], folder: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, the report's closing lines) of one `python -m autotune` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "autotune", *argv, "--results", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(
            f"autotune {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-400:]}"
        )
    lines = done.stdout.splitlines()
    total = next(
        (line for line in lines if line.startswith("weighted total ") and "cycles" in line), ""
    )
    furthest = next((line for line in lines if line.startswith("furthest from bound: ")), "")
    worst = furthest.removeprefix("furthest from bound: ").split(" (")[0]
    return wall, cpu, total.split(";")[0] + (f"; furthest from its bound: {worst}" if worst else "")


def tuning(tmp: Path) -> None:
    print("\n| run | wall s | CPU s | result |\n|---|---|---|---|")
    for index, (label, argv) in enumerate(TUNING_RUNS):
        folder = tmp / f"tuning{index}"
        folder.mkdir()
        wall, cpu, total = timed_run(argv, folder)
        print(
            f"| `python -m autotune {' '.join(argv)}` ({label}) | {wall:.1f} | {cpu:.1f} | {total} |"
        )


def main_bench(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, quick={"repeats": 1, "no_tuning": True})
    parser.add_argument("--repeats", type=int, default=3)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--tuning-only", action="store_true", help="only the tuning runs (part 4)")
    which.add_argument("--no-tuning", action="store_true", help="skip the tuning runs (part 4)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.tuning_only:
            imports(Path(tmp), args.repeats)
            topologies(Path(tmp), args.repeats)
            bad_files(Path(tmp))
        if not args.no_tuning:
            tuning(Path(tmp))
    return 0


if __name__ == "__main__":
    harness.run(main_bench)
