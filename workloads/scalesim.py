"""SCALE-Sim topology CSVs, both of its formats, read with SCALE-Sim's own meaning of each column.

The convolution format (`Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width,
Channels, Num Filter, Strides`) and the GEMM format (`Layer, M, N, K`), as SCALE-Sim 3.0 reads
them in scalesim/topology_utils.py (`load_arrays_conv`, `load_arrays_gemm`,
`topo_calc_hyperparams`) and lowers them in scalesim/compute/operand_matrix.py
(github.com/scalesim-project/scale-sim-v3; the same code as the PyPI package scalesim 3.0.0):

* the IFMAP is taken as given (no padding: a topology lists the padded input if it wants one);
  one stride applies to both directions, unless the header names a ninth column `Stride width`
  (as SCALE-Sim writes a topology it saves), which then gives the stride across;
* the output is E_h x E_w with E_h = ceil((H - R + S) / S), E_w = ceil((W - R_w + S) / S):
  SCALE-Sim's formula, which counts a last window that runs past the edge (224, 7 x 7, stride 2
  gives 110, not 109);
* the layer is the GEMM of its im2col operand matrices: M = E_h E_w (output pixels per filter),
  K = filter height x filter width x channels (the window), N = filters;
* a layer whose name contains `DP` is depthwise: SCALE-Sim runs it as one layer per channel, each
  of one channel, so it is one GEMM of K = filter height x width, run `channels` times;
* the GEMM format's columns are M, N, K in that order; a row is the GEMM M x K x N.

Files as SCALE-Sim's repository publishes them are read: other columns past the eighth
(annotations, a sparsity ratio, a batch size) are ignored, and so are blank rows, rows of empty cells, a missing trailing
comma, a byte-order mark and CRLF line ends; the header's several spellings are recognised
(CONV_WORDS). Same-shape layers merge into one weighted GEMM.
A number is plain ASCII decimal digits (no '_' separators, signs other than '-', or other
scripts' digits) and at most MAX_DIM, the int64 limit every workload's sizes keep.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from workloads.formats import WorkloadFormat
from workloads.layers import LayerGemm, merge
from workloads.model import Workload, WorkloadError
from workloads.text import read_text
from workloads.validation import MAX_DIM, validate_workload

if TYPE_CHECKING:  # numpy stays out of the command line's start-up
    from simcore.systolic.scalesim_layer import ScalesimLayer

CONV_COLUMNS: tuple[str, ...] = (
    "Layer name",
    "IFMAP Height",
    "IFMAP Width",
    "Filter Height",
    "Filter Width",
    "Channels",
    "Num Filter",
    "Strides",
)
GEMM_COLUMNS: tuple[str, ...] = ("Layer", "M", "N", "K")
# SCALE-Sim reads the columns by position and skips the header, and its published files spell
# the header several ways ('Layer', 'L', 'Num Filters', 'Channel', 'IFMAP Width' twice): a header
# is a topology's when its first cell names the layer and each next cell holds its column's word.
CONV_WORDS: tuple[str, ...] = ("ifmap", "ifmap", "filter", "filter", "channel", "filter", "stride")
GEMM_WORDS: tuple[str, ...] = ("m", "n", "k")
# int() would also take '1_000', '+5' and other scripts' digits
_INTEGER = re.compile(r"-?[0-9]+", re.ASCII)


def _rows(text: str) -> list[tuple[int, list[str]]]:
    """(line number, cells) of every line that says something; comments start with '#'."""
    out = []
    for number, line in enumerate(io.StringIO(text.lstrip("\ufeff")).read().splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = [cell.strip() for cell in next(csv.reader([line]))]
        if any(cells):
            out.append((number, cells))
    return out


def topology_kind(text: str) -> str | None:
    """'conv' or 'gemm' when the header is a SCALE-Sim topology's, else None."""
    rows = _rows(text)
    if not rows:
        return None
    header = _header(rows)
    if header[0] != "l" and not header[0].startswith("layer"):
        return None
    conv = header[1 : 1 + len(CONV_WORDS)]
    if len(conv) == len(CONV_WORDS) and all(w in c for w, c in zip(CONV_WORDS, conv)):
        return "conv"
    if tuple(header[1 : 1 + len(GEMM_WORDS)]) == GEMM_WORDS:
        return "gemm"
    return None


def _header(rows: list[tuple[int, list[str]]]) -> list[str]:
    return [" ".join(cell.split()).lower() for cell in rows[0][1]]


def _stride_width(header: list[str]) -> bool:
    """Whether a convolution header's ninth column is the stride width (SCALE-Sim writes
    'Stride height, Stride width' when it saves a topology; 2.0 reads the ninth value so)."""
    return len(header) > len(CONV_COLUMNS) and "stride" in header[len(CONV_COLUMNS)]


def is_topology(text: str) -> bool:
    return topology_kind(text) is not None


