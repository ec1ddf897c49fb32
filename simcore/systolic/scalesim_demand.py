"""SCALE-Sim 3.0's prefetch and demand matrices, built with numpy.

Read off scalesim/compute/systolic_compute_{ws,os,is}.py. Every fold (column folds outer, row
folds inner) has the same number of demand rows, one row per cycle, and one demand matrix per
operand: the fold's block of the operand matrix, padded with -1 to the array, flipped upside down
for the operands loaded into the array (ws filter, is IFMAP, os results), with rows of -1 before
and after, and skewed (column j delayed by j rows) where the array's pipeline fills.

The prefetch order of IFMAP and filter (what the read buffers fetch from DRAM, in order) stacks
the operand's folds along one fold index and, for the skewed operands, reads the stack by
anti-diagonals (SCALE-Sim's fix for the skew's temporal locality).

`FoldSpec` describes one operand's fold; `fold_block` cuts it, `fold_demand` lays it out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.systolic.scalesim_layer import NULL, Folding


@dataclass(frozen=True)
class FoldSpec:
    """How one operand's fold becomes its demand matrix: the block is padded to `pad_rows` x
    `pad_cols` (0: no padding on that side), flipped if `flip`, framed by `prefix` and `suffix`
    rows of -1, skewed if `skew`."""

    pad_rows: int
    pad_cols: int
    flip: bool
    prefix: int
    suffix: int
    skew: bool


def specs(f: Folding) -> dict[str, FoldSpec]:
    r, c, t = f.rows, f.cols, f.t
    if f.dataflow == "ws":
        return {
            "ifmap": FoldSpec(0, r, False, r, c - 1, True),
            "filter": FoldSpec(r, c, True, 0, r + c + t - 2, False),
            "ofmap": FoldSpec(0, c, False, 2 * r - 1, 0, True),
        }
    if f.dataflow == "os":
        return {
            "ifmap": FoldSpec(0, r, False, 0, c - 1, True),
            "filter": FoldSpec(0, c, False, 0, r - 1, True),
            "ofmap": FoldSpec(r, c, True, t - 1, 0, True),
        }
    return {  # is
        "ifmap": FoldSpec(r, c, True, 0, r + c + t - 2, False),
        "filter": FoldSpec(0, r, False, r, c - 1, True),
        "ofmap": FoldSpec(0, c, False, 2 * r - 1, 0, True),
    }


def _span(fold: int, side: int, size: int) -> slice:
    return slice(fold * side, min(fold * side + side, size))


def fold_block(
    f: Folding, operand: str, matrix: np.ndarray, col_fold: int, row_fold: int
) -> np.ndarray:
    """The part of an operand matrix (IFMAP M x K, filter K x N, OFMAP M x N) a fold reads,
    oriented as the array sees it, before padding."""
    r, c = f.rows, f.cols
    if f.dataflow == "ws":
        if operand == "ifmap":
            return matrix[:, _span(row_fold, r, f.sr)]
        if operand == "filter":
            return matrix[_span(row_fold, r, f.sr), _span(col_fold, c, f.sc)]
        return matrix[:, _span(col_fold, c, f.sc)]
    if f.dataflow == "os":
        if operand == "ifmap":
            return matrix.T[:, _span(row_fold, r, f.sr)]
        if operand == "filter":
            return matrix[:, _span(col_fold, c, f.sc)]
        return matrix[_span(row_fold, r, f.sr), _span(col_fold, c, f.sc)]
    if operand == "ifmap":  # is
        return matrix.T[_span(row_fold, r, f.sr), _span(col_fold, c, f.sc)]
    if operand == "filter":
        return matrix[_span(row_fold, r, f.sr), :].T
    return matrix[_span(col_fold, c, f.sc), :].T


def pad(block: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The block with -1 appended below and to the right up to rows x cols (0: keep that side)."""
    h, w = block.shape
    out = np.full((max(rows, h), max(cols, w)), NULL, dtype=np.int64)
    out[:h, :w] = block
    return out


