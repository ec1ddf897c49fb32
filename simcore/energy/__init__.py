"""Energy and area of a GEMM on either oracle, from the exact counts the oracle makes and a
technology table (energy per action, area per block) read from a TOML file.

  tech = load_technology()                    # or load_technology("my_node.toml")
  ga1_cost(machine, ga1_counts(timing, machine), tech)       -> Cost
  systolic_cost(design, systolic_counts(design, shape, cycles, tech), tech) -> Cost
  systolic_cost(design, counts, tech, ZIGZAG)  # the same counts charged by ZigZag's conventions

A Cost has the energy in pJ by category (compute, register, on-chip, off-chip) with each
category's line items, what the oracle does not count, energy per MAC, EDP and area in mm2.
"""

from __future__ import annotations

from simcore.energy.accountings import (
    ACCOUNTINGS,
    PHYSICAL,
    ZIGZAG,
    Accounting,
    AccountingError,
    accounting,
)
from simcore.energy.cost import CATEGORIES, NEVER_COSTED, Category, Cost, Item, area_mm2
from simcore.energy.ga1 import (
    CountError,
    Ga1Counts,
    VectorWork,
    ga1_area,
    ga1_area_mm2,
    ga1_cost,
    ga1_cost_of_timing,
    ga1_counts,
    ga1_counts_of_kinds,
    ga1_counts_of_program,
    instruction_kinds,
)
from simcore.energy.systolic import (
    SystolicCounts,
    systolic_area,
    systolic_area_mm2,
    systolic_cost,
    systolic_cost_of,
    systolic_counts,
)
from simcore.energy.technology import (
    SramPoint,
    Technology,
    TechnologyError,
    default_technology,
    load_technology,
    shipped_table,
    technology_from_dict,
    technology_to_dict,
)

__all__ = [
    "ACCOUNTINGS",
    "PHYSICAL",
    "ZIGZAG",
    "Accounting",
    "AccountingError",
    "accounting",
    "CATEGORIES",
    "NEVER_COSTED",
    "Category",
    "Cost",
    "Item",
    "area_mm2",
    "CountError",
    "Ga1Counts",
    "ga1_area",
    "ga1_area_mm2",
    "ga1_cost",
    "ga1_cost_of_timing",
    "ga1_counts",
    "ga1_counts_of_kinds",
    "ga1_counts_of_program",
    "instruction_kinds",
    "VectorWork",
    "SystolicCounts",
    "systolic_area",
    "systolic_area_mm2",
    "systolic_cost",
    "systolic_cost_of",
    "systolic_counts",
    "SramPoint",
    "Technology",
    "TechnologyError",
    "default_technology",
    "load_technology",
    "shipped_table",
    "technology_from_dict",
    "technology_to_dict",
]
