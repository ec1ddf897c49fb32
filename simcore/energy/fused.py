"""Energy and area of a fused group on a systolic machine (`FusedRun`), every kernel of it.

As for a single product on the memory system (simcore/energy/memory.py): each store costed as an
SRAM of its own capacity at its own word width, DRAM (or HBM) per byte moved plus one set-up
per request, the array's registers summed over its blocks, the MACs. The vector unit adds its
lane operations by kind (the table's vector_add_pj, vector_mul_pj, vector_div_pj and sfu_pj,
scaled to the machine's word width); without them its arithmetic is listed as not counted.
Area: the memory system's, plus one lane of the vector unit per lane as one PE's.
"""

from __future__ import annotations

from simcore.energy.cost import Category, Cost, Item
from simcore.energy.memory import _dram_line, memory_area, store_sizes
from simcore.energy.systolic import _register_items, systolic_counts
from simcore.energy.technology import Technology
from simcore.shape import Shape
from simcore.systolic.fused.evaluate import FusedRun

_REGISTER_FIELDS = (
    "stationary_reads",
    "stationary_writes",
    "accumulator_reads",
    "accumulator_writes",
    "forward_reads",
    "forward_writes",
)
_LANES = (
    ("add", "vector_add_pj"),
    ("mul", "vector_mul_pj"),
    ("div", "vector_div_pj"),
    ("sfu", "sfu_pj"),
)


def _registers(run: FusedRun, tech: Technology) -> tuple[Item, ...]:
    shapes: dict[tuple[int, int, int], int] = {}
    for kernel in run.kernels:
        for dims, count in kernel.counts.block_shapes:
            shapes[dims] = shapes.get(dims, 0) + count
    total: dict[str, int] = dict.fromkeys(_REGISTER_FIELDS, 0)
    last = None
    for dims, count in shapes.items():
        last = systolic_counts(run.design, Shape(*dims), 0, tech)
        for field in _REGISTER_FIELDS:
            total[field] += count * getattr(last, field)
    if last is None:
        return ()
    return _register_items(last.__class__(**{**last.__dict__, **total}), tech)


def _on_chip(run: FusedRun, tech: Technology) -> tuple[Item, ...]:
    items = []
    for name, kib, bits in store_sizes(run.machine):
        key = "accumulator" if name == "accumulator" else f"buffers.{name}"
        reads = sum(float(k.counts.store_reads.get(key, 0)) for k in run.kernels)
        writes = sum(float(k.counts.store_writes.get(key, 0)) for k in run.kernels)
        per = bits / tech.word_bits
        items.append(Item(f"{name} reads ({kib:g} KiB)", reads, tech.sram_read_pj(kib) * per))
        items.append(Item(f"{name} writes ({kib:g} KiB)", writes, tech.sram_write_pj(kib) * per))
    return tuple(items)


def _off_chip(run: FusedRun, tech: Technology) -> tuple[Item, ...]:
    machine = run.machine
    read_pj, write_pj, line = _dram_line(machine, tech)
    per_byte = 8 / tech.word_bits
    reads = writes = 0.0
    requests = 0
    for kernel in run.kernels:
        for traffic in kernel.counts.dram.values():
            reads += float(traffic.read_words) * machine.word_bits / 8
            writes += float(traffic.write_words) * machine.word_bits / 8
        requests += kernel.counts.requests
    return (
        Item(f"{line} reads (bytes)", reads, read_pj * per_byte),
        Item(f"{line} writes (bytes)", writes, write_pj * per_byte),
        Item(f"{line} requests (set-ups)", requests, tech.dma_setup_pj),
    )


def _vector(
    run: FusedRun, tech: Technology, scale: float
) -> tuple[tuple[Item, ...], tuple[str, ...]]:
    lanes: dict[str, int] = {}
    for kernel in run.kernels:
        for kind, count in kernel.counts.lane_ops.items():
            lanes[kind] = lanes.get(kind, 0) + count
    if not lanes:
        return (), ()
    if any(getattr(tech, key) is None for _kind, key in _LANES):
        return (), ("the vector unit's arithmetic (the table has no vector_*_pj, sfu_pj)",)
    items = tuple(
        Item(
            f"vector unit {kind} lane operations",
            lanes.get(kind, 0),
            float(getattr(tech, key)) * scale,
        )
        for kind, key in _LANES
    )
    return items, ()


def fused_cost(run: FusedRun, tech: Technology) -> Cost:
    machine = run.machine
    scale = machine.word_bits / tech.word_bits
    lanes, not_counted = _vector(run, tech, scale)
    categories = (
        Category("compute", (Item("MACs", run.macs, tech.mac_pj * scale), *lanes)),
        Category("register", _registers(run, tech)),
        Category("on_chip", _on_chip(run, tech)),
        Category("off_chip", _off_chip(run, tech)),
    )
    area = memory_area(machine, run.design.assumptions.shadow, tech)
    area += (Item("vector unit lanes (as PEs)", run.vector.lanes, tech.pe_um2),)
    return Cost("systolic+fused", tech.name, run.macs, run.cycles, categories, area, not_counted)
