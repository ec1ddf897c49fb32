"""How much an evaluation of a shape costs before anything is generated: the work (tile
products, instructions) and the memory of a timing-only evaluation, of an exact verification
and of a materialised program with its trace. Pure arithmetic on the shape and the machine.

The rates are the compiled engine's on a 2-core machine of 2025 (benchmarks/bench_engine.py),
rounded up: they turn work into an expected time for messages, never into a decision.
"""
from __future__ import annotations

from dataclasses import dataclass

from simcore.ga1.machine import Machine
from simcore.shape import Shape

# Rows per tile product, at most: the k-outermost order moves a partial C tile in and out and an
# A and a B tile for every product (five rows); the general generator emits at most three.
ROWS_PER_PRODUCT = 5
ROW_BYTES = 64             # an (n, 8) int64 program row
TIMES_BYTES = 48           # an instruction's start and finish, recorded and copied out, and its opcode drawn (show, plot)
CHUNK_BYTES = 2 * ROW_BYTES * 4096  # the engine's chunk of rows and its times
SECONDS_PER_PRODUCT = 1.5e-7        # generation and timing, the slowest family
VERIFY_SECONDS_PER_MAC = 1.5e-9     # a verification's arithmetic, per multiply-add


@dataclass(frozen=True)
class Work:
    """What one evaluation and one verification of a shape need, at most."""

    products: int
    instructions: int
    evaluation_bytes: int    # timing only: the engine's state (a slot's and a tile's worth each)
    verification_bytes: int  # A, B, C and numpy's product in float64, the scratchpad, the state
    program_bytes: int       # a materialised program with its start and finish times (show, plot)

    @property
    def evaluation_seconds(self) -> float:
        return self.products * SECONDS_PER_PRODUCT

    def verification_seconds(self, machine: Machine) -> float:
        return self.evaluation_seconds + self.products * machine.T**3 * VERIFY_SECONDS_PER_MAC


def estimate(shape: Shape, machine: Machine) -> Work:
    """The work and memory of evaluating and verifying `shape` on `machine`."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    products = Mt * Kt * Nt
    tiles = Mt * Kt + Kt * Nt + Mt * Nt
    state = 8 * (tiles + 16 * machine.slots) + CHUNK_BYTES
    operands = 8 * (shape.m * shape.k + shape.k * shape.n)
    verification = 2 * operands + 8 * 2 * shape.m * shape.n + 8 * machine.slots * machine.T**2 + state
    instructions = ROWS_PER_PRODUCT * products
    return Work(products=products, instructions=instructions, evaluation_bytes=state,
                verification_bytes=verification, program_bytes=instructions * (ROW_BYTES + TIMES_BYTES))