def output_size(ifmap: int, filt: int, stride: int) -> int:
    """SCALE-Sim's output rows (or columns): ceil((ifmap - filter + stride) / stride)."""
    return -(-(ifmap - filt + stride) // stride)


def _ints(cells: list[str], names: tuple[str, ...], where: str) -> list[int]:
    values = []
    for cell, name in zip(cells, names):
        if not _INTEGER.fullmatch(cell):
            raise WorkloadError(f"{where}: {name} must be a whole number, got {cell!r}")
        digits = cell.lstrip("-").lstrip("0")
        if cell.startswith("-") or not digits:
            shown = cell if len(cell) <= 24 else f"{cell[:21]}..."
            raise WorkloadError(f"{where}: {name} must be positive, got {shown}")
        # counted before int(): a huge digit string has no int
        if len(digits) > len(str(MAX_DIM)) or int(digits) > MAX_DIM:
            shown = digits if len(digits) <= 24 else f"{digits[:6]}... ({len(digits)} digits)"
            raise WorkloadError(f"{where}: {name} {shown} is too large (at most {MAX_DIM})")
        values.append(int(digits))
    return values


def conv_layer(name: str, values: list[int], where: str) -> LayerGemm:
    """One convolution row (IFMAP h, w, filter h, w, channels, filters, stride, and the stride
    width when it differs) as its GEMM."""
    ifmap_h, ifmap_w, filt_h, filt_w, channels, filters, stride, *width = values
    if filt_h > ifmap_h or filt_w > ifmap_w:
        raise WorkloadError(
            f"{where}: the {filt_h}x{filt_w} filter is larger than the {ifmap_h}x{ifmap_w} IFMAP"
        )
    stride_w = width[0] if width else stride
    pixels = output_size(ifmap_h, filt_h, stride) * output_size(ifmap_w, filt_w, stride_w)
    if "DP" in name:  # SCALE-Sim: one single-channel layer per channel
        return LayerGemm(name, pixels, filt_h * filt_w, filters, channels, "Conv-DP")
    return LayerGemm(name, pixels, filt_h * filt_w * channels, filters, 1, "Conv")


def _cells(
    rows: list[tuple[int, list[str]]], kind: str, path: Path
) -> list[tuple[str, list[int], str]]:
    """(layer name, sizes, where) of every row."""
    columns = CONV_COLUMNS if kind == "conv" else GEMM_COLUMNS
    width = kind == "conv" and _stride_width(_header(rows))
    found = []
    for number, cells in rows[1:]:
        where = f"topology {path}, line {number}"
        if len(cells) < len(columns) or not all(cells[: len(columns)]):
            raise WorkloadError(
                f"{where}: expected {len(columns)} columns "
                f"({', '.join(columns)}), got {sum(1 for c in cells if c)}"
            )
        name, values = cells[0], _ints(cells[1 : len(columns)], columns[1:], where)
        if width and len(cells) > len(columns) and cells[len(columns)]:
            values += _ints([cells[len(columns)]], ("Stride width",), where)
        found.append((name, values, where))
    return found


def _layers(rows: list[tuple[int, list[str]]], kind: str, path: Path) -> list[LayerGemm]:
    found = []
    for name, values, where in _cells(rows, kind, path):
        if kind == "conv":
            found.append(conv_layer(name, values, where))
        else:
            m, n, k = values
            found.append(LayerGemm(name, m, k, n, 1, "GEMM"))
    return found


def _kind(text: str, path: Path) -> str:
    kind = topology_kind(text)
    if kind is None:
        raise WorkloadError(
            f"topology {path}: the header is neither SCALE-Sim's convolution format "
            f"({', '.join(CONV_COLUMNS)}) nor its GEMM format ({', '.join(GEMM_COLUMNS)})"
        )
    return kind


def scalesim_layers(text: str, path: Path) -> list[tuple[ScalesimLayer, int]]:
    """Every row as SCALE-Sim runs it, in order, with how many times it runs: a depthwise
    ('DP') row runs once per channel, each run of one channel. For SCALE-Sim's memory model
    (simcore.systolic.scalesim_memory), which needs a convolution's geometry, not its GEMM."""
    from simcore.systolic.scalesim_layer import ScalesimLayer

    kind = _kind(text, path)
    out = []
    for name, values, where in _cells(_rows(text), kind, path):
        if kind == "gemm":
            m, n, k = values
            out.append((ScalesimLayer.gemm(name, m, n, k), 1))
            continue
        conv_layer(name, values, where)  # the same checks as the workload's
        height, width, filt_h, filt_w, channels, filters, stride, *across = values
        runs = channels if "DP" in name else 1
        layer = ScalesimLayer(
            name,
            height,
            width,
            filt_h,
            filt_w,
            1 if "DP" in name else channels,
            filters,
            stride,
            across[0] if across else stride,
        )
        out.append((layer, runs))
    if not out:
        raise WorkloadError(f"topology {path} is empty: it needs at least one layer")
    return out


def read_topology(text: str, path: Path) -> Workload:
    """A SCALE-Sim topology (either format) as a workload; WorkloadError with a one-line reason."""
    kind = _kind(text, path)
    rows = _rows(text)
    found = _layers(rows, kind, path)
    if not found:
        raise WorkloadError(f"topology {path} is empty: it needs at least one layer")
    fmt = "convolution" if kind == "conv" else "GEMM"
    summary = (f"SCALE-Sim {fmt} topology: {len(found)} layers",)
    workload = Workload(path.stem, merge(found, f"topology {path}"), summary)
    return validate_workload(workload, f"topology {path}")


def _sniff(path: Path) -> bool:
    """A .csv is a topology when its header is SCALE-Sim's (an unreadable file is not claimed:
    the CSV reader names what is wrong with it)."""
    try:
        return is_topology(read_text(path))
    except WorkloadError:
        return False


def _read(path: Path, input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Workload:
    return read_topology(read_text(path), path)


FORMAT = WorkloadFormat(
    "scalesim", (".csv",), _read, "SCALE-Sim topology", "a SCALE-Sim topology", sniff=_sniff
)
