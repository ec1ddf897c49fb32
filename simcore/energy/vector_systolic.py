"""Energy and area of a vector operation on a systolic machine (`VectorRun`), with the same
technology table as its products (simcore/energy/memory.py, simcore/energy/fused.py).

Lane operations by class at the table's vector_add_pj, vector_mul_pj, vector_div_pj and sfu_pj
(scaled to the machine's word width; a move across lanes costs no arithmetic); the store the
unit works in costed as an SRAM of its own capacity: the unit's reads and writes, the loads'
writes and the stores' reads; the DRAM (or HBM) link per byte moved plus one set-up per
request. Area: the memory system's, plus the unit's lanes, each as one PE. Without the
table's vector energies the arithmetic is listed as not counted.
"""

from __future__ import annotations

from simcore.energy.cost import Category, Cost, Item
from simcore.energy.memory import _dram_line, memory_area, store_sizes
from simcore.energy.technology import Technology
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.vector_stream import VectorRun, vector_store

_PRICES = (
    ("add", "vector_add_pj"),
    ("mul", "vector_mul_pj"),
    ("div", "vector_div_pj"),
    ("sfu", "sfu_pj"),
)


def vector_cost(machine: SystolicMachine, run: VectorRun, tech: Technology) -> Cost:
    scale = machine.word_bits / tech.word_bits
    unit = machine.vector_unit
    lanes = run.task.lane_counts(unit.lanes)
    not_counted: tuple[str, ...] = ()
    compute: tuple[Item, ...] = ()
    if not run.task.work().dma and any(getattr(tech, key) is None for _kind, key in _PRICES):
        not_counted = ("the vector unit's arithmetic (the table has no vector_*_pj, sfu_pj)",)
    elif not run.task.work().dma:
        compute = tuple(
            Item(f"vector unit {kind} lane operations", lanes[kind], getattr(tech, key) * scale)
            for kind, key in _PRICES
        )
    store = vector_store(machine)
    kib = next(k for name, k, _bits in store_sizes(machine) if name == store.name)
    reads = float(run.unit_reads + run.dram_write_words)
    writes = float(run.unit_writes + run.dram_read_words)
    on_chip = (
        Item(f"{store.name} reads ({kib:g} KiB)", reads, tech.sram_read_pj(kib) * scale),
        Item(f"{store.name} writes ({kib:g} KiB)", writes, tech.sram_write_pj(kib) * scale),
    )
    read_pj, write_pj, line = _dram_line(machine, tech)
    per_byte, word_bytes = 8 / tech.word_bits, machine.word_bits / 8
    off_chip = (
        Item(f"{line} reads (bytes)", float(run.dram_read_words) * word_bytes, read_pj * per_byte),
        Item(
            f"{line} writes (bytes)", float(run.dram_write_words) * word_bytes, write_pj * per_byte
        ),
        Item(f"{line} requests (set-ups)", run.requests, tech.dma_setup_pj),
    )
    categories = (
        Category("compute", compute),
        Category("register", ()),
        Category("on_chip", on_chip),
        Category("off_chip", off_chip),
    )
    area = memory_area(machine, False, tech) + (
        Item("vector unit lanes (as PEs)", unit.lanes, tech.pe_um2),
    )
    return Cost("systolic+vector", tech.name, 0, run.cycles, categories, area, not_counted)
