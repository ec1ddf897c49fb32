"""Every product order of the general and strip families on a tiny instance, compiled by the
reference compiler with each store delay (`CompileOptions.store_delay`) and timed: the families'
best with and without a finished accumulator's store waiting behind the next products' loads.

    python -m benchmarks.optimum.grid_store_delay --case 16x16x24:slots=5,dma_setup=4
    python -m benchmarks.optimum.grid_store_delay --rows tests/simcore/data/searched_optima.json \
        --json delays.json                        # every instance of the file, kept as measured

The orders are those of every point of the two families (grid_families.py's domains, the compile
options left out); each distinct order is compiled with every lookahead below the product count,
both store orders, every protection up to the product count (strips) and each delay.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Sequence

from benchmarks import harness
from benchmarks.optimum.grid_families import domains, instance_parser, run_instances
from search_spaces.base import GA1Family
from search_spaces.general import GeneralFamily
from search_spaces.strips import StripsFamily
from simcore.ga1.asm import to_text
from simcore.ga1.engine import time_program
from simcore.ga1.generator import (
    CompileOptions,
    Product,
    compile_products,
    product_order,
    strip_order,
)
from simcore.ga1.machine import Machine, machine_from, parse_overrides
from simcore.ga1.schedules import ScheduleError
from simcore.ga1.verify import verify_matmul
from simcore.shape import Shape, parse_shape

COMPILE = ("lookahead", "store_first", "protect")


def family_orders(family: GA1Family, shape: Shape, machine: Machine) -> list[list[Product]]:
    """The distinct product orders of the family's points that fit the slots."""
    names, values = zip(*[(n, v) for n, v in domains(family, shape, machine) if n not in COMPILE])
    orders: dict[tuple[Product, ...], None] = {}
    for combination in itertools.product(*values):
        point = {**dict(zip(names, combination)), "lookahead": 1, "store_first": False}
        if family.name == "strips":
            point["protect"] = 0
        point = family.canonical(point, shape, machine.T)
        if family.violation(point, shape, machine) > 0:
            continue
        params = family.to_params(point)  # type: ignore[attr-defined]
        build = strip_order if family.name == "strips" else product_order
        try:
            orders.setdefault(tuple(build(shape, machine, params)), None)
        except ScheduleError:
            continue
    return [list(order) for order in orders]


def best_per_delay(
    shape: Shape, machine: Machine, delays: Sequence[int]
) -> dict[int, tuple[int, dict[str, Any]] | None]:
    """The fastest program of either family at each store delay, with its compile options."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    P = Mt * Kt * Nt
    best: dict[int, tuple[int, dict[str, Any]] | None] = {d: None for d in delays}
    for family in (GeneralFamily(), StripsFamily()):
        protects = range(P + 1) if family.name == "strips" else range(1)
        for order in family_orders(family, shape, machine):
            for lookahead, store_first, protect, delay in itertools.product(
                range(P), (False, True), protects, delays
            ):
                options = CompileOptions(lookahead, store_first, protect, delay)
                try:
                    program = compile_products(shape, machine, order, options, validate=False)
                except ScheduleError:
                    continue
                cycles = time_program(machine, program).cycles
                held = best[delay]
                if held is None or cycles < held[0]:
                    found = {"family": family.name, **dataclasses.asdict(options), "order": order}
                    best[delay] = (cycles, found)
    return best


def verified(shape: Shape, machine: Machine, cycles: int, found: dict[str, Any]) -> str:
    """The program as GA-1 assembly, once the reference simulator has run it exactly (numpy's
    product, a clean hazard replay) in the cycles it was timed at."""
    options = CompileOptions(*(found[name] for name in (*COMPILE, "store_delay")))
    program = compile_products(shape, machine, found["order"], options)
    verification, _ = verify_matmul(machine, program, shape)
    assert verification.ok and verification.cycles == cycles, verification
    return to_text(program)


def measure(shape_text: str, overrides: str, delays: Sequence[int]) -> dict[str, Any]:
    shape, machine = parse_shape(shape_text), machine_from(parse_overrides(overrides), None)
    best: dict[str, Any] = {}
    for delay, held in best_per_delay(shape, machine, delays).items():
        if held is None:
            best[str(delay)] = None
            continue
        cycles, found = held
        program = verified(shape, machine, cycles, found)
        best[str(delay)] = {"cycles": cycles, **found, "program": program}
    return {"shape": shape_text, "machine": overrides, "best": best}


def main(argv: list[str] | None = None) -> int:
    parser = instance_parser(__doc__)
    parser.add_argument("--delays", default="0,1,2,3", help="store delays, comma-separated")
    args = parser.parse_args(argv)
    delays = [int(d) for d in args.delays.split(",")]
    run_instances(
        args,
        lambda shape_text, overrides: measure(shape_text, overrides, delays),
        lambda row: ", ".join(
            f"delay {d} {(v or {}).get('cycles')}" for d, v in row["best"].items()
        ),
    )
    return 0


if __name__ == "__main__":
    harness.run(main)
