"""The toy oracle with one capability, a size guard: it says what one evaluation costs before
anything runs, so that a run past the limits (`max_products`, `max_memory`) is refused in one
line, from the command line and from Python alike. The same roofline, the same family."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autotune.oracles.capabilities import SizeGuard
from toy_oracle import TILE, Roofline, ToyOracle


@dataclass(frozen=True)
class BlockWork:
    """The toy's `Work`: its unit is a tile product, and it keeps one block's tiles in memory."""

    products: int
    instructions: int = 0
    evaluation_bytes: int = 0
    verification_bytes: int = 0
    program_bytes: int = 0
    evaluation_seconds: float = 0.0
    periodic_products: int = 0
    periodic_seconds: float = 0.0


class GuardedToyOracle(ToyOracle, SizeGuard):
    name = "toy_guarded"
    most_work = 1 << 30  # tile products one evaluation may count, unless max_products says
    work_unit = "tile products"

    def work(self, shape: Any, machine: Roofline) -> BlockWork:
        mt, kt, nt = shape.tiles(TILE)
        products = mt * kt * nt
        words = 3 * machine.buffer_tiles * TILE**2 * 8  # the buffer's tiles, in bytes
        return BlockWork(products, evaluation_bytes=words, periodic_products=products)


ORACLE = GuardedToyOracle()
