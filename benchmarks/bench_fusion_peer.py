"""The GPT-2 MLP fused and unfused, side by side with AccelForge's fusion-aware mapper (FFM).

The same machine for both: a 128x128 array, one global buffer of 4 MiB or 1 MiB (256 words a
cycle each way), DRAM at 512 or 128 bits a cycle; the MLP's two products (1024 x 768 -> 3072
-> 768), every tensor 8 bits wide as AccelForge takes them (so our partial sums are 8 bits here
too, unlike bench_fusion.py's 32). AccelForge (benchmarks/accelforge_fusion_runner.py, in its
own virtualenv) maps the workload fused (the hidden tensor may stay on chip) and unfused (it
must go to DRAM), with per-bit energies from our default technology table. Ours: the best
schedule by DRAM words (then cycles) fused, and the products each at its best unfused; our
group has a ReLU between the products on the vector unit (AccelForge's has none). Reported per
case: DRAM bits read and written, ours and AccelForge's, and the cycles (ours exact; AccelForge's
latency is its throughput model's).

  python benchmarks/bench_fusion_peer.py --accelforge-python /work/peers/accelforge-venv/bin/python \\
      --write-golden tests/simcore/golden/accelforge_fusion.json
  python benchmarks/bench_fusion_peer.py        # from the golden file, without AccelForge
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simcore.energy.technology import default_technology  # noqa: E402
from simcore.fusion.groups import FusedMlp  # noqa: E402
from simcore.systolic.fused.evaluate import FusedRun  # noqa: E402
from simcore.systolic.fused.search import best_fused, best_unfused  # noqa: E402
from simcore.systolic.machine import SystolicMachine, machine_from_dict  # noqa: E402
from simcore.systolic.model import SystolicDesign  # noqa: E402

GOLDEN = ROOT / "tests" / "simcore" / "golden" / "accelforge_fusion.json"
MLP = {"m": 1024, "d": 768, "hidden": 3072, "d_out": 768}
MACHINES = (("4 MiB", 4, 512), ("4 MiB", 4, 128), ("1 MiB", 1, 128))


def machine(mib: int, dram_bits: int) -> SystolicMachine:
    return machine_from_dict(
        {
            "name": f"global buffer {mib} MiB, DRAM {dram_bits} bits/cycle",
            "array": {"rows": 128, "cols": 128, "dataflow": "ws", "clock": "1 GHz"},
            "words": {"operand_bits": 8, "accumulator_bits": 8, "output_bits": 8},
            "buffers": {
                "global": {
                    "holds": ["a", "b", "c"],
                    "capacity": f"{mib} MiB",
                    "read_width": "256 words/cycle",
                    "write_width": "256 words/cycle",
                }
            },
            "dram": {"bandwidth": f"{dram_bits // 8} B/cycle", "latency": "100 cycles"},
        }
    )


def cases() -> list[dict[str, Any]]:
    tech = default_technology()
    per_bit = 1 / tech.word_bits
    found = []
    for label, mib, bits in MACHINES:
        for fused in (True, False):
            found.append(
                {
                    "id": f"{label}, {bits} bits/cycle, {'fused' if fused else 'unfused'}",
                    "fused": fused,
                    **MLP,
                    "bits": 8,
                    "rows": 128,
                    "cols": 128,
                    "buffer_bits": mib * 1024 * 1024 * 8,
                    "port_bits": 256 * 8,
                    "dram_bits": bits,
                    "mac_pj": tech.mac_pj,
                    "energy_pj_per_bit": {
                        "dram_read": tech.dram_read_pj * per_bit,
                        "dram_write": tech.dram_write_pj * per_bit,
                        "buffer_read": tech.sram_read_pj(mib * 1024.0) * per_bit,
                        "buffer_write": tech.sram_write_pj(mib * 1024.0) * per_bit,
                    },
                }
            )
    return found


def ours(mib: int, bits: int, fused: bool) -> FusedRun:
    m = machine(mib, bits)
    design = SystolicDesign(m.array, m.dataflow)
    group = FusedMlp(**MLP, activation="relu", bias=False)

    def by_words(run: FusedRun) -> tuple[float, ...]:
        return (float(run.dram_words), run.cycles)

    if fused:
        return best_fused(m, design, group, by_words).run
    return best_unfused(m, design, group, by_words, epilogues=True).run


def run_peer(python: str, found: list[dict[str, Any]]) -> dict[str, Any]:
    done = subprocess.run(
        [python, str(ROOT / "benchmarks" / "accelforge_fusion_runner.py")],
        input=json.dumps(found),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def compare(peer: dict[str, Any]) -> int:
    by_id = {r["id"]: r for r in peer["results"]}
    worse = 0
    print(
        f"{'case':<34} {'ours read/write Mbit':>22} {'AccelForge':>20} {'ours <=':>7} {'our cycles':>11} {'AF latency':>11}"
    )
    for label, mib, bits in MACHINES:
        for fused in (True, False):
            key = f"{label}, {bits} bits/cycle, {'fused' if fused else 'unfused'}"
            run = ours(mib, bits, fused)
            read = float(run.dram_bytes - run.dram_write_bytes) * 8 / 1e6
            write = float(run.dram_write_bytes) * 8 / 1e6
            af = by_id[key]
            af_read = sum(v for k, v in af["dram_bits"].items() if k.endswith("read")) / 1e6
            af_write = sum(v for k, v in af["dram_bits"].items() if k.endswith("write")) / 1e6
            ok = read + write <= af_read + af_write + 1e-9
            worse += not ok
            print(
                f"{key:<34} {read:>10.3f}/{write:<10.3f} {af_read:>9.3f}/{af_write:<9.3f} "
                f"{'yes' if ok else 'NO':>7} {run.cycles:>11,} {af['latency_cycles']:>11,.0f}"
            )
    return worse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accelforge-python", help="run AccelForge with this Python")
    parser.add_argument(
        "--write-golden", nargs="?", const=str(GOLDEN), help="write the golden file"
    )
    parser.add_argument("--golden", default=str(GOLDEN), help="read AccelForge's figures from here")
    args = parser.parse_args()
    if args.accelforge_python:
        found = cases()
        peer = run_peer(args.accelforge_python, found)
        peer["provenance"] = {
            "tool": "accelforge",
            "version": peer.pop("accelforge_version"),
            "python": peer.pop("python"),
            "command": "python benchmarks/bench_fusion_peer.py --accelforge-python PEER_PYTHON --write-golden",
            "runner": "benchmarks/accelforge_fusion_runner.py",
            "date": datetime.date.today().isoformat(),
        }
        peer["cases"] = found
        if args.write_golden:
            Path(args.write_golden).write_text(json.dumps(peer, indent=1) + "\n")
            print(f"wrote {args.write_golden}")
    else:
        peer = json.loads(Path(args.golden).read_text())
    worse = compare(peer)
    print(
        "ours moves no more DRAM bits than AccelForge in every case"
        if not worse
        else f"{worse} case(s) move more"
    )
    sys.exit(1 if worse else 0)


if __name__ == "__main__":
    main()
