"""Ask the decision questions again on the small-instance table, with more work per question.

Reads a table written by bench_optimum.py (tests/simcore/data/optima.json) and, for each row
not yet proven, asks "a schedule of at most exact - 1 cycles?" (simcore.ga1.exact.decide_below):
on the smallest instances by the exhaustive search first (--search-nodes states), then with
--proof-limit units of CP-SAT's deterministic time per question. The rows, with the bounds
raised, the faster schedules found and the proofs made, go to --json; a row is written as soon
as it is done, and a rerun skips the rows already there (when CP-SAT crashes, which its interleaved
portfolio does on rare runs, the run stops with an error: run it again to go on).

    python -m benchmarks.optimum.bench_proofs --table tests/simcore/data/optima.json \\
        --proof-limit 20 --pebble-products 12 --json proofs.json
    python -m benchmarks.optimum.bench_proofs --table tests/simcore/data/optima.json \\
        --max-products 12 --search-nodes 200000000 --json proofs.json   # the searched rows only
    python -m benchmarks.optimum.bench_proofs --table tests/simcore/data/optima.json \\
        --json proofs.json --report   # what changed
    python -m benchmarks.optimum.bench_optimum --from-json proofs.json   # the table
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness
from simcore import simulate
from simcore.ga1.asm import to_text
from simcore.ga1.exact import ExactOptions, decide_below
from simcore.ga1.machine import machine_from, parse_overrides
from simcore.shape import parse_shape


def prove_row(row: dict, options: ExactOptions) -> dict:
    """The row after the decision questions: bound, exact schedule and status updated."""
    shape, machine = parse_shape(row["shape"]), machine_from(parse_overrides(row["machine"]), None)
    started = time.perf_counter()
    faster, bound, proved = decide_below(shape, machine, int(row["exact"]), options)
    out = dict(row, bound=max(int(row["bound"]), bound), proof_limit=options.proof_limit)
    if faster is not None:  # decide_below has verified it
        out["exact"], out["program"] = simulate(machine, faster).cycles, to_text(faster)
    out["status"] = "optimal" if proved else row["status"]
    out["proof_seconds"] = round(time.perf_counter() - started, 1)
    return out


def report(before: list[dict], after: list[dict]) -> str:
    """The rows whose bound or schedule the questions changed, as a markdown table."""
    by_key = {(row["shape"], row["machine"]): row for row in before}
    lines = [
        "| shape | machine | exact before | exact | bound before | bound | proven | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in after:
        old = by_key[(row["shape"], row["machine"])]
        if (row["exact"], row["bound"]) == (old["exact"], old["bound"]):
            continue
        proven = "yes" if row["exact"] == row["bound"] else "no"
        lines.append(
            f"| {row['shape']} | {row['machine']} | {old['exact']:,} | {row['exact']:,} "
            f"| {old['bound']:,} | {row['bound']:,} | {proven} | {row['proof_seconds']} |"
        )
    return "\n".join(lines)


def write_atomically(path: Path, rows: list[dict]) -> None:
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(rows, indent=1) + "\n")
    os.replace(partial, path)


def main(argv: list[str] | None = None) -> int:
    quick = {
        "table": harness.DATA / "optima.json",
        "json": Path(tempfile.mkdtemp()) / "proofs.json",
        "max_products": 8,
        "proof_limit": 1.0,
        "workers": 1,
    }
    parser = harness.parser(__doc__, quick=quick)
    parser.add_argument("--table", type=Path, help="rows of bench_optimum (required)")
    parser.add_argument("--json", type=Path, help="the rows after the questions (required)")
    parser.add_argument("--proof-limit", type=float, default=20.0, help="units per question")
    parser.add_argument(
        "--pebble-products", type=int, default=12, help="largest instance for fewest transfers"
    )
    parser.add_argument(
        "--search-nodes",
        type=int,
        default=ExactOptions().search_nodes,
        help="states of the exhaustive search on the smallest instances, before the questions",
    )
    parser.add_argument(
        "--max-products",
        type=int,
        default=None,
        help="copy the rows of more tile products unchanged (default: ask every row)",
    )
    parser.add_argument("--workers", type=int, default=8, help="CP-SAT workers, interleaved")
    parser.add_argument("--shard", type=int, default=0, help="this shard's index")
    parser.add_argument("--shards", type=int, default=1, help="how many shards share the rows")
    parser.add_argument(
        "--report", action="store_true", help="print what --json changed in --table, and stop"
    )
    args = parser.parse_args(argv)
    if args.table is None or args.json is None:
        parser.error("--table and --json are required")
    rows = json.loads(args.table.read_text())
    done = json.loads(args.json.read_text()) if args.json.is_file() else []
    if args.report:
        print(report(rows, done))
        return 0
    seen = {(row["shape"], row["machine"]) for row in done}
    options = ExactOptions(
        time_limit=None,
        workers=args.workers,
        seed=0,
        proof_limit=args.proof_limit,
        pebble_products=args.pebble_products,
        search_nodes=args.search_nodes,
    )
    for index, row in enumerate(rows):
        if index % args.shards != args.shard or (row["shape"], row["machine"]) in seen:
            continue
        products = math.prod(int(x) for x in row["tiles"].split("x"))
        if row["exact"] == row["bound"]:
            out = dict(row, proof_limit=0.0, proof_seconds=0.0)
        elif args.max_products is not None and products > args.max_products:
            out = dict(row)
        else:
            out = prove_row(row, options)
        done.append(out)
        write_atomically(args.json, done)
        print(
            f"{row['shape']} {row['machine']}: {out['exact']} in [{out['bound']}, {out['exact']}] "
            f"({row['bound']} before), {out['status']}, {out['proof_seconds']} s",
            file=sys.stderr,
            flush=True,
        )
    return 0


if __name__ == "__main__":
    harness.run(main)
