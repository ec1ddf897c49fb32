"""A layer as SCALE-Sim 3.0 runs it: its operand address matrices and its folds.

SCALE-Sim lowers every layer to the GEMM of its im2col operand matrices, each entry an address
(scalesim/compute/operand_matrix.py): the IFMAP matrix (output pixels x window, -1 where a
window runs past the input's edge), the filter matrix (window x filters) and the OFMAP matrix
(output pixels x filters). A GEMM row `M, N, K` is the layer of an M x K input, one 1 x K filter
per output column, one channel, stride 1 (scalesim/topology_utils.py, load_arrays_gemm).

Each dataflow maps two of the GEMM's dimensions on the array's rows and columns and cuts them
into folds (column folds outer, row folds inner); the memory model reads the operands fold by
fold (simcore.systolic.scalesim_demand).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.checks import ceil_div, require_positive_int

NULL = -1  # SCALE-Sim's "no request" entry


@dataclass(frozen=True)
class ScalesimLayer:
    """One row of a SCALE-Sim topology file, as SCALE-Sim read it."""

    name: str
    ifmap_height: int
    ifmap_width: int
    filter_height: int
    filter_width: int
    channels: int
    filters: int
    stride_height: int = 1
    stride_width: int = 1

    def __post_init__(self) -> None:
        for key in (
            "ifmap_height",
            "ifmap_width",
            "filter_height",
            "filter_width",
            "channels",
            "filters",
            "stride_height",
            "stride_width",
        ):
            require_positive_int(f"layer {self.name!r} {key.replace('_', ' ')}", getattr(self, key))
        if self.filter_height > self.ifmap_height or self.filter_width > self.ifmap_width:
            raise ValueError(f"layer {self.name!r}: the filter is larger than the input")

    @classmethod
    def gemm(cls, name: str, m: int, n: int, k: int) -> "ScalesimLayer":
        """A GEMM-format row `name, M, N, K` (SCALE-Sim's column order)."""
        return cls(name, m, k, 1, k, 1, n)

    @property
    def ofmap_height(self) -> int:
        # SCALE-Sim's formula: a last window that runs past the edge still counts
        return ceil_div(
            self.ifmap_height - self.filter_height + self.stride_height, self.stride_height
        )

    @property
    def ofmap_width(self) -> int:
        return ceil_div(self.ifmap_width - self.filter_width + self.stride_width, self.stride_width)

    @property
    def pixels(self) -> int:
        """M: output pixels per filter."""
        return self.ofmap_height * self.ofmap_width

    @property
    def window(self) -> int:
        """K: filter height x width x channels."""
        return self.filter_height * self.filter_width * self.channels


@dataclass(frozen=True)
class Offsets:
    """Where each operand's addresses start (the .cfg's IfmapOffset, FilterOffset, OfmapOffset)."""

    ifmap: int = 0
    filter: int = 10_000_000
    ofmap: int = 20_000_000


def ifmap_addresses(layer: ScalesimLayer, offset: int) -> np.ndarray:
    """The M x K IFMAP matrix: row i is output pixel i's window, -1 past the input's edge."""
    i = np.arange(layer.pixels, dtype=np.int64)[:, None]
    j = np.arange(layer.window, dtype=np.int64)[None, :]
    in_row = (i // layer.ofmap_width) * layer.stride_height
    in_col = (i % layer.ofmap_width) * layer.stride_width
    tap_row, rest = np.divmod(j, layer.filter_width * layer.channels)
    tap_col, channel = np.divmod(rest, layer.channels)
    row, col = in_row + tap_row, in_col + tap_col
    valid = (row < layer.ifmap_height) & (col < layer.ifmap_width)
    address = (row * layer.ifmap_width + col) * layer.channels + channel + offset
    return np.where(valid, address, NULL)


def filter_addresses(layer: ScalesimLayer, offset: int) -> np.ndarray:
    """The K x N filter matrix: filter j's window is column j."""
    i = np.arange(layer.window, dtype=np.int64)[:, None]
    j = np.arange(layer.filters, dtype=np.int64)[None, :]
    return j * layer.window + i + offset


def ofmap_addresses(layer: ScalesimLayer, offset: int) -> np.ndarray:
    """The M x N OFMAP matrix."""
    i = np.arange(layer.pixels, dtype=np.int64)[:, None]
    j = np.arange(layer.filters, dtype=np.int64)[None, :]
    return layer.filters * i + j + offset


@dataclass(frozen=True)
class Folding:
    """How a dataflow folds a layer on an R x C array: the dimension on the rows (`sr`), on the
    columns (`sc`), the one that streams (`t`), and the folds of each."""

    dataflow: str
    rows: int
    cols: int
    sr: int
    sc: int
    t: int

    @property
    def row_folds(self) -> int:
        return ceil_div(self.sr, self.rows)

    @property
    def col_folds(self) -> int:
        return ceil_div(self.sc, self.cols)

    @property
    def folds(self) -> int:
        return self.row_folds * self.col_folds

    @property
    def rows_per_fold(self) -> int:
        """Rows of every fold's demand matrices (cycles per fold)."""
        if self.dataflow == "os":
            return self.t + self.rows + self.cols - 2
        return 2 * self.rows + self.cols + self.t - 2

    @property
    def demand_rows(self) -> int:
        return self.folds * self.rows_per_fold


def folding(layer: ScalesimLayer, dataflow: str, rows: int, cols: int) -> Folding:
    """ws: window on rows, filters on columns, pixels stream; os: pixels on rows, filters on
    columns, window streams; is: window on rows, pixels on columns, filters stream."""
    m, k, n = layer.pixels, layer.window, layer.filters
    if dataflow == "ws":
        return Folding("ws", rows, cols, k, n, m)
    if dataflow == "os":
        return Folding("os", rows, cols, m, n, k)
    if dataflow == "is":
        return Folding("is", rows, cols, k, m, n)
    raise ValueError(f"dataflow must be one of ws, os, is, got {dataflow!r}")
