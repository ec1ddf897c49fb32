"""Analytic tile model of C = A B (A m x k, B k x n), one tile_m x tile_n output tile at a time.

Every member keeps the reference model's name and equation (matmul-tile-model.md). Bytes are
plain ints, FLOPs are plain ints (two per MAC), intensities are floats in FLOP per byte.
Traffic members count element moves between memory and the on-chip store: A once per
output-tile column, B once per output-tile row, C written once. Full-tile members count padded
edge work, as the reference does.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from simcore.checks import ceil_div, require_positive_int

# Members listed by as_dict, in the reference's order (fits and row_b_reads take arguments).
DERIVED_MEMBERS: tuple[str, ...] = (
    "macs",
    "flops",
    "tiles_m",
    "tiles_n",
    "tiles_k",
    "output_tiles",
    "tile_products",
    "tile_product_flops",
    "tile_product_bytes",
    "tile_intensity",
    "unblocked_intensity",
    "compulsory_intensity",
    "buffer_copies",
    "a_tile_bytes",
    "b_tile_bytes",
    "accumulator_tile_bytes",
    "operand_tile_bytes",
    "live_bytes",
    "a_bytes",
    "a_elements",
    "b_elements",
    "c_elements",
    "a_moves",
    "b_moves",
    "tiled_moves",
    "global_loads_per_mac",
    "partial_sum_moves",
    "a_stationary_moves",
    "output_stationary_moves",
    "b_stationary_moves",
)


@dataclass(frozen=True)
class MatmulTile:
    """C = A B tiled as tile_m x tile_n output tiles, reducing tile_k elements per step."""

    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    tile_k: int
    operand_bytes: int
    accumulator_bytes: int
    double_buffered: bool = False

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name != "double_buffered":
                require_positive_int(f.name, getattr(self, f.name))
        if not isinstance(self.double_buffered, bool):
            raise ValueError(f"double_buffered must be a bool, got {self.double_buffered!r}")

    # Work.
    @property
    def macs(self) -> int:
        return self.m * self.n * self.k

    @property
    def flops(self) -> int:
        return 2 * self.macs

    # Tile counts (edges round up).
    @property
    def tiles_m(self) -> int:
        return ceil_div(self.m, self.tile_m)

    @property
    def tiles_n(self) -> int:
        return ceil_div(self.n, self.tile_n)

    @property
    def tiles_k(self) -> int:
        return ceil_div(self.k, self.tile_k)

    @property
    def output_tiles(self) -> int:
        return self.tiles_m * self.tiles_n

    @property
    def tile_products(self) -> int:
        return self.output_tiles * self.tiles_k

    # One full tile product (padding counted as work).
    @property
    def tile_product_flops(self) -> int:
        return 2 * self.tile_m * self.tile_n * self.tile_k

    @property
    def tile_product_bytes(self) -> int:
        return (self.tile_m * self.tile_k + self.tile_k * self.tile_n) * self.operand_bytes

    # Intensities, FLOP per byte.
    @property
    def tile_intensity(self) -> float:
        return self.tile_product_flops / self.tile_product_bytes

    @property
    def unblocked_intensity(self) -> float:
        return 2 / (2 * self.operand_bytes)

    @property
    def compulsory_intensity(self) -> float:
        moved = (self.a_elements + self.b_elements + self.c_elements) * self.operand_bytes
        return self.flops / moved

    # On-chip footprint.
    @property
    def buffer_copies(self) -> int:
        return 2 if self.double_buffered else 1

    @property
    def a_tile_bytes(self) -> int:
        return self.buffer_copies * self.tile_m * self.tile_k * self.operand_bytes

    @property
    def b_tile_bytes(self) -> int:
        return self.buffer_copies * self.tile_k * self.tile_n * self.operand_bytes

    @property
    def accumulator_tile_bytes(self) -> int:
        return self.tile_m * self.tile_n * self.accumulator_bytes

    @property
    def operand_tile_bytes(self) -> int:
        return self.a_tile_bytes + self.b_tile_bytes

    @property
    def live_bytes(self) -> int:
        return self.operand_tile_bytes + self.accumulator_tile_bytes

    def fits(self, capacity: int) -> bool:
        """Whether every live buffer fits in `capacity` bytes; equality fits."""
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0:
            raise ValueError(f"capacity must be a non-negative integer of bytes, got {capacity!r}")
        return self.live_bytes <= capacity

    # Matrix sizes.
    @property
    def a_bytes(self) -> int:
        return self.m * self.k * self.operand_bytes

    @property
    def a_elements(self) -> int:
        return self.m * self.k

    @property
    def b_elements(self) -> int:
        return self.k * self.n

    @property
    def c_elements(self) -> int:
        return self.m * self.n

    # Element moves with the tiling.
    @property
    def a_moves(self) -> int:
        return self.a_elements * self.tiles_n

    @property
    def b_moves(self) -> int:
        return self.b_elements * self.tiles_m

    @property
    def tiled_moves(self) -> int:
        return self.a_moves + self.b_moves + self.c_elements

    @property
    def global_loads_per_mac(self) -> float:
        return 1 / self.tile_n + 1 / self.tile_m

    # Single-cell loop orders: one value held per cell, everything else streams per MAC.
    @property
    def partial_sum_moves(self) -> int:
        return 2 * self.macs

    @property
    def a_stationary_moves(self) -> int:
        return self.a_elements + self.macs + self.partial_sum_moves

    @property
    def output_stationary_moves(self) -> int:
        return 2 * self.macs + self.c_elements

    @property
    def b_stationary_moves(self) -> int:
        return self.b_elements + self.macs + self.partial_sum_moves

    def row_b_reads(self, cells: int) -> int:
        """B reads when each B value passes along a row of `cells` cells holding A values.

        Integer division, as in the reference: exact only for complete sharing groups.
        """
        require_positive_int("cells", cells)
        return self.macs // cells

    def as_dict(self, capacity: int | None = None, cells: int | None = None) -> dict[str, object]:
        """Inputs and every derived member; fits/row_b_reads only when their argument is given."""
        out: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update({name: getattr(self, name) for name in DERIVED_MEMBERS})
        if capacity is not None:
            out["fits"] = self.fits(capacity)
        if cells is not None:
            out["row_b_reads"] = self.row_b_reads(cells)
        return out


# The reference's named scenario (Matmul4096Fp16Tile128): a 4096^3 product in fp16 operands
# with fp32 accumulators, 128 x 128 x 128 tiles, single-buffered. Its tile intensity is 64.
DEFAULT_SCENARIO = MatmulTile(
    m=4096,
    n=4096,
    k=4096,
    tile_m=128,
    tile_n=128,
    tile_k=128,
    operand_bytes=2,
    accumulator_bytes=4,
)
