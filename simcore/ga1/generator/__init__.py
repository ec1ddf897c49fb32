"""The general schedule generator: a product order from scalar parameters, and its compiler; its
starting points (presets.py); and the strip schedules for small scratchpads (strips.py)."""

from __future__ import annotations

from simcore.ga1.generator.compile import CompileOptions, Product, check_products, compile_products
from simcore.ga1.generator.order import (
    BLOCK_ORDERS,
    INNER_ORDERS,
    K_DIRECTIONS,
    PARTITIONS,
    GeneralParams,
    bands,
    blocks,
    cell_order,
    general,
    product_order,
    slots_needed,
)
from simcore.ga1.generator.presets import default_params, overlap_params, panel_params
from simcore.ga1.generator.strips import StripParams, strip_order, strip_slots_needed, strips

__all__ = [
    "CompileOptions",
    "Product",
    "check_products",
    "compile_products",
    "GeneralParams",
    "product_order",
    "general",
    "slots_needed",
    "default_params",
    "overlap_params",
    "panel_params",
    "bands",
    "blocks",
    "cell_order",
    "PARTITIONS",
    "BLOCK_ORDERS",
    "K_DIRECTIONS",
    "INNER_ORDERS",
    "StripParams",
    "strip_order",
    "strip_slots_needed",
    "strips",
]
