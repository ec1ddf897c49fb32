"""A fused group's reduced stand-in, for verifying programs too large to run functionally
("verified-reduced").

The stand-in keeps the kind, its options, the schedule and the machine, and:
  * the same edges: every dimension's last tile as partial as the full group's, and the last
    block of every blocked dimension as short (sizes in tiles modulo the block);
  * the same kinds of blocks: a first, a middle run and a last block along every blocked
    dimension, two batches or heads where there are several;
  * under a causal mask, the same offset, query blocks whose diagonal crosses their key blocks
    and key blocks before it that every row sees whole.
Verifying it (results, hazard replay, timings) checks every kind of block the full program
runs, not the full program: the label says so. The full group's timing needs no stand-in: its
tree is timed exactly at any size.
"""

from __future__ import annotations

import dataclasses

from simcore.fusion.groups import EpilogueGemm, FusedAttention, FusedGroup, FusedMlp
from simcore.ga1.fused.emit import tiles
from simcore.ga1.fused.params import AttentionParams, FusedParams, GemmParams, MlpParams
from simcore.ga1.vector.reduced import _keep

INNER_TILES = 4  # tiles kept along a dimension that is not blocked (k, head_dim)


def _blocked(size: int, block: int, T: int, blocks: int = 3) -> int:
    """A size with `blocks` full blocks of `block` tiles and the full size's last block."""
    full = tiles(size, T)
    kept = min(full, blocks * block + full % block)
    return _keep(kept, full, size, T)


def _inner(size: int, T: int, count: int = INNER_TILES) -> int:
    full = tiles(size, T)
    return _keep(min(full, count), full, size, T)


def reduced_group(group: FusedGroup, params: FusedParams, T: int) -> FusedGroup:
    """The reduced stand-in of `group` under `params` with tiles of T (see the module's note)."""
    if isinstance(group, EpilogueGemm):
        assert isinstance(params, GemmParams)
        return dataclasses.replace(
            group,
            m=_blocked(group.m, params.bm, T),
            n=_blocked(group.n, params.bn, T),
            k=_inner(group.k, T),
            batch=min(group.batch, 2),
        )
    if isinstance(group, FusedMlp):
        assert isinstance(params, MlpParams)
        return dataclasses.replace(
            group,
            m=_blocked(group.m, params.bm, T, 2),
            d=_inner(group.d, T),
            hidden=_blocked(group.hidden, params.bh, T, 4),
            d_out=_inner(group.d_out, T),
        )
    assert isinstance(group, FusedAttention) and isinstance(params, AttentionParams)
    head_dim = _inner(group.head_dim, T, 3)
    heads = min(group.heads, 2)
    if not group.causal:
        queries = _blocked(group.queries, params.bq, T, 2)
        keys = _blocked(group.keys, params.bk, T, 4)
        return dataclasses.replace(
            group, heads=heads, queries=queries, keys=keys, head_dim=head_dim
        )
    queries = _blocked(group.queries, params.bq, T, max(4, -(-4 * params.bk // params.bq)))
    return dataclasses.replace(
        group,
        heads=heads,
        queries=queries,
        keys=queries + group.keys - group.queries,
        head_dim=head_dim,
    )
