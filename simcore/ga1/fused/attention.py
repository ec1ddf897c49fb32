"""Attention fused (the flash-attention scheme): softmax(Q K^T scale + mask) V per head, over
blocks of keys with a running maximum m and sum l, the scores never leaving the scratchpad.

A query block of bq tile rows keeps its Q tiles (scaled once on loading) and its output O in
the scratchpad. For each key block of bk key tiles:
  * QK: the block's K tiles come into the ring (transposed on the vector unit when K is held by
    rows) and S = Q K^T accumulates in the score tiles;
  * soft: per query row, the causal and padding masks are added, the block's row maximum is
    merged into m (m_new = max(m_old, rowmax S)), alpha = exp(m_old - m_new), P = exp(S - m_new)
    in place, l = l alpha + rowsum P, and O is rescaled by alpha;
  * PV: the block's V tiles come into the ring and O += P V.
At the end O is divided by l and stored. The first key block sets m and l (every query sees key
0). Under a causal mask a query block visits the key tiles up to its last row's diagonal, a row
only the tiles it sees; tiles crossed by the diagonal get one of two mask tiles (as the vector
softmax has them). With two score sets (`s_buffers` = 2) the phases are pipelined: block j's QK
is issued before block j - 1's PV, so the matrix unit computes the next scores while the vector
unit works on the softmax.
"""

from __future__ import annotations

import numpy as np

from simcore.fusion.groups import FusedAttention
from simcore.ga1.fused.emit import FusedEmitter, Layout, tiles
from simcore.ga1.fused.params import AttentionParams
from simcore.ga1.machine import Machine
from simcore.ga1.vector.reference import mask_tile

M0, M1, L, ALPHA, SUM = range(5)  # statistics of a query row: two maxima (alternating), l, temps
STATS = 5


