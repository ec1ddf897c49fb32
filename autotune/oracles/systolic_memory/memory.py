"""What the systolic oracle calls for a machine with its memory, in one place."""

from autotune.oracles.systolic_memory.machine import arch_machine, from_record, parse_arch_text
from autotune.oracles.systolic_memory.run import (
    area_mm2,
    buffer_area_mm2,
    cost_of,
    largest_counts,
    machine_bound,
    metrics,
    report,
    run,
    verify,
)

__all__ = [
    "arch_machine",
    "area_mm2",
    "buffer_area_mm2",
    "cost_of",
    "from_record",
    "largest_counts",
    "machine_bound",
    "metrics",
    "parse_arch_text",
    "report",
    "run",
    "verify",
]
