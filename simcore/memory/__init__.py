"""Memory parts shared by the oracles: a link to off-chip memory (`Link`: bandwidth in words per
cycle, latency and set-up per request) and an on-chip buffer (`Buffer`: capacity, read and write
width, the blocks it holds single or double buffered), with the quantities their files are
written in (`units`: KiB, MiB, GB/s at a clock, ns)."""

from simcore.memory.buffer import Buffer, Residency
from simcore.memory.link import Link
from simcore.memory.units import (
    UnitError,
    parse_bandwidth,
    parse_bytes,
    parse_cycles,
    parse_frequency,
    parse_rate,
)

__all__ = [
    "Buffer",
    "Link",
    "Residency",
    "UnitError",
    "parse_bandwidth",
    "parse_bytes",
    "parse_cycles",
    "parse_frequency",
    "parse_rate",
]
