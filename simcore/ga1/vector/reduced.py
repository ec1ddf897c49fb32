"""A vector operation's reduced stand-in, for verifying programs too large to run functionally
("verified-reduced").

The reduced operation keeps the kind, its options, the schedule and the machine, and:
  * the same edges: the last row tile and the last column tile as partial as the full one's;
  * the same kinds of visits: a band's first tile, its last, a padded one, and a middle run
    long enough for every ring to wrap several times (twelve column tiles; a resident band keeps
    all of its own, as its slots depend on them);
  * the same kinds of band groups: three full groups at least, then the full operation's partial
    group if it has one; two matrices where the program runs matrix by matrix;
  * under a causal mask, the same offset, bands whose diagonal lies inside the row and bands
    whose row is wholly visible, with a middle run before the diagonal; where every band is
    kept, every column tile they see (a cut would make a seen tile the partial one).
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
    if op.causal:
        first = 1 + (T - 1 + op.causal_offset) // T  # tiles the first band sees
        cols_tiles = min(Ct, first + COLUMN_TILES)
        rows_tiles = min(Rt, max(1, cols_tiles - first + 3))
        if rows_tiles == Rt:  # every band kept: keep every tile they see, and one unseen
            cols_tiles = min(Ct, max(cols_tiles, (rows - 1 + op.causal_offset) // T + 2))
    else:
        resident = params.reduction == "resident" and op.family == "rows"
        cols_tiles = Ct if resident else min(Ct, COLUMN_TILES)
        group = params.group
        rows_tiles = min(Rt, 3 * group + Rt % group)
    return dataclasses.replace(
        op,
        rows=_keep(rows_tiles, Rt, rows, T),
        cols=_keep(cols_tiles, Ct, op.cols, T),
        batch=min(op.batch, 2) if op.per_matrix else 1,
    )
