"""How much an evaluation of a shape costs before anything is generated: the work (tile
products, instructions) and the memory of a timing-only evaluation, of an exact verification
and of a materialised program with its trace. Pure arithmetic on the shape and the machine.

Two costs of an evaluation: by full simulation (every product), and by the periodic method
(simcore/ga1/engine/periodic.py), which simulates a few units at each of its three loop levels
(bands, blocks, k steps: their first ones until the state recurs, a period, the edges) and jumps
the rest, so its work hardly grows with the shape. `periodic_products` is that work for blocks of
about the slots' size; a schedule that never settles falls back to full simulation, which the
evaluation's budget of products bounds (simcore/ga1/engine/methods.py).

The rates are the compiled engine's on a 2-core machine of 2025 (benchmarks/speed/bench_engine.py,
benchmarks/scale/bench_scale.py), rounded up: they turn work into an expected time for messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simcore.ga1.machine import Machine
from simcore.shape import Shape

# Rows per tile product, at most: the k-outermost order moves a partial C tile in and out and an
# A and a B tile for every product (five rows); the general generator emits at most three.
ROWS_PER_PRODUCT = 5
ROW_BYTES = 64  # an (n, 8) int64 program row
# A materialised program's row: its chunk and its place in the whole program while they are put
# together, and its start and finish recorded and copied out (show, plot), or its line of text
# (export): measured at 120 to 125 bytes.
PROGRAM_ROW_BYTES = 2 * ROW_BYTES + 48
# The process itself: Python with numpy, the compiled engine, Optuna and pandas (about 270 MB
# measured). Every need below counts it, so that a limit holds for the whole process.
PROCESS_BYTES = 320 << 20
CHUNK_BYTES = 2 * ROW_BYTES * 4096  # the engine's chunk of rows and its times
# Strips a schedule may cut C into: the engine keeps a record per strip (about 100 bytes); the
# strip generator refuses more (simcore.ga1.generator.strips).
MAX_STRIPS = 1 << 16
SECONDS_PER_PRODUCT = 1.5e-7  # generation and timing, the slowest family
# The periodic method: products simulated per loop level's unit side (bands, blocks, k steps),
# and the cost of a simulated product with the signatures taken around it.
PERIODIC_UNITS = 8
SECONDS_PER_SIMULATED = 2.5e-7
PERIODIC_SETUP_SECONDS = 2e-4  # the plan, the state and the lower bound's look-up, per evaluation
# Before a jump the method compares the kinds of the units ahead with those a period before, up to
# where they differ: a walk over every band, every block of a band and (a rotating window) every
# k step, each unit a few compiled look-ups. Counted here as simulated products, so that a shape
# of billions of tiles a side is refused under --max-products as its simulation would be.
SCAN_SECONDS_PER_UNIT = 2e-8
# An evaluation simulates at most this many products in full (about 20 s): a schedule that does
# not settle into a period is timed in full up to it, and refused past it.
FULL_SIMULATION_PRODUCTS = 1 << 27
# Within a search the fallback is kept to about a second (a search times hundreds of candidates),
# unless a larger limit is asked for: a schedule of more products that does not settle is refused.
SEARCH_FULL_PRODUCTS = 1 << 23
# A schedule past that limit gets this many simulated products to settle into a period (about a
# quarter of a second, hundreds of times what a settling schedule needs).
PERIODIC_ALLOWANCE = 1 << 20
# Verification runs the whole program up to this many products (a few seconds) and while its
# matrices (`verification_data_bytes`) stay within FULL_VERIFICATION_BYTES; past either, the same
# schedule on its reduced shape (simcore.ga1.reduced): a tall product of few tiles has operands
# of gigabytes.
FULL_VERIFICATION_PRODUCTS = 1 << 22
FULL_VERIFICATION_BYTES = 1 << 28
# The periodic method takes its signatures over every slot: past this many it times in full
# (simcore/ga1/engine/methods.py).
PERIODIC_MOST_SLOTS = 4096
# The engine's tile map (simcore/ga1/engine/tilemap.py) has an entry per tile up to this many
# tiles, and a table of a few entries per slot beyond.
DIRECT_TILES = 1 << 18
HISTORY_BYTES_PER_SLOT = 8 * 3 * 9 * 12  # the periodic method's signatures kept: 3 levels, 9 deep
# A schedule's cell tables (a few entries per cell of its at most four block shapes, each of at
# most the slots' cells), built as Python lists and packed.
TABLE_BYTES_PER_SLOT = 4 * 5 * 48
# A strip schedule's record of a strip, built as a Python list and packed; a schedule has at most
# as many strips as tiles across, and at most MAX_STRIPS.
STRIP_BYTES = 14 * 48


@dataclass(frozen=True)
class Work:
    """What one evaluation and one verification of a shape need, at most: each byte count is
    the process's peak (PROCESS_BYTES and the work's own data)."""

    products: int
    instructions: int
    evaluation_bytes: int  # timing only: the engine's state (slots, tile map, signatures, a chunk)
    verification_bytes: int  # A, B, C and numpy's product in float64, the scratchpad, the state
    program_bytes: int  # a materialised program with its start and finish times (show, plot)
    periodic_products: int = 0  # products the periodic method simulates, about (at most `products`)

    @property
    def evaluation_seconds(self) -> float:
        """An evaluation by full simulation."""
        return self.products * SECONDS_PER_PRODUCT

    @property
    def periodic_seconds(self) -> float:
        """An evaluation by the periodic method (a schedule that settles into a period)."""
        if self.periodic_products >= self.products:
            return self.evaluation_seconds
        return PERIODIC_SETUP_SECONDS + self.periodic_products * SECONDS_PER_SIMULATED

    def budget(self, full_limit: int = FULL_SIMULATION_PRODUCTS) -> int:
        """The products an evaluation may simulate: all of them in full within `full_limit`;
        past it, enough for the periodic method to settle."""
        if self.products <= full_limit:
            return full_limit
        return min(full_limit, max(PERIODIC_ALLOWANCE, 16 * self.periodic_products))


def verification_data_bytes(shape: Shape) -> int:
    """The matrices a verification holds, in float64: A and B (and, while they are drawn, an
    integer copy of the larger), C and numpy's product."""
    m, k, n = shape.m, shape.k, shape.n
    operands = m * k + k * n
    return 8 * max(operands + max(m * k, k * n), operands + 2 * m * n)