def skewed(matrix: np.ndarray) -> np.ndarray:
    """Column j delayed by j rows: (rows + cols - 1) x cols, -1 outside."""
    h, w = matrix.shape
    out = np.full((h + w - 1, w), NULL, dtype=np.int64)
    rows = np.arange(h)[:, None] + np.arange(w)[None, :]
    out[rows, np.arange(w)[None, :]] = matrix
    return out


def fold_demand(spec: FoldSpec, block: np.ndarray) -> np.ndarray:
    """One fold's demand matrix for one operand."""
    matrix = pad(block, spec.pad_rows, spec.pad_cols)
    if spec.flip:
        matrix = matrix[::-1]
    width = matrix.shape[1]
    matrix = np.concatenate(
        [
            np.full((spec.prefix, width), NULL, dtype=np.int64),
            matrix,
            np.full((spec.suffix, width), NULL, dtype=np.int64),
        ]
    )
    return skewed(matrix) if spec.skew else matrix


def demand_matrix(f: Folding, operand: str, matrix: np.ndarray) -> np.ndarray:
    """The whole demand matrix of one operand: every fold's, column folds outer."""
    spec = specs(f)[operand]
    parts = [
        fold_demand(spec, fold_block(f, operand, matrix, fc, fr))
        for fc in range(f.col_folds)
        for fr in range(f.row_folds)
    ]
    return np.concatenate(parts)


# The operands each read buffer stacks by row folds (the others by column folds), and those it
# reads row by row (the others by anti-diagonals).
_STACKED_BY_ROW_FOLDS = {("ws", "ifmap"), ("os", "ifmap"), ("is", "filter")}
_READ_BY_ROWS = {("ws", "filter"), ("is", "ifmap")}


def _prefetch_blocks(f: Folding, operand: str, matrix: np.ndarray) -> list[np.ndarray]:
    if (f.dataflow, operand) in _STACKED_BY_ROW_FOLDS:
        return [fold_block(f, operand, matrix, 0, fr) for fr in range(f.row_folds)]
    # column folds span the whole window: K rows of filters (ws, os) or of pixels (is)
    whole = matrix if (f.dataflow, operand) != ("is", "ifmap") else matrix.T
    return [whole[:, _span(fc, f.cols, f.sc)] for fc in range(f.col_folds)]


def prefetch_length(f: Folding, operand: str, matrix_shape: tuple[int, int]) -> int:
    """len(prefetch_order(f, operand, matrix)), without building it."""
    by_rows = (f.dataflow, operand) in _STACKED_BY_ROW_FOLDS
    width = f.rows if by_rows else f.cols
    height = {
        ("ws", "ifmap"): matrix_shape[0],
        ("os", "ifmap"): matrix_shape[1],
        ("is", "filter"): matrix_shape[1],
        ("ws", "filter"): matrix_shape[0],
        ("os", "filter"): matrix_shape[0],
        ("is", "ifmap"): matrix_shape[1],
    }[(f.dataflow, operand)]
    return (f.row_folds if by_rows else f.col_folds) * height * width


def prefetch_order(f: Folding, operand: str, matrix: np.ndarray) -> np.ndarray:
    """The read buffer's fetch order of an input operand, -1 entries included."""
    width = specs(f)[operand].pad_cols
    stack = np.concatenate([pad(b, 0, width) for b in _prefetch_blocks(f, operand, matrix)])
    if (f.dataflow, operand) in _READ_BY_ROWS:
        return stack.reshape(-1)
    # by anti-diagonals, each from its bottom-left entry up: the skewed stack, row by row
    h, w = stack.shape
    out = np.full((h + w - 1) * w, -2, dtype=np.int64)
    r, c = np.arange(h)[:, None], np.arange(w)[None, :]
    out[(r + c) * w + c] = stack
    return out[out != -2]
