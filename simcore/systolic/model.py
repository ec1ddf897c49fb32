"""Systolic designs: the array, the dataflow, the mapping, the modelling assumptions, the HBM
link of the stationary tiles; the tiles a GEMM is cut into, and the buffer traffic.

C = A B with A (M x K) and B (K x N). Each dataflow keeps one matrix in the PEs and streams the
other two operands past it; the array's rows and columns cover two GEMM dimensions and the
third streams:

  dataflow   stationary in the PEs       array rows   array cols   stream (length)
  ws         a K x N tile of B (weights)  K            N            the M rows of A
  is         a K x M tile of A^T (inputs) K            M            the N columns of B
  os         an M x N tile of C (results) M            N            the K products

The stationary matrix is cut into tiles of at most r x c, where r x c is the mapped sub-array
(`Mapping`, r <= R and c <= C; the other PEs idle). SCALE-Sim calls a tile a fold. Tile order:
`col-outer` runs the column folds outermost and the row folds inside (SCALE-Sim's order; ws:
the K tiles of one column tile are consecutive), `row-outer` the other way round.

`Assumptions` are the modelling choices, named as users know them (SCALE-Sim 3.0's in brackets):
  * shadow: a second register per PE, so the next tile's stationary data moves in (ws, is) or
    the last tile's results move out (os) while the array computes [off];
  * edges: an edge tile smaller than the sub-array either bypasses the unused rows and columns
    or is padded with zeros to the full sub-array, paying its fill and drain [pad];
  * drain: os results are shifted out of the array, one row per cycle, and the cycles are
    charged; or they leave at no cost [not charged];
  * folds: consecutive tiles overlap in the array as far as the data allow, or each tile starts
    only when the previous one has finished [in sequence].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from simcore.checks import ceil_div, require_positive_int
from simcore.shape import Shape

Dataflow = Literal["ws", "os", "is"]
DATAFLOWS: tuple[str, ...] = ("ws", "os", "is")
ORDERS: tuple[str, ...] = ("col-outer", "row-outer")
EDGES: tuple[str, ...] = ("bypass", "pad")
FOLDS: tuple[str, ...] = ("overlap", "sequence")


def _require_choice(name: str, value: object, options: tuple[str, ...]) -> None:
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}, got {value!r}")


@dataclass(frozen=True)
class SystolicArray:
    """An R x C grid of processing elements."""

    rows: int
    cols: int

    def __post_init__(self) -> None:
        require_positive_int("array rows", self.rows)
        require_positive_int("array cols", self.cols)

    @property
    def pes(self) -> int:
        return self.rows * self.cols

    def __str__(self) -> str:
        return f"{self.rows}x{self.cols}"


@dataclass(frozen=True)
class Mapping:
    """The r x c sub-array the GEMM is mapped on and the order its tiles run in."""

    rows: int
    cols: int
    order: str = "col-outer"

    def __post_init__(self) -> None:
        require_positive_int("mapping rows", self.rows)
        require_positive_int("mapping cols", self.cols)
        _require_choice("tile order", self.order, ORDERS)

    def __str__(self) -> str:
        return f"{self.rows}x{self.cols} {self.order}"


@dataclass(frozen=True)
class Assumptions:
    """How the model times the array; see the module docstring."""

    shadow: bool = True
    edges: str = "bypass"
    drain: bool = True
    folds: str = "overlap"

    def __post_init__(self) -> None:
        for name in ("shadow", "drain"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        _require_choice("edges", self.edges, EDGES)
        _require_choice("folds", self.folds, FOLDS)

    @property
    def padded(self) -> bool:
        return self.edges == "pad"

    @property
    def in_sequence(self) -> bool:
        return self.folds == "sequence"

    def describe(self) -> str:
        return (
            f"shadow registers {'on' if self.shadow else 'off'}, edge tiles {'padded' if self.padded else 'bypassed'}, "
            f"os drain {'charged' if self.drain else 'not charged'}, folds "
            f"{'in sequence' if self.in_sequence else 'overlapped'}"
        )


DEFAULT_ASSUMPTIONS = Assumptions()
# SCALE-Sim 3.0: no shadow registers, every fold padded to the full array and run on its own,
# no cycles to drain os results (its demand matrices, compute/systolic_compute_{ws,os,is}.py).
SCALESIM = Assumptions(shadow=False, edges="pad", drain=False, folds="sequence")
PRESETS: dict[str, Assumptions] = {"default": DEFAULT_ASSUMPTIONS, "scalesim": SCALESIM}


@dataclass(frozen=True)
class HbmLink:
    """The stationary tiles' path to off-chip memory: ws fetches weight tiles and is input tiles
    into `buffers` on-chip buffers before they load; os writes each result tile back from one of
    `buffers` output buffers. None words per cycle: the tiles stay on chip (no link)."""

    hbm_words_per_cycle: float | int | None = None
    buffers: int = 2

    def __post_init__(self) -> None:
        w = self.hbm_words_per_cycle
        if w is not None:
            if isinstance(w, bool) or not isinstance(w, (int, float)):
                raise ValueError(f"hbm_words_per_cycle must be a number or None, got {w!r}")
            if not math.isfinite(w) or w <= 0:
                raise ValueError(f"hbm_words_per_cycle must be positive and finite, got {w}")
        if isinstance(self.buffers, bool) or self.buffers not in (1, 2):
            raise ValueError(f"buffers must be 1 or 2, got {self.buffers!r}")

    @property
    def on_chip(self) -> bool:
        return self.hbm_words_per_cycle is None

    def cycles(self, words: int) -> int:
        """Whole cycles to move `words`; a float rate is taken as the decimal it prints as."""
        if self.hbm_words_per_cycle is None:
            return 0
        rate = Fraction(str(self.hbm_words_per_cycle))
        return math.ceil(Fraction(words) / rate)


@dataclass(frozen=True)
class SystolicDesign:
    """Everything that fixes the timing of a GEMM: the array, its dataflow, the mapping (None:
    the whole array, column folds outer), the modelling assumptions and the HBM link."""

    array: SystolicArray
    dataflow: str = "ws"
    mapping: Mapping | None = None
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS
    hbm: HbmLink = HbmLink()

    def __post_init__(self) -> None:
        _require_choice("dataflow", self.dataflow, DATAFLOWS)
        m = self.mapping
        if m is not None and (m.rows > self.array.rows or m.cols > self.array.cols):
            raise ValueError(f"mapping {m.rows}x{m.cols} does not fit the {self.array} array")

    @property
    def used(self) -> Mapping:
        """The mapping in force."""
        return (
            self.mapping if self.mapping is not None else Mapping(self.array.rows, self.array.cols)
        )

    def with_mapping(self, mapping: Mapping | None) -> "SystolicDesign":
        return SystolicDesign(self.array, self.dataflow, mapping, self.assumptions, self.hbm)


@dataclass(frozen=True)
class Roles:
    """Which GEMM dimension each side of the array covers, and which one streams."""

    dataflow: str
    row_dim: int
    col_dim: int
    stream: int


def roles(dataflow: str, shape: Shape) -> Roles:
    m, k, n = shape.m, shape.k, shape.n
    if dataflow == "ws":
        return Roles("ws", k, n, m)
    if dataflow == "is":
        return Roles("is", k, m, n)
    if dataflow == "os":
        return Roles("os", m, n, k)
    raise ValueError(f"dataflow must be one of {', '.join(DATAFLOWS)}, got {dataflow!r}")


@dataclass(frozen=True)
class Tile:
    """Tile `index`: rows row0 .. row0+rows-1 and columns col0 .. col0+cols-1 of the stationary
    matrix (in the array's row and column dimensions), timed as span_rows x span_cols (the
    sub-array when edge tiles are padded, else the tile itself)."""

    index: int
    row0: int
    col0: int
    rows: int
    cols: int
    span_rows: int
    span_cols: int
    row_fold: int
    row_folds: int

    @property
    def words(self) -> int:
        return self.rows * self.cols

    @property
    def kind(self) -> tuple[int, int, int, int]:
        """Tiles of one kind are timed alike."""
        return (self.span_rows, self.span_cols, self.rows, self.cols)


def _extents(dim: int, side: int) -> list[tuple[int, int]]:
    return [(start, min(side, dim - start)) for start in range(0, dim, side)]


def tiles(design: SystolicDesign, shape: Shape) -> tuple[Tile, ...]:
    """The stationary tiles in run order."""
    role = roles(design.dataflow, shape)
    mapping = design.used
    row_parts = _extents(role.row_dim, mapping.rows)
    col_parts = _extents(role.col_dim, mapping.cols)
    pad = design.assumptions.padded
    pairs = (
        [(rp, cp) for cp in col_parts for rp in row_parts]
        if mapping.order == "col-outer"
        else [(rp, cp) for rp in row_parts for cp in col_parts]
    )
    out: list[Tile] = []
    for (r0, rn), (c0, cn) in pairs:
        out.append(
            Tile(
                index=len(out),
                row0=r0,
                col0=c0,
                rows=rn,
                cols=cn,
                span_rows=mapping.rows if pad else rn,
                span_cols=mapping.cols if pad else cn,
                row_fold=r0 // mapping.rows,
                row_folds=len(row_parts),
            )
        )
    return tuple(out)


def tile_count(design: SystolicDesign, shape: Shape) -> int:
    """len(tiles(design, shape)), without making them."""
    role, mapping = roles(design.dataflow, shape), design.used
    return ceil_div(role.row_dim, mapping.rows) * ceil_div(role.col_dim, mapping.cols)


@dataclass(frozen=True)
class Traffic:
    """On-chip buffer words moved by one GEMM. psum_writes are partial (not final) sums."""

    dataflow: str
    macs: int
    a_reads: int
    b_reads: int
    psum_writes: int
    psum_readbacks: int
    c_writes: int

    @property
    def total(self) -> int:
        return self.a_reads + self.b_reads + self.psum_writes + self.psum_readbacks + self.c_writes

    @property
    def words_per_mac(self) -> float:
        return self.total / self.macs

    @property
    def words_per_mac_exact(self) -> Fraction:
        return Fraction(self.total, self.macs)


def compulsory_words(shape: Shape) -> int:
    """Every word of A and B read once and of C written once: MK + KN + MN."""
    return shape.m * shape.k + shape.k * shape.n + shape.m * shape.n


def traffic(mapped: SystolicArray | Mapping, m: int, k: int, n: int, dataflow: str) -> Traffic:
    """Exact buffer traffic of C = A B on an r x c (sub-)array, tiles rounded up at the edges.
    Padding zeros are made in the array, never read from a buffer, so padding moves no words.

    ws: A streams once per column tile of B; B is read once; every K tile but the last writes
    partial sums, every K tile but the first reads them back; C is written once.
    is: the same with A and B exchanged: B streams once per column tile of A^T (M tile).
    os: each PE keeps one result of an r x c tile of C until it is complete; A is read once
    per column tile (N tile), B once per row tile (M tile), C written once.
    """
    for name, value in (("M", m), ("K", k), ("N", n)):
        require_positive_int(name, value)
    r, c = mapped.rows, mapped.cols
    macs, mn = m * k * n, m * n
    if dataflow == "ws":
        extra = ceil_div(k, r) - 1
        return Traffic("ws", macs, m * k * ceil_div(n, c), k * n, mn * extra, mn * extra, mn)
    if dataflow == "is":
        extra = ceil_div(k, r) - 1
        return Traffic("is", macs, m * k, k * n * ceil_div(m, c), mn * extra, mn * extra, mn)
    if dataflow == "os":
        return Traffic("os", macs, m * k * ceil_div(n, c), k * n * ceil_div(m, r), 0, 0, mn)
    raise ValueError(f"dataflow must be one of {', '.join(DATAFLOWS)}, got {dataflow!r}")


def design_traffic(design: SystolicDesign, shape: Shape) -> Traffic:
    return traffic(design.used, shape.m, shape.k, shape.n, design.dataflow)


def hbm_words(design: SystolicDesign, shape: Shape) -> int:
    """Words over the HBM link: every stationary tile once (0 without a link)."""
    if design.hbm.on_chip:
        return 0
    role = roles(design.dataflow, shape)
    return role.row_dim * role.col_dim