def verified_in_full(shape: Shape, machine: Machine) -> bool:
    """Whether a verification runs the whole program (else its reduced shape's)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    return (
        Mt * Kt * Nt <= FULL_VERIFICATION_PRODUCTS
        and verification_data_bytes(shape) <= FULL_VERIFICATION_BYTES
    )


def periodic_products(shape: Shape, machine: Machine) -> int:
    """About how many products the periodic method simulates: PERIODIC_UNITS units at each loop
    level (or all of them, where there are fewer) of blocks of about the slots' area, and its walk
    over the units' kinds (SCAN_SECONDS_PER_UNIT) as the products it takes as long as."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    if machine.slots > PERIODIC_MOST_SLOTS:
        return Mt * Kt * Nt
    side = max(
        1, math.isqrt(machine.slots) - 1
    )  # a block of h x w accumulators and its operands fit the slots
    bands, blocks = -(-Mt // side), -(-Nt // side)
    level = PERIODIC_UNITS
    simulated = (
        min(bands, level) * min(side, Mt) * min(blocks, level) * min(side, Nt) * min(Kt, level)
    )
    scanned = math.ceil((Mt + Kt + Nt) * SCAN_SECONDS_PER_UNIT / SECONDS_PER_SIMULATED)
    return min(Mt * Kt * Nt, simulated + scanned)


def estimate(shape: Shape, machine: Machine) -> Work:
    """The work and memory of evaluating and verifying `shape` on `machine`."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    products = Mt * Kt * Nt
    tiles = Mt * Kt + Kt * Nt + Mt * Nt
    tile_map = tiles if tiles <= DIRECT_TILES else 8 * machine.slots
    strips = min(MAX_STRIPS, max(Mt, Nt))
    state = (
        8 * (tile_map + 16 * machine.slots)
        + (HISTORY_BYTES_PER_SLOT + TABLE_BYTES_PER_SLOT) * machine.slots
        + STRIP_BYTES * strips
        + CHUNK_BYTES
    )
    # past the full run's limits, a reduced shape's run within them (simcore.ga1.reduced)
    data = (
        verification_data_bytes(shape)
        if verified_in_full(shape, machine)
        else FULL_VERIFICATION_BYTES
    )
    verification = data + 8 * machine.slots * machine.T**2 + state + PROCESS_BYTES
    instructions = ROWS_PER_PRODUCT * products
    return Work(
        products=products,
        instructions=instructions,
        evaluation_bytes=PROCESS_BYTES + state,
        verification_bytes=verification,
        program_bytes=PROCESS_BYTES + instructions * PROGRAM_ROW_BYTES,
        periodic_products=periodic_products(shape, machine),
    )
