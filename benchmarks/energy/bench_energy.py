"""The systolic energy model against ZigZag on the same GEMMs, array and dataflows.

ZigZag (zigzag-dse 3.9.1, the `bench` extra) runs in its own virtualenv through
benchmarks/peers/zigzag_runner.py, which documents the accelerator and the mapping it is given: ZigZag's
example systolic accelerator (tpu_like.yaml) with its per-access costs. Our side uses the same
costs, from simcore/energy/data/zigzag_tpu_like.toml. For every case this prints:
  * the access counts per memory level and direction that the two models share, ZigZag's
    element counts against ours (simcore.energy.peer.zigzag_pairs);
  * the energy per GEMM under both accountings of simcore.energy.accountings: `zigzag` (the same
    counts charged by ZigZag's conventions) against ZigZag's, and `physical` (the default)
    against ZigZag's, that difference split into the conventions that make it
    (simcore.energy.peer.zigzag_gap_terms), with what is left unexplained.

Usage:
  python -m venv /work/zigzag-venv && /work/zigzag-venv/bin/pip install '.[bench]'   # once
  python -m benchmarks.energy.bench_energy --zigzag-python /work/zigzag-venv/bin/python \\
      [--write-golden tests/simcore/golden/zigzag_energy.json]
  python -m benchmarks.energy.bench_energy --golden tests/simcore/golden/zigzag_energy.json   # no ZigZag
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT
from simcore.energy import (
    PHYSICAL,
    ZIGZAG,
    load_technology,
    shipped_table,
    systolic_cost,
    systolic_counts,
)
from simcore.energy.peer import CONVENTIONS, zigzag_gap_terms, zigzag_pairs
from simcore.energy.technology import Technology
from simcore.shape import Shape
from simcore.systolic.model import Assumptions, HbmLink, Mapping, SystolicArray, SystolicDesign

TECH_FILE = "zigzag_tpu_like.toml"
# ZigZag's example GEMM (inputs/workload/gemm_layer.yaml, 128 x 128 x 128) and three layer-like
# shapes; every dataflow on and off the HBM link, on tpu_like's 32 x 32 array; then the other
# tile order, a 16 x 16 array, and a reduction within the array's rows (one pass, no read-backs).
SHAPES = ((128, 128, 128), (32, 512, 512), (256, 256, 64), (64, 128, 256))
HBM_WORDS_PER_CYCLE = 16
SHORT = dict(
    zip(CONVENTIONS, ("reg transfer up", "reg read-back wr", "first read-back", "C width"))
)


def cases() -> list[dict]:
    out = []
    for m, k, n in SHAPES:
        for dataflow in ("ws", "is", "os"):
            for hbm in (False, True):
                out.append(_case(m, k, n, dataflow, hbm, 32, "col-outer"))
    for dataflow in ("ws", "os"):
        out.append(_case(128, 128, 128, dataflow, True, 32, "row-outer"))
        out.append(_case(64, 64, 64, dataflow, True, 16, "col-outer"))
    for dataflow in ("ws", "is"):
        out.append(_case(64, 32, 64, dataflow, False, 32, "col-outer"))
    return out


def _case(m: int, k: int, n: int, dataflow: str, hbm: bool, side: int, order: str) -> dict:
    name = f"{m}x{k}x{n} {dataflow} {'hbm' if hbm else 'on-chip'} {side}x{side} {order}"
    return {
        "id": name,
        "dataflow": dataflow,
        "m": m,
        "k": k,
        "n": n,
        "rows": side,
        "cols": side,
        "hbm": hbm,
        "order": order,
    }


def design_of(case: dict) -> SystolicDesign:
    """Our design for a case: no shadow registers (ZigZag has none), the whole array mapped."""
    link = HbmLink(HBM_WORDS_PER_CYCLE if case["hbm"] else None, 2)
    mapping = Mapping(case["rows"], case["cols"], case["order"])
    return SystolicDesign(
        SystolicArray(case["rows"], case["cols"]),
        case["dataflow"],
        mapping,
        Assumptions(shadow=False),
        link,
    )


def compare(case: dict, peer: dict, tech: Technology) -> dict:
    """Counts and energy of one case, ours against the peer's record."""
    design = design_of(case)
    counts = systolic_counts(design, Shape(case["m"], case["k"], case["n"]), 0, tech)
    ours = systolic_cost(design, counts, tech, PHYSICAL).energy_pj
    as_zigzag = systolic_cost(design, counts, tech, ZIGZAG).energy_pj
    theirs = {
        (op, level["memory"], d): v
        for op, levels in peer["levels"].items()
        for level in levels
        for d, v in level["elements"].items()
    }
    counted = [
        (key, mine, theirs.get(key))
        for key, mine in sorted(zigzag_pairs(counts, case["hbm"]).items())
    ]
    terms = zigzag_gap_terms(counts, tech)
    gap = peer["energy_pj"] - ours
    return {
        "case": case["id"],
        "macs_equal": counts.macs == peer["macs"],
        "counts": counted,
        "counts_equal": all(mine == other for _key, mine, other in counted),
        "zigzag_pj": peer["energy_pj"],
        "ours_pj": ours,
        "as_zigzag_pj": as_zigzag,
        "difference": gap / peer["energy_pj"],
        "zigzag_difference": (peer["energy_pj"] - as_zigzag) / peer["energy_pj"],
        "terms": terms,
        "unexplained": (gap - sum(terms.values())) / peer["energy_pj"],
    }


