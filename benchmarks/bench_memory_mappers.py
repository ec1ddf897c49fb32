"""Our block schedules against the analytic mappers' best mappings for the same buffers.

For each bundled machine and GEMM: the fewest DRAM elements of any block schedule in
`simcore.systolic.blocked.enumerate` (counts alone), the fastest schedule found (cycles, energy
with the default technology table) and the lower bound, against the mapping ZigZag's own mapper
(LOMA, minimum energy; benchmarks/zigzag_mapper_runner.py in ZigZag's virtualenv) and
AccelForge's (FFM; benchmarks/accelforge_mapper_runner.py in its virtualenv) find on the same
array and stores: their DRAM elements (A, B, partial sums read back, C written), latency and
energy (with our table's energies per access). Elements are compared, whatever their width.

  python benchmarks/bench_memory_mappers.py --zigzag-python /work/peers/zigzag-venv/bin/python \\
      --accelforge-python /work/peers/accelforge-venv/bin/python --write-golden
  python benchmarks/bench_memory_mappers.py        # from the golden files, without the peers
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simcore.energy.memory import memory_cost  # noqa: E402
from simcore.energy.technology import default_technology  # noqa: E402
from simcore.shape import Shape  # noqa: E402
from simcore.systolic.archs import load_arch  # noqa: E402
from simcore.systolic.blocked.enumerate import fastest, least_traffic  # noqa: E402
from simcore.systolic.machine import SystolicMachine  # noqa: E402
from simcore.systolic.model import SystolicDesign  # noqa: E402

GEMMS = {
    "resnet50 conv2 3x3": (3136, 576, 64),
    "resnet50 conv4 3x3": (196, 2304, 256),
    "bert-base ffn up": (512, 768, 3072),
}
MACHINES = ("gemmini", "edge-npu", "tpu-v1", "tpuv4i")
ZIGZAG_NAMES = {"a": "I1", "b": "I2", "c": "O"}
GOLDEN = ROOT / "tests" / "simcore" / "golden"
ZIGZAG_GOLDEN = GOLDEN / "zigzag_mapper.json"
ACCELFORGE_GOLDEN = GOLDEN / "accelforge_mapper.json"


def _divisor(value: int, most: int) -> int:
    return max(d for d in range(1, min(value, most) + 1) if value % d == 0)


def memories(machine: SystolicMachine) -> list[dict]:
    """The machine's stores and DRAM as ZigZag memories, lowest first, with our energies per
    byte (and per access of the port's width, as ZigZag counts them)."""
    tech = default_technology()
    per_byte = 8 / tech.word_bits
    out = []
    wb = machine.word_bits
    for store in machine.memory.stores:
        kib = store.capacity * wb / 8 / 1024
        out.append(
            {
                "name": store.name,
                "operands": [ZIGZAG_NAMES[x] for x in "abc" if x in store.holds],
                "size_bits": store.capacity * wb,
                "read_bits": math.floor(store.buffer.read_width * wb),
                "write_bits": math.floor(store.buffer.write_width * wb),
                "read_pj_per_byte": tech.sram_read_pj(kib) * per_byte,
                "write_pj_per_byte": tech.sram_write_pj(kib) * per_byte,
            }
        )
    acc = machine.memory.accumulator
    if acc is not None:
        bits = machine.accumulator_bits
        kib = acc.capacity * bits / 8 / 1024
        out.insert(
            0,
            {
                "name": "accumulator",
                "operands": ["O"],
                "size_bits": acc.capacity * bits,
                "read_bits": math.floor(acc.read_width * bits),
                "write_bits": math.floor(acc.write_width * bits),
                "read_pj_per_byte": tech.sram_read_pj(kib) * per_byte,
                "write_pj_per_byte": tech.sram_write_pj(kib) * per_byte,
            },
        )
    hbm = machine.memory.dram_kind == "hbm"
    read_pj = tech.hbm_read_pj if hbm and tech.hbm_read_pj else tech.dram_read_pj
    write_pj = tech.hbm_write_pj if hbm and tech.hbm_write_pj else tech.dram_write_pj
    link_bits = math.floor(machine.memory.dram.words_per_cycle * wb)
    out.append(
        {
            "name": "dram",
            "operands": ["I1", "I2", "O"],
            "size_bits": 10**15,
            "read_bits": link_bits,
            "write_bits": link_bits,
            "read_pj_per_byte": read_pj * per_byte,
            "write_pj_per_byte": write_pj * per_byte,
        }
    )
    for memory in out:  # ZigZag prices an access of the port's full width
        memory["r_cost"] = memory["read_pj_per_byte"] * memory["read_bits"] / 8
        memory["w_cost"] = memory["write_pj_per_byte"] * memory["write_bits"] / 8
    return out


def case_dict(arch: str, name: str, dims: tuple[int, int, int]) -> dict:
    machine = load_arch(arch)
    tech = default_technology()
    m, k, n = dims
    rows, cols = machine.array.rows, machine.array.cols
    return {
        "id": f"{arch}:{name}",
        "machine": arch,
        "gemm": name,
        "m": m,
        "k": k,
        "n": n,
        "rows": rows,
        "cols": cols,
        "unroll": [_divisor(n, cols), _divisor(k, rows)],
        "precision": {
            "W": machine.word_bits,
            "I": machine.word_bits,
            "O": machine.accumulator_bits,
            "O_final": machine.output_bits,
        },
        "memories": memories(machine),
        "mac_pj": tech.mac_pj * machine.word_bits / tech.word_bits,
        "register_pj": tech.operand_register_read_pj * 8 / tech.word_bits,
        "opt": "energy",
    }


def theirs(result: dict) -> dict[str, float]:
    dram = {
        op: next(lv["elements"] for lv in levels if lv["memory"] == "dram")
        for op, levels in result["levels"].items()
    }
    elements = (
        dram["A"]["rd_out_to_low"]
        + dram["B"]["rd_out_to_low"]
        + dram["C"]["rd_out_to_low"]
        + dram["C"]["wr_in_by_low"]
    )
    return {
        "dram_elements": elements,
        "cycles": result["latency_cycles"],
        "energy_pj": result["energy_pj"],
    }


def ours(case: dict) -> dict[str, object]:
    machine = load_arch(case["machine"])
    design = SystolicDesign(machine.array, machine.dataflow)
    shape = Shape(case["m"], case["k"], case["n"])
    least = least_traffic(machine, design, shape, by="elements")
    run, _evaluated = fastest(machine, design, shape)
    return {
        "dram_elements": least.value,
        "least_schedule": least.schedule.describe(),
        "cycles": run.cycles,
        "fastest_schedule": run.schedule.describe(),
        "fastest_dram_elements": run.counts.dram.elements,
        "energy_pj": memory_cost(run, default_technology()).energy_pj,
        "bound_cycles": run.bound.cycles,
        "bound_elements": run.bound.traffic_elements,
    }


def accelforge_elements(result: dict) -> dict[str, float]:
    d = result["dram_elements"]
    return {
        "dram_elements": d["A_read"] + d["B_read"] + d["C_read"] + d["C_write"],
        "cycles": result["latency_cycles"],
        "energy_pj": result["energy_pj"],
    }


def run_peer(python: str, runner: str, cases: list[dict]) -> dict:
    done = subprocess.run(
        [python, str(ROOT / "benchmarks" / runner)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def compare(zigzag: dict, accelforge: dict | None) -> int:
    """Print the table; the number of cases where ours moves more DRAM elements than a peer."""
    worse = 0
    print(
        "| machine | GEMM | DRAM elements: ours | ZigZag | AccelForge | bound | cycles: ours | "
        "ZigZag | AccelForge | bound | energy uJ: ours | ZigZag | AccelForge |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    af = {r["id"]: accelforge_elements(r) for r in (accelforge or {"results": []})["results"]}
    none = {"dram_elements": float("nan"), "cycles": float("nan"), "energy_pj": float("nan")}
    for result in zigzag["results"]:
        case = next(c for c in zigzag["cases"] if c["id"] == result["id"])
        mine, zz = ours(case), theirs(result)
        other = af.get(case["id"], none)
        least = min(
            zz["dram_elements"], other["dram_elements"] if case["id"] in af else zz["dram_elements"]
        )
        worse += mine["dram_elements"] > least  # type: ignore[operator]
        print(
            f"| {case['machine']} | {case['gemm']} | {mine['dram_elements']:,.0f} | "
            f"{zz['dram_elements']:,.0f} | {other['dram_elements']:,.0f} | "
            f"{mine['bound_elements']:,} | {mine['cycles']:,} | {zz['cycles']:,.0f} | "
            f"{other['cycles']:,.0f} | {mine['bound_cycles']:,} | "
            f"{mine['energy_pj'] / 1e6:,.1f} | {zz['energy_pj'] / 1e6:,.1f} | "  # type: ignore[operator]
            f"{other['energy_pj'] / 1e6:,.1f} |",
            flush=True,
        )
    n = len(zigzag["results"])
    print(f"ours <= the peers' DRAM elements in {n - worse} of {n} cases")
    return worse


def _provenance(tool: str, found: dict, mapper: str, runner: str) -> dict:
    return {
        "tool": tool,
        "version": found[f"{tool.split('-')[0]}_version"],
        "python": found["python"],
        "mapper": mapper,
        "command": "python benchmarks/bench_memory_mappers.py --zigzag-python ZIGZAG_PYTHON "
        "--accelforge-python ACCELFORGE_PYTHON --write-golden",
        "runner": f"benchmarks/{runner}",
        "date": datetime.date.today().isoformat(),
        "architectures": "each case's memories: the bundled machine's stores and DRAM "
        "(simcore/systolic/archs/NAME.toml), energies per byte from the default "
        "technology table (ZigZag: per access of a port's full width)",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zigzag-python", help="run ZigZag with this Python")
    parser.add_argument("--accelforge-python", help="run AccelForge with this Python")
    parser.add_argument("--write-golden", action="store_true", help="write the golden files")
    parser.add_argument("--machines", default=",".join(MACHINES))
    args = parser.parse_args()
    cases = [
        case_dict(arch, name, dims)
        for arch in args.machines.split(",")
        for name, dims in GEMMS.items()
    ]
    peers = (
        (
            "zigzag-dse",
            args.zigzag_python,
            "zigzag_mapper_runner.py",
            ZIGZAG_GOLDEN,
            "LOMA (lpf_limit 6), minimum energy; spatial mapping given",
        ),
        (
            "accelforge",
            args.accelforge_python,
            "accelforge_mapper_runner.py",
            ACCELFORGE_GOLDEN,
            "FFM, its default metric (energy)",
        ),
    )
    for tool, python, runner, path, mapper in peers:
        if python:
            found = run_peer(python, runner, cases)
            golden = {
                "provenance": _provenance(tool, found, mapper, runner),
                "cases": cases,
                "results": found["results"],
            }
            if args.write_golden:
                path.write_text(json.dumps(golden, indent=1) + "\n")
    zigzag = json.loads(ZIGZAG_GOLDEN.read_text())
    accelforge = json.loads(ACCELFORGE_GOLDEN.read_text()) if ACCELFORGE_GOLDEN.exists() else None
    sys.exit(1 if compare(zigzag, accelforge) else 0)


if __name__ == "__main__":
    main()
