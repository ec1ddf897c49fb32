"""The exhaustive search of simcore/ga1/exact/timed.py on the smallest instances: states visited,
CPU seconds and what it proves, from the best schedule known (the table's exact column).

    python -m benchmarks.optimum.bench_timed            # the 2 x 2 x 2 rows, seconds
    python -m benchmarks.optimum.bench_timed --all      # also 2 x 2 x 3 (about 20 min)
    python -m benchmarks.optimum.bench_timed --case 24x24x24:slots=12:584 \
        --max-nodes 30000000                                    # any instance, below any cycles
    python -m benchmarks.optimum.bench_timed --tuner 300 --case 16x16x16:slots=4:0 \
        --json tests/simcore/data/searched_optima.json          # the tuner's best, then below it

Each line: the instance, the cycles searched below, the answer (a faster schedule, or none:
then the known one is optimal), whether the search ended, the states and the CPU time. With
`--json` every instance's row (the optimum's program included, as GA-1 assembly) is kept in the
file as it is measured, and a run given the same file skips the instances it holds.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from autotune.results.files import write_text
from benchmarks import harness
from simcore.ga1.asm import to_text
from simcore.ga1.exact.timed import MAX_PRODUCTS, search_below
from simcore.ga1.exact.transfers import fewest_transfers
from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import Machine, machine_from, parse_overrides
from simcore.ga1.program import Program
from simcore.ga1.verify import verify_matmul
from simcore.shape import Shape, parse_shape

# (shape, machine, the fastest schedule known before the search: docs/benchmarks/optimum.md)
QUICK = (
    ("16x16x16", "slots=8", 240),
    ("16x16x16", "slots=6", 260),
    ("16x16x16", "slots=5", 280),
    ("16x16x16", "slots=6,dma_setup=4", 113),
    ("16x16x16", "slots=4", 332),
)
LONG = (
    ("16x16x24", "slots=6", 360),
    ("24x16x16", "slots=6", 360),
    ("16x24x16", "slots=4", 484),
    ("24x16x16", "slots=4", 488),
)


def searched(
    shape_text: str, overrides: str, known: int, trials: int, max_nodes: int
) -> dict[str, Any]:
    """One instance: the tuner's best (with `trials`), the search below the best known, and the
    fastest program found or known, verified exactly."""
    shape, machine = parse_shape(shape_text), machine_from(parse_overrides(overrides), None)
    tuned: int | None = None
    program: Program | None = None
    if trials:
        from benchmarks.optimum.optimum_common import tuner_best

        tuned, _, program = tuner_best(shape, machine, trials, 0)
    below = known or (tuned or 0)
    started = time.process_time()
    found = search_below(shape, machine, below, max_nodes)
    seconds = time.process_time() - started
    if found.program is not None:
        program = found.program
    cycles = found.cycles if found.cycles is not None else below
    if program is not None:
        verified(machine, program, shape, cycles)
    return {
        "shape": shape_text,
        "machine": overrides,
        "tuner": tuned,
        "trials": trials,
        "below": below,
        "found": found.cycles,
        "optimum": cycles if found.complete and program is not None else None,
        "complete": found.complete,
        "states": found.nodes,
        "seconds": round(seconds, 1),
        "program": to_text(program) if program is not None else "",
    }


def verified(machine: Machine, program: Program, shape: Shape, cycles: int) -> None:
    verification, _ = verify_matmul(machine, program, shape)
    assert verification.ok and verification.cycles == cycles, verification


def line(row: dict[str, Any]) -> str:
    answer = f"{row['found']} found" if row["found"] is not None else "none faster"
    tuner = f", tuner {row['tuner']}" if row["tuner"] is not None else ""
    return (
        f"{row['shape']} {row['machine']}: below {row['below']}: {answer}, "
        f"{'ended' if row['complete'] else 'stopped'}, {row['states']:,} states, "
        f"{row['seconds']:.1f} s{tuner}"
    )


def report(rows: list[dict[str, Any]], families: dict[tuple[str, str], int]) -> str:
    """The rows as the docs' table, bounds computed now, and how often the tuner was optimal;
    `families`: the fastest program of the families on each instance (grid_families.py)."""
    from benchmarks.optimum.optimum_common import previous_bound

    head = (
        "| shape | tiles | machine | tuner | families | optimum | tuner / optimum | old bound "
        "| new bound | pebbling bound | optimum / new bound | states | seconds |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    proven = [row for row in rows if row["optimum"] is not None]
    for row in proven:
        shape, machine = (
            parse_shape(row["shape"]),
            machine_from(parse_overrides(row["machine"]), None),
        )
        optimum, new = row["optimum"], lower_bound(shape, machine)
        fewest = fewest_transfers(shape, machine, MAX_PRODUCTS)
        pebbling = f"{fewest * machine.dma_cycles:,}" if fewest is not None else "-"
        tiles = "x".join(str(t) for t in shape.tiles(machine.T))
        family_cycles = families.get((row["shape"], row["machine"]))
        lines.append(
            f"| {row['shape']} | {tiles} | {row['machine']} | {row['tuner']:,} | "
            f"{f'{family_cycles:,}' if family_cycles is not None else '-'} | {optimum:,} | "
            f"{row['tuner'] / optimum:.3f} | {previous_bound(shape, machine):,} | {new:,} | "
            f"{pebbling} | {optimum / new:.3f} | {row['states']:,} | {row['seconds']:.1f} |"
        )
    equal = sum(row["tuner"] == row["optimum"] for row in proven)
    near = sum(row["tuner"] <= 1.01 * row["optimum"] for row in proven)
    stopped = [
        f"{row['shape']} {row['machine']} ({row['found'] or row['below']:,} found below the "
        f"tuner's {row['tuner']:,}, {row['states']:,} states)"
        for row in rows
        if row["optimum"] is None
    ]
    held = [row for row in proven if (row["shape"], row["machine"]) in families]
    lines += [
        "",
        f"- instances: {len(rows)}; the search ended on {len(proven)}",
        f"- the tuner ({rows[0]['trials'] if rows else 0} trials) optimal on {equal}, "
        f"within 1% on {near}",
    ]
    if stopped:
        lines.append(f"- stopped by the state limit: {'; '.join(stopped)}")
    if held:
        best = [families[(row["shape"], row["machine"])] for row in held]
        lines.append(
            f"- of {len(held)} with the families' grid: the families hold the optimum on "
            f"{sum(b == row['optimum'] for b, row in zip(best, held))}, and the tuner reaches "
            f"the families' best on {sum(row['tuner'] == b for b, row in zip(best, held))}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    quick = {"case": ["16x16x16:slots=8:240"], "json": None, "tuner": 0}
    parser = harness.parser(__doc__, quick=quick)
    parser.add_argument("--all", action="store_true", help="also the 2 x 2 x 3 instances")
    parser.add_argument("--max-nodes", type=int, default=100_000_000, help="states, at most")
    parser.add_argument(
        "--case", action="append", default=[], help="SHAPE:MACHINE:CYCLES instead of the table's"
    )
    parser.add_argument(
        "--tuner",
        type=int,
        default=0,
        help="also run the tuner with this many trials, and search below its best",
    )
    parser.add_argument(
        "--json", type=Path, help="keep each instance's row here, skipping those it holds"
    )
    parser.add_argument(
        "--report", action="store_true", help="print the --json file's rows as the docs' table"
    )
    parser.add_argument(
        "--families", type=Path, help="with --report: grid_families.py's rows, as a column"
    )
    args = parser.parse_args(argv)
    if args.report:
        if not args.json or not args.json.exists():
            parser.error("--report reads the rows of an existing --json file")
        grid = json.loads(args.families.read_text()) if args.families else []
        families = {
            (row["shape"], row["machine"]): min(
                row[name]["cycles"] for name in ("general", "strips") if row[name]["cycles"]
            )
            for row in grid
        }
        print(report(json.loads(args.json.read_text()), families))
        return 0
    cases = [(a, b, int(c)) for a, b, c in (case.split(":") for case in args.case)]
    rows: list[dict[str, Any]] = (
        json.loads(args.json.read_text()) if args.json and args.json.exists() else []
    )
    held = {(row["shape"], row["machine"]) for row in rows}
    for shape_text, overrides, known in cases or QUICK + (LONG if args.all else ()):
        if (shape_text, overrides) in held:
            continue
        row = searched(shape_text, overrides, known, args.tuner, args.max_nodes)
        print(line(row), flush=True)
        if args.json:
            rows.append(row)
            write_text(json.dumps(rows, indent=1) + "\n", args.json)  # atomically
    return 0


if __name__ == "__main__":
    harness.run(main)
