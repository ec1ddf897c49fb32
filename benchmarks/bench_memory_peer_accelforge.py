"""Block-schedule access counts against AccelForge's for the same fixed mappings.

The cases, machines and our counts are benchmarks/bench_memory_peer.py's (the ZigZag check).
AccelForge 1.0.467 evaluates each mapping in its own virtualenv
(benchmarks/accelforge_memory_runner.py); its actions per memory and tensor are in bits, divided
here by the tensor's width (A and B 8, C 16) into elements. AccelForge counts an on-chip
memory's reads and writes whatever their direction, so the accumulator is compared in total:
writes by the array and from DRAM, reads by the array, for a later k block's sums and for DRAM.

  python benchmarks/bench_memory_peer_accelforge.py \\
      --accelforge-python /work/peers/accelforge-venv/bin/python \\
      --write-golden tests/simcore/golden/accelforge_memory.json
  python benchmarks/bench_memory_peer_accelforge.py --golden tests/simcore/golden/accelforge_memory.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_memory_peer import CASES, case_dict, ours  # noqa: E402

BITS = {"A": 8, "B": 8, "C": 16}
KEYS = {
    "dram A reads": ("MainMemory A read", ("dram A reads",)),
    "dram B reads": ("MainMemory B read", ("dram B reads",)),
    "dram C reads": ("MainMemory C read", ("dram C reads",)),
    "dram C writes": ("MainMemory C write", ("dram C writes",)),
    "scratchpad A writes": ("Scratchpad A write", ("scratchpad A writes",)),
    "scratchpad A reads": ("Scratchpad A read", ("scratchpad A reads",)),
    "scratchpad B writes": ("Scratchpad B write", ("scratchpad B writes",)),
    "scratchpad B reads": ("Scratchpad B read", ("scratchpad B reads",)),
    "accumulator writes": (
        "Accumulator C write",
        ("accumulator writes by the array", "accumulator writes from DRAM"),
    ),
    "accumulator reads": (
        "Accumulator C read",
        ("accumulator reads by the array", "accumulator reads for DRAM"),
    ),
}


def mine(case: dict) -> dict[str, int]:
    counts = ours(case)
    return {key: sum(counts[part] for part in parts) for key, (_a, parts) in KEYS.items()}


def theirs(result: dict) -> dict[str, float]:
    actions = result["actions"]
    return {key: actions[action] / BITS[action.split()[1]] for key, (action, _p) in KEYS.items()}


def compare(golden: dict) -> int:
    unequal = 0
    for result in golden["results"]:
        case = next(c for c in golden["cases"] if c["id"] == result["id"])
        a, b = mine(case), theirs(result)
        diff = {k: (a[k], b[k]) for k in KEYS if a[k] != b[k]}
        unequal += bool(diff)
        print(f"{case['id']:<22} {'equal' if not diff else diff}")
    n = len(golden["results"])
    print(f"{n - unequal} of {n} cases equal in all {len(KEYS)} counts")
    return unequal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accelforge-python")
    parser.add_argument("--write-golden", type=Path)
    parser.add_argument("--golden", type=Path)
    args = parser.parse_args()
    cases = [case_dict(c) for c in CASES]
    if args.accelforge_python:
        runner = ROOT / "benchmarks" / "accelforge_memory_runner.py"
        done = subprocess.run(
            [args.accelforge_python, str(runner)],
            input=json.dumps(cases),
            capture_output=True,
            text=True,
            check=True,
        )
        peer = json.loads(done.stdout)
        golden = {
            "provenance": {
                "tool": "accelforge",
                "version": peer["accelforge_version"],
                "python": peer["python"],
                "command": "python benchmarks/bench_memory_peer_accelforge.py --accelforge-python "
                "PEER_PYTHON --write-golden tests/simcore/golden/accelforge_memory.json",
                "runner": "benchmarks/accelforge_memory_runner.py",
                "date": datetime.date.today().isoformat(),
                "architecture": "per case: DRAM, a scratchpad of one A and one B block (8-bit), "
                "an accumulator of one C block (16-bit), an R x C weight-stationary array",
            },
            "cases": cases,
            "results": peer["results"],
        }
        if args.write_golden:
            args.write_golden.write_text(json.dumps(golden, indent=1) + "\n")
    elif args.golden:
        golden = json.loads(args.golden.read_text())
    else:
        parser.error("give --accelforge-python or --golden")
    sys.exit(1 if compare(golden) else 0)


if __name__ == "__main__":
    main()
