"""Every distinct program of the general and strip families on a tiny instance, timed: the best
each family holds, to set beside the tuner's best and the proven optimum (search or families?).

    python -m benchmarks.optimum.grid_families --case 16x16x16:slots=4
    python -m benchmarks.optimum.grid_families --rows tests/simcore/data/searched_optima.json \
        --json families.json                      # every instance of the file, kept as measured

The grid is exhaustive for the instance: a lookahead of P - 1 products or more (P: the tile
products) and a protection of P or more build the same program as P - 1 and P, a reserve above
the slots fits no block, and the other domains are taken whole. Points are reduced by the
family's canonical form and programs by their code, so each distinct program is timed once.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, Callable

from autotune.results.files import write_text
from benchmarks import harness
from search_spaces.base import GA1Family
from search_spaces.general import GeneralFamily
from search_spaces.strips import StripsFamily
from simcore.ga1.engine import time_program
from simcore.ga1.machine import Machine, machine_from, parse_overrides
from simcore.ga1.schedules import ScheduleError
from simcore.shape import Shape, parse_shape


def domains(family: GA1Family, shape: Shape, machine: Machine) -> list[tuple[str, list[Any]]]:
    """Each parameter's values, the equivalent tails of the long ranges cut off."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    products = Mt * Kt * Nt
    caps = {"lookahead": products - 1, "protect": products, "reserve": machine.slots}
    return [
        (p.name, [v for v in p.domain.values() if p.name not in caps or v <= caps[p.name]])
        for p in family.params(shape, machine.T)
    ]


def family_best(family: GA1Family, shape: Shape, machine: Machine) -> dict[str, Any]:
    """The fastest program of the family on the instance, its point and the programs timed."""
    names, values = zip(*domains(family, shape, machine))
    points: set[str] = set()
    programs: set[str] = set()
    best: tuple[int, dict[str, Any]] | None = None
    for combination in itertools.product(*values):
        point = family.canonical(dict(zip(names, combination)), shape, machine.T)
        key = json.dumps(point, sort_keys=True)
        if key in points:
            continue
        points.add(key)
        if family.violation(point, shape, machine) > 0:
            continue
        try:
            program = family.generator(point, shape, machine).program()
        except ScheduleError:
            continue  # a point whose schedule the slots cannot hold
        digest = hashlib.sha1(program.code.tobytes()).hexdigest()
        if digest in programs:
            continue
        programs.add(digest)
        cycles = time_program(machine, program).cycles
        if best is None or cycles < best[0]:
            best = (cycles, point)
    return {
        "cycles": best[0] if best else None,
        "point": best[1] if best else None,
        "programs": len(programs),
    }


def measure(shape_text: str, overrides: str) -> dict[str, Any]:
    shape, machine = parse_shape(shape_text), machine_from(parse_overrides(overrides), None)
    found = {
        family.name: family_best(family, shape, machine)
        for family in (GeneralFamily(), StripsFamily())
    }
    return {"shape": shape_text, "machine": overrides, **found}


def instance_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options of a benchmark over tiny instances: --case, --rows and --json."""
    parser = harness.parser(doc, quick={"case": ["16x8x8:slots=4"], "rows": None, "json": None})
    parser.add_argument("--case", action="append", default=[], help="SHAPE:MACHINE")
    parser.add_argument("--rows", type=Path, help="the instances of a bench_timed.py --json file")
    parser.add_argument("--json", type=Path, help="keep each row here, skipping those it holds")
    return parser


def run_instances(
    args: argparse.Namespace,
    measure: Callable[[str, str], dict[str, Any]],
    line: Callable[[dict[str, Any]], str],
) -> None:
    """Measure each instance of --case and --rows that --json does not hold yet, print its line
    and keep its row (written atomically after each, so a stopped run resumes)."""
    cases = [tuple(case.split(":", 1)) for case in args.case]
    if args.rows:
        cases += [(row["shape"], row["machine"]) for row in json.loads(args.rows.read_text())]
    rows: list[dict[str, Any]] = (
        json.loads(args.json.read_text()) if args.json and args.json.exists() else []
    )
    held = {(row["shape"], row["machine"]) for row in rows}
    for shape_text, overrides in cases:
        if (shape_text, overrides) in held:
            continue
        row = measure(shape_text, overrides)
        print(f"{shape_text} {overrides}: {line(row)}", flush=True)
        held.add((shape_text, overrides))
        if args.json:
            rows.append(row)
            write_text(json.dumps(rows, indent=1) + "\n", args.json)


def main(argv: list[str] | None = None) -> int:
    run_instances(
        instance_parser(__doc__).parse_args(argv),
        measure,
        lambda row: ", ".join(
            f"{name} {row[name]['cycles']} ({row[name]['programs']} programs)"
            for name in ("general", "strips")
        ),
    )
    return 0


if __name__ == "__main__":
    harness.run(main)