class AttentionBuilder:
    def __init__(self, group: FusedAttention, params: AttentionParams, machine: Machine) -> None:
        self.group, self.params, self.machine = group, params, machine
        T = self.T = machine.T
        self.Qt, self.Kt, self.Dt = (
            tiles(n, T) for n in (group.queries, group.keys, group.head_dim)
        )
        self.bq, self.bk = min(params.bq, self.Qt), min(params.bk, self.Kt)
        self.Qb = -(-self.Qt // self.bq)
        self.off = group.causal_offset
        self.cv = group.keys - (self.Kt - 1) * T  # valid columns of the last key tile
        self.pipelined = params.s_buffers == 2
        layout = self.layout = Layout()
        self.consts: dict[str, int] = {}
        if group.causal:
            r = self.off % T
            for name, used in (("MASK0", r <= T - 2), ("MASK1", r >= 1)):
                if used:
                    self.consts[name] = layout.take(name, 1)
        if self.cv < T:
            self.consts["PAD"] = layout.take("PAD", 1)
        self.q0 = layout.take("queries", self.bq * self.Dt)
        self.o0 = layout.take("outputs", self.bq * self.Dt)
        self.s0 = layout.take("scores", params.s_buffers * self.bq * self.bk)
        self.st0 = layout.take("statistics", self.bq * STATS)
        self.ring0 = layout.take("ring", params.buffers * self.Dt)
        layout.check(f"{group.describe()} with {params}", machine)

    # ---- geometry
    def name(self, base: str, h: int) -> str:
        return f"{base}_{h}" if self.group.heads > 1 else base

    def last(self, i: int) -> int:
        """The last key tile query tile row i sees."""
        if not self.group.causal:
            return self.Kt - 1
        return min(self.Kt - 1, i + (self.T - 1 + self.off) // self.T)

    def diag(self, i: int, j: int) -> int:
        """The mask tile where the diagonal crosses tile (i, j): 0 or 1, -1 for none."""
        if not self.group.causal:
            return -1
        t = (i - j) * self.T + self.off
        if t >= self.T - 1:
            return -1
        return 0 if t >= 0 else 1

    def rows(self, qb: int) -> range:
        return range(qb * self.bq, min((qb + 1) * self.bq, self.Qt))

    def key_blocks(self, qb: int) -> int:
        return self.last(self.rows(qb)[-1]) // self.bk + 1

    def seen(self, i: int, jb: int) -> range:
        """Key tiles of key block jb that query tile row i sees."""
        return range(jb * self.bk, min((jb + 1) * self.bk, self.last(i) + 1))

    def block_tiles(self, qb: int, jb: int) -> range:
        return self.seen(self.rows(qb)[-1], jb)

    def full(self, qb: int, jb: int) -> bool:
        """Every row sees all bk tiles of the block, none masked or padded."""
        tiles_ = self.block_tiles(qb, jb)
        if len(tiles_) < self.bk or (self.cv < self.T and self.Kt - 1 in tiles_):
            return False
        return all(
            self.diag(i, j) < 0 and j in self.seen(i, jb) for i in self.rows(qb) for j in tiles_
        )

    # ---- slots
    def q_slot(self, x: int, dd: int) -> int:
        return self.q0 + x * self.Dt + dd

    def o_slot(self, x: int, dd: int) -> int:
        return self.o0 + x * self.Dt + dd

    def s_slot(self, jb: int, x: int, j: int) -> int:
        sset = jb % self.params.s_buffers
        return self.s0 + (sset * self.bq + x) * self.bk + j - jb * self.bk

    def stat(self, x: int, which: int) -> int:
        return self.st0 + x * STATS + which

    # ---- the program
    def emit(self, e: FusedEmitter) -> None:
        self.ring = e.ring(self.ring0, self.params.buffers * self.Dt)
        for name, slot in self.consts.items():
            e.load(slot, name, 0, 0)
        e.cycle(0, self.group.heads, lambda h: self._head(e, h))

    def _head(self, e: FusedEmitter, h: int) -> None:
        if self.group.causal:  # every query block sees a different number of key blocks
            for qb in range(self.Qb):
                self._query_block(e, h, qb)
            return
        e.cycle(0, self.Qb - 1, lambda qb: self._query_block(e, h, qb))
        self._query_block(e, h, self.Qb - 1)

    def _query_block(self, e: FusedEmitter, h: int, qb: int) -> None:
        """Its start (Q, key block 0), the run of whole key blocks, then its end. In a tree the
        start, the run's unit and the end are shared with every query block that makes the
        same instructions (the kinds of key blocks it visits, relative to its diagonal)."""
        self.ring.align()  # every query block starts at the ring's first slot
        nkb = self.key_blocks(qb)
        f = next((jb for jb in range(nkb) if not self.full(qb, jb)), nkb)
        lo, hi = 1, (f if not self.pipelined else f - 1)  # units that visit whole blocks only
        rows = len(self.rows(qb))
        start = ("start", rows, self.kind(qb, 0), self.kind(qb, 1) if nkb > 1 else None)
        e.share(start, lambda: self._start(e, h, qb, nkb))
        unit = self._plain if not self.pipelined else self._pipelined
        e.cycle(lo, hi, lambda jb: unit(e, h, qb, jb), 2, ("whole", rows))
        end = max(lo, hi)
        kinds = tuple(self.kind(qb, jb) for jb in range(end - 1, nkb))
        e.share(("end", rows, end % 2, kinds), lambda: self._end(e, h, qb, end, nkb))
        self.ring.align()

    def kind(self, qb: int, jb: int) -> tuple[object, ...]:
        """What a key block's instructions depend on, relative to the query block."""
        tiles_ = self.block_tiles(qb, jb)
        rows = self.rows(qb)
        return (
            len(tiles_),
            tuple(len(self.seen(i, jb)) for i in rows),
            tuple(self.diag(i, j) for i in rows for j in tiles_),
            self.cv < self.T and self.Kt - 1 in tiles_,
        )

    def _start(self, e: FusedEmitter, h: int, qb: int, nkb: int) -> None:
        for x, i in enumerate(self.rows(qb)):
            for dd in range(self.Dt):
                q = self.q_slot(x, dd)
                e.load(q, self.name("Q", h), i, dd)
                e.vscale(q, q, self.group.scale)
                e.zero(self.o_slot(x, dd))
        if not self.pipelined:
            self._plain(e, h, qb, 0)
            return
        self._zero_scores(e, qb, 0)
        self._qk(e, h, qb, 0)
        if nkb > 1:
            self._zero_scores(e, qb, 1)
        self._soft(e, qb, 0)

    def _end(self, e: FusedEmitter, h: int, qb: int, first: int, nkb: int) -> None:
        unit = self._plain if not self.pipelined else self._pipelined
        for jb in range(first, nkb):
            unit(e, h, qb, jb)
        if self.pipelined:
            self._pv(e, h, qb, nkb - 1)
        self._finish(e, h, qb)

    def _plain(self, e: FusedEmitter, h: int, qb: int, jb: int) -> None:
        self._zero_scores(e, qb, jb)
        self._qk(e, h, qb, jb)
        self._soft(e, qb, jb)
        self._pv(e, h, qb, jb)

    def _pipelined(self, e: FusedEmitter, h: int, qb: int, jb: int) -> None:
        self._qk(e, h, qb, jb)
        self._pv(e, h, qb, jb - 1)
        if jb + 1 < self.key_blocks(qb):
            self._zero_scores(e, qb, jb + 1)
        self._soft(e, qb, jb)

    def _zero_scores(self, e: FusedEmitter, qb: int, jb: int) -> None:
        for x, i in enumerate(self.rows(qb)):
            for j in self.seen(i, jb):
                e.zero(self.s_slot(jb, x, j))

    def _seeing(self, qb: int, jb: int, j: int) -> list[int]:
        """The rows (within the query block) that see key tile j."""
        return [x for x, i in enumerate(self.rows(qb)) if j <= self.last(i)]

    def _qk(self, e: FusedEmitter, h: int, qb: int, jb: int) -> None:
        by_rows = self.group.k_layout == "rows"
        for j in self.block_tiles(qb, jb):
            seeing = self._seeing(qb, jb, j)
            scores = [self.s_slot(jb, x, j) for x in seeing]
            for dd in range(self.Dt):
                k = self.ring.take()
                if by_rows:
                    e.load(k, self.name("K", h), j, dd)
                    e.transpose(k, k)
                else:
                    e.load(k, self.name("KT", h), dd, j)
                for x, s in zip(seeing, scores):
                    e.mxu(s, self.q_slot(x, dd), k)

    def _soft(self, e: FusedEmitter, qb: int, jb: int) -> None:
        for x, i in enumerate(self.rows(qb)):
            seen = self.seen(i, jb)
            if len(seen):
                self._soft_row(e, x, i, jb, [self.s_slot(jb, x, j) for j in seen])

    def _soft_row(self, e: FusedEmitter, x: int, i: int, jb: int, scores: list[int]) -> None:
        for j, s in zip(self.seen(i, jb), scores):
            mask = self.diag(i, j)
            if mask >= 0:
                e.vop("add", s, s, self.consts[f"MASK{mask}"])
            if j == self.Kt - 1 and self.cv < self.T:
                e.vop("add", s, s, self.consts["PAD"])
        new, old = self.stat(x, M0 + jb % 2), self.stat(x, M0 + (jb + 1) % 2)
        alpha, l = self.stat(x, ALPHA), self.stat(x, L)
        first = jb == 0
        _reduce(e, "max", new if first else alpha, scores)
        if not first:
            e.vop("max", new, old, alpha)
            e.vop("sub", alpha, old, new)
            e.exp(alpha, alpha)
        for s in scores:
            e.vop("sub", s, s, new)
            e.exp(s, s)
        _reduce(e, "sum", l if first else self.stat(x, SUM), scores)
        if not first:
            e.vop("mul", l, l, alpha)
            e.vop("add", l, l, self.stat(x, SUM))
            for dd in range(self.Dt):
                o = self.o_slot(x, dd)
                e.vop("mul", o, o, alpha)

    def _pv(self, e: FusedEmitter, h: int, qb: int, jb: int) -> None:
        for j in self.block_tiles(qb, jb):
            seeing = self._seeing(qb, jb, j)
            probabilities = [self.s_slot(jb, x, j) for x in seeing]
            for dd in range(self.Dt):
                v = self.ring.take()
                e.load(v, self.name("V", h), j, dd)
                for x, p in zip(seeing, probabilities):
                    e.mxu(self.o_slot(x, dd), p, v)

    def _finish(self, e: FusedEmitter, h: int, qb: int) -> None:
        for x, i in enumerate(self.rows(qb)):
            l = self.stat(x, L)
            for dd in range(self.Dt):
                o = self.o_slot(x, dd)
                e.vop("div", o, o, l)
                e.store(o, self.name("O", h), i, dd)

    # ---- numbers
    def inputs(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Scores with row offsets of hundreds (exp overflows unless the maximum is taken off)
        and a trend along the keys (the running maximum moves from block to block)."""
        g, T, dram = self.group, self.T, {}
        ramp = np.linspace(0.0, 6.0, g.keys)[:, None]
        for h in range(g.heads):
            q = rng.standard_normal((g.queries, g.head_dim)) * 2.0
            k = rng.standard_normal((g.keys, g.head_dim))
            k += rng.standard_normal(g.head_dim) * 100.0 + ramp * rng.standard_normal(g.head_dim)
            dram[self.name("Q", h)] = q
            dram[self.name("KT" if g.k_layout == "transposed" else "K", h)] = (
                k.T.copy() if g.k_layout == "transposed" else k
            )
            dram[self.name("V", h)] = rng.standard_normal((g.keys, g.head_dim))
            dram[self.name("O", h)] = np.zeros((g.queries, g.head_dim))
        r = self.off % T
        made = {"MASK0": mask_tile(T, r), "MASK1": mask_tile(T, r - T)}
        made["PAD"] = np.where(np.arange(T) < self.cv, 0.0, -np.inf)[None, :].repeat(T, 0)
        dram.update({name: made[name] for name in self.consts})
        return dram

    def expected(self, dram: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        g, out = self.group, {}
        for h in range(g.heads):
            kt = (
                dram[self.name("KT", h)]
                if g.k_layout == "transposed"
                else dram[self.name("K", h)].T
            )
            out[self.name("O", h)] = attention(
                dram[self.name("Q", h)], kt.T, dram[self.name("V", h)], g
            )
        return out


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, group: FusedAttention) -> np.ndarray:
    """numpy's softmax(Q K^T scale + mask) V."""
    s = (q @ k.T) * group.scale
    if group.causal:
        r, c = np.indices(s.shape)
        s = np.where(c <= r + group.causal_offset, s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return np.asarray((p / p.sum(axis=1, keepdims=True)) @ v, dtype=np.float64)


def _reduce(e: FusedEmitter, func: str, into: int, scores: list[int]) -> None:
    """into := the row reduction (sum or max) over the tiles, broadcast across each row."""
    if len(scores) == 1:
        e.rowred(func, into, scores[0])
        return
    e.copy(into, scores[0])
    for s in scores[1:]:
        e.vop("add" if func == "sum" else "max", into, into, s)
    e.rowred(func, into, into)
