"""A vector operation's reduced stand-in, for verifying programs too large to run functionally
("verified-reduced").

The reduced operation keeps the kind, its options, the schedule and the machine, and:
  * the same edges: the last row tile and the last column tile as partial as the full one's;
  * the same kinds of visits: a band's first tile, its last, a padded one, and a middle run
    long enough for every ring to wrap several times (twelve column tiles; a resident band keeps
    all of its own, as its slots depend on them);
  * the same kinds of band groups: three full groups at least, then the full operation's partial
    group if it has one; two matrices where the program runs matrix by matrix;
  * under a causal mask, the same offset and the same kinds of band. A band's visits depend
    only on where its diagonal ends relative to its first tile (clipped at three tiles) and to
    the last column (clipped at two either side: masked tiles after it, the diagonal on the
    padded last tile, rows wholly visible). Columns are cut to twelve past the first band's
    diagonal and the bands near the last column move up by as many, so a band past the columns
    exists in the stand-in only where the full operation has one.
Verifying it (results, hazard replay, timings) checks every kind of visit and group the full
program runs, not the full program: the label says so. The full program's timing needs no such
stand-in: the tree is timed exactly at any size.
"""

from __future__ import annotations

import dataclasses

from simcore.ga1.vector.ops import VectorOp
from simcore.ga1.vector.params import VectorParams

MOST_VERIFIED = 300_000  # instructions verify() runs functionally before it reduces
COLUMN_TILES = 12  # a reduced row's tiles


def _keep(tiles: int, full_tiles: int, size: int, T: int) -> int:
    """A size of `tiles` tiles whose last tile is as partial as the full size's."""
    if tiles >= full_tiles:
        return size
    return (tiles - 1) * T + size - (full_tiles - 1) * T


def reduced_op(op: VectorOp, params: VectorParams, T: int) -> VectorOp:
    """The reduced stand-in of `op` under `params` with tiles of T (see the module's note)."""
    rows = op.rows if op.per_matrix else op.batch * op.rows
    Rt, Ct = -(-rows // T), -(-op.cols // T)
    resident = params.reduction == "resident" and op.family == "rows"
    if op.causal:
        cols_tiles, rows_tiles = _causal_tiles(Rt, Ct, op.causal_offset, T, resident)
    else:
        cols_tiles = Ct if resident else min(Ct, COLUMN_TILES)
        group = params.group
        rows_tiles = min(Rt, 3 * group + Rt % group)
    return dataclasses.replace(
        op,
        rows=_keep(rows_tiles, Rt, rows, T),
        cols=_keep(cols_tiles, Ct, op.cols, T),
        batch=min(op.batch, 2) if op.per_matrix else 1,
    )


def _causal_tiles(Rt: int, Ct: int, offset: int, T: int, resident: bool) -> tuple[int, int]:
    """Column and row tiles of a causal stand-in: band k's diagonal ends in column tile
    k + first - 1, and it reaches the last column from band `reach` = Ct - first on."""
    first = 1 + (T - 1 + offset) // T  # tiles the first band sees
    cols_tiles = Ct if resident else min(Ct, first + COLUMN_TILES)
    cut = Ct - cols_tiles
    reach = cols_tiles - first  # in the stand-in
    if Rt - 1 - (reach + cut) <= -2:  # no band's diagonal comes near the last column
        return cols_tiles, min(Rt, max(4, reach - 1))
    return cols_tiles, min(Rt - cut, max(4, reach + 3))
