"""`autotune archs`: the bundled architectures (systolic machines with their memory system) that
`--arch NAME` names: array, dataflow, buffers, DRAM link, clock and where the figures come
from."""

from __future__ import annotations

import argparse
import json

from autotune.cli.args import add_json

HELP = "list the bundled architectures --arch takes"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "archs",
        help=HELP,
        description=(
            "List the bundled architectures: systolic machines with their buffers and DRAM link "
            "(--arch NAME tunes on one; --arch FILE reads a file of the same layout)."
        ),
    )
    add_json(parser, "one JSON object per architecture instead of the table")
    parser.set_defaults(run=run)


def _size(words: int, bits: int) -> str:
    size = words * bits / 8
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:g} {unit}"
        size /= 1024
    return f"{size:g} GiB"


def described(name: str) -> dict[str, object]:
    """One bundled architecture, in figures."""
    from simcore.systolic.archs import load_arch

    m = load_arch(name)
    buffers = [
        {
            "name": s.name,
            "holds": list(s.holds),
            "capacity": _size(s.capacity, m.word_bits),
        }
        for s in m.memory.stores
    ]
    if m.memory.accumulator is not None:
        capacity = _size(m.memory.accumulator.capacity, m.accumulator_bits)
        buffers.append({"name": "accumulator", "holds": ["c"], "capacity": capacity})
    return {
        "name": name,
        "array": str(m.array),
        "dataflow": m.dataflow,
        "clock_mhz": float(m.clock_hz) / 1e6,
        "buffers": buffers,
        "dram": m.memory.dram_kind,
        "dram_gb_per_s": round(float(m.dram_bytes_per_second) / 1e9, 3),
        "dram_latency_cycles": m.memory.dram.latency,
        "vector_lanes": m.vector_unit.lanes,
        "description": m.description,
        "sources": dict(m.sources),
    }


def _line(arch: dict[str, object]) -> str:
    stores = "; ".join(
        f"{b['name']} {b['capacity']} ({','.join(b['holds'])})"  # type: ignore[index]
        for b in arch["buffers"]  # type: ignore[attr-defined]
    )
    link = f"{arch['dram']} {arch['dram_gb_per_s']:g} GB/s"
    return (
        f"{arch['name']:<9} {arch['array']:>8} {arch['dataflow']:<3} "
        f"{arch['clock_mhz']:>5g} MHz  {link:<15} {stores}; vector {arch['vector_lanes']} lanes"
    )


def run(args: argparse.Namespace) -> int:
    from simcore.systolic.archs import bundled_archs

    found = [described(name) for name in bundled_archs()]
    if args.json:
        for arch in found:
            print(json.dumps(arch))
        return 0
    print(
        f"{'name':<9} {'array':>8} {'df':<3} {'clock':>9}  {'DRAM':<15} buffers (operands); vector unit"
    )
    for arch in found:
        print(_line(arch))
    print()
    for arch in found:
        sources = arch["sources"]
        print(f"{arch['name']}: {arch['description']}")
        for key, text in sources.items():  # type: ignore[attr-defined]
            print(f"  {key}: {text}")
    return 0