def run_zigzag(python: str, chosen: list[dict]) -> dict:
    runner = ROOT / "benchmarks" / "peers" / "zigzag_runner.py"
    done = subprocess.run(
        [python, str(runner)], input=json.dumps(chosen), capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"ZigZag failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def golden_record(peer: dict, chosen: list[dict]) -> dict:
    results = {r["id"]: r for r in peer["results"]}
    return {
        "provenance": {
            "peer": "ZigZag",
            "zigzag_version": peer["zigzag_version"],
            "produced_by": "python -m benchmarks.energy.bench_energy --zigzag-python PYTHON --write-golden FILE",
            "each_case": "benchmarks/peers/zigzag_runner.py: zigzag.api.get_hardware_performance_zigzag on tpu_like.yaml's "
            "costs, cut to the case's array, with the case's spatial and full temporal mapping",
            "zigzag_python": peer["python"],
            "technology_file": f"simcore/energy/data/{TECH_FILE}",
        },
        "cases": [{"input": case, "zigzag": results[case["id"]]} for case in chosen],
    }


def report(rows: list[dict]) -> str:
    lines = [
        f"{'case':<40} {'counts':>7} {'ZigZag pJ':>12} {'zigzag acct':>12} {'diff':>9} "
        f"{'physical':>12} {'diff':>8} {'unexplained':>12}"
    ]
    for row in rows:
        equal = row["counts_equal"] and row["macs_equal"]
        lines.append(
            f"{row['case']:<40} {'equal' if equal else 'DIFFER':>7} {row['zigzag_pj']:>12,.0f} "
            f"{row['as_zigzag_pj']:>12,.0f} {row['zigzag_difference']:>+9.1e} "
            f"{row['ours_pj']:>12,.0f} {row['difference']:>+8.2%} {row['unexplained']:>+12.1e}"
        )
    lines.append("(diff: ZigZag minus ours, over ZigZag's)")
    for label, key in (("zigzag", "zigzag_difference"), ("physical", "difference")):
        within = sum(abs(r[key]) <= 0.05 for r in rows)
        lines.append(
            f"energy within 5%, {label} accounting: {within} of {len(rows)} cases "
            f"({within / len(rows):.0%}); largest difference {max(abs(r[key]) for r in rows):.2e}"
        )
    lines.append(
        f"counts equal: {sum(r['counts_equal'] for r in rows)} of {len(rows)}; physical "
        f"difference unexplained by the conventions, at most "
        f"{max(abs(r['unexplained']) for r in rows):.2e}"
    )
    lines.append("physical accounting's difference by convention, pJ (ZigZag minus ours):")
    lines.append(f"  {'case':<40} " + " ".join(f"{short:>16}" for short in SHORT.values()))
    for row in rows:
        if any(row["terms"].values()):
            values = " ".join(f"{row['terms'][name]:>16,.0f}" for name in SHORT)
            lines.append(f"  {row['case']:<40} {values}")
    lines.append("  " + "; ".join(f"{short}: {name}" for name, short in SHORT.items()))
    return "\n".join(lines)


GOLDEN = ROOT / "tests" / "simcore" / "golden" / "zigzag_energy.json"


def main(argv: list[str] | None = None) -> int:
    # --quick compares against the golden file: ZigZag's own run takes its virtualenv and minutes.
    parser = harness.parser(__doc__, quick={"golden": GOLDEN, "zigzag_python": None})
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--zigzag-python", help="the Python of a virtualenv with zigzag-dse 3.9.1")
    source.add_argument(
        "--golden", type=Path, help="compare against a golden file instead of running ZigZag"
    )
    parser.add_argument(
        "--write-golden", type=Path, help="write ZigZag's results with their provenance here"
    )
    parser.add_argument("--counts", action="store_true", help="print every compared count")
    args = parser.parse_args(argv)
    if args.golden is None and harness.peer_python("zigzag", args.zigzag_python) is None:
        where = args.zigzag_python or harness.PEERS / "zigzag-venv"
        return harness.skip(f"no ZigZag environment at {where}; --golden FILE compares without it")
    tech = load_technology(shipped_table(TECH_FILE))
    if args.golden:
        golden = json.loads(args.golden.read_text())
        pairs = [(c["input"], c["zigzag"]) for c in golden["cases"]]
    else:
        chosen = cases()
        peer = run_zigzag(args.zigzag_python, chosen)
        if args.write_golden:
            args.write_golden.write_text(json.dumps(golden_record(peer, chosen), indent=1) + "\n")
        results = {r["id"]: r for r in peer["results"]}
        pairs = [(case, results[case["id"]]) for case in chosen]
    rows = [compare(case, peer_case, tech) for case, peer_case in pairs]
    print(report(rows))
    if args.counts:
        for row in rows:
            print(row["case"])
            for key, mine, other in row["counts"]:
                print(f"  {' '.join(key):<36} ours {mine:>10} ZigZag {other}")
    return 0


if __name__ == "__main__":
    harness.run(main)
