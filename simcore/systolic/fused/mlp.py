"""The MLP fused on the systolic array: Y = act(X W1 + b1) W2 + b2 over row blocks of X, each
hidden block kept on chip between the two products (schedule.py names the parameters).

For a row block of bm rows and each hidden block u of bh columns:
  * up: for each k block, the X block comes in (each time when streamed; for the first hidden
    block only when resident), then the W1 block, and the array adds X W1 into the hidden block
    H (in the accumulators; fresh at the first k block);
  * the vector unit adds b1 (its block comes in) and applies the activation, reading H from the
    accumulators and writing H' as an A operand block (operand words);
  * down: for each n block, the W2 block comes in and the array adds H' W2 into Y's block: kept
    in the accumulators across the hidden blocks (resident), or spilled to DRAM after every
    hidden block but the last and read back before the next.
After the last hidden block each Y block gets b2 on the vector unit and drains. With W1 and W2
resident every weight block has a slot of its own and comes in during the first row block only. With two hidden
sets the up projection of block u is issued before the down projection of block u - 1.
"""

from __future__ import annotations

from typing import Callable

from simcore.fusion.groups import FusedMlp
from simcore.systolic.fused.gemm import _span
from simcore.systolic.fused.ops import Emitter, Ring
from simcore.systolic.fused.schedule import MlpSchedule
from simcore.systolic.fused.slots import Costs, Slots


class MlpBuild:
    def __init__(self, costs: Costs, group: FusedMlp, schedule: MlpSchedule) -> None:
        self.costs, self.group = costs, group
        g, s = group, schedule.clipped(group)
        self.s = s
        self.Rb, self.Kb = -(-g.m // s.bm), -(-g.d // s.bk)
        self.Hb, self.Nb = -(-g.hidden // s.bh), -(-g.d_out // s.bn)
        slots = self.slots = Slots(costs.machine)
        x_count = self.Kb if s.x_resident else s.buffering
        self.x0 = slots.take("X blocks", "a", s.bm * s.bk, x_count)
        w1_count = self.Kb * self.Hb if s.w_resident else s.buffering
        self.w10 = slots.take("W1 blocks", "b", s.bk * s.bh, w1_count)
        self.h0 = slots.take("hidden sums", "c", s.bm * s.bh, s.h_buffers)
        self.hp0 = slots.take("hidden blocks", "a", s.bm * s.bh, s.h_buffers)
        w2_count = self.Hb * self.Nb if s.w_resident else s.buffering
        self.w20 = slots.take("W2 blocks", "b", s.bh * s.bn, w2_count)
        y_count = self.Nb if s.y_resident else 2
        self.y0 = slots.take("Y blocks", "c", s.bm * s.bn, y_count)
        self.b10 = slots.take("b1 blocks", "b", s.bh, s.h_buffers) if g.bias else -1
        self.b20 = slots.take("b2 block", "b", s.bn, 2) if g.bias else -1

    def rows(self, r: int) -> tuple[int, int]:
        return _span(r, self.s.bm, self.group.m)

    def depth(self, k: int) -> tuple[int, int]:
        return _span(k, self.s.bk, self.group.d)

    def hidden(self, u: int) -> tuple[int, int]:
        return _span(u, self.s.bh, self.group.hidden)

    def cols(self, n: int) -> tuple[int, int]:
        return _span(n, self.s.bn, self.group.d_out)

    # ---- the schedule
    def emit(self, e: Emitter) -> None:
        s = self.s
        self.x_ring = e.ring(self.x0, self.Kb if s.x_resident else s.buffering)
        self.w1_ring = e.ring(self.w10, s.buffering)
        self.w2_ring = e.ring(self.w20, s.buffering)
        self.y_ring = e.ring(self.y0, self.Nb if s.y_resident else 2)
        self.b2_ring = e.ring(self.b20, 2) if self.b20 >= 0 else None
        first = 0
        if s.w_resident:  # the first row block loads the weights, the others reuse them
            self._row_block(e, 0)
            first = 1
        e.cycle(first, self.Rb - 1, lambda r: self._row_block(e, r))
        if self.Rb - 1 >= first:
            self._row_block(e, self.Rb - 1)

    def _row_block(self, e: Emitter, r: int) -> None:
        last = self.Hb - 1
        if self.s.h_buffers == 1:
            self._hidden(e, r, 0)
            self._loop(e, r, 1, last, lambda u: self._hidden(e, r, u))
            if last > 0:
                self._hidden(e, r, last)
        else:
            self._up(e, r, 0)
            self._activate(e, r, 0)
            if last > 0:
                self._pipelined(e, r, 1)
            self._loop(e, r, 2, last, lambda u: self._pipelined(e, r, u), 2)
            if last > 1:
                self._pipelined(e, r, last)
            self._down(e, r, last)
        if self.s.y_resident:
            for n in range(self.Nb):
                self._finish_y(e, r, n, self.y0 + n)

    def _loop(
        self,
        e: Emitter,
        r: int,
        start: int,
        stop: int,
        body: Callable[[int], None],
        parity: int = 1,
    ) -> None:
        """Iterations kept once in the tree when they differ only by their rings' phases. With the
        weights resident the first row block loads every weight block into a slot of its own:
        its iterations write different slots, so the tree keeps them all."""
        if self.s.w_resident and r == 0:
            for i in range(start, stop):
                body(i)
        else:
            e.cycle(start, stop, body, parity)

    def _hidden(self, e: Emitter, r: int, u: int) -> None:
        self._up(e, r, u)
        self._activate(e, r, u)
        self._down(e, r, u)

    def _pipelined(self, e: Emitter, r: int, u: int) -> None:
        self._up(e, r, u)
        self._down(e, r, u - 1)
        self._activate(e, r, u)

    def _h(self, u: int) -> tuple[int, int]:
        """The hidden block's sums slot and its activated slot."""
        h = u % self.s.h_buffers
        return self.h0 + h, self.hp0 + h

    def _up(self, e: Emitter, r: int, u: int) -> None:
        if self.s.x_resident:  # each k block of X has a slot of its own
            for k in range(self.Kb):
                self._up_step(e, r, u, k)
            return
        self._up_step(e, r, u, 0)
        self._loop(e, r, 1, self.Kb - 1, lambda k: self._up_step(e, r, u, k))
        if self.Kb > 1:
            self._up_step(e, r, u, self.Kb - 1)

    def _up_step(self, e: Emitter, r: int, u: int, k: int) -> None:
        cost = self.costs
        if self.s.x_resident:
            x = self.x0 + k
            if u == 0:
                e.add(cost.link("load", "a", x, "X", self.rows(r), self.depth(k)))
        else:
            x = self.x_ring.take()
            e.add(cost.link("load", "a", x, "X", self.rows(r), self.depth(k)))
        if self.s.w_resident:  # each (k, u) block of W1 has a slot of its own
            w = self.w10 + k * self.Hb + u
        else:
            w = self.w1_ring.take()
        if r == 0 or not self.s.w_resident:
            e.add(cost.link("load", "b", w, "W1", self.depth(k), self.hidden(u)))
        sums, _ = self._h(u)
        m0, m1 = self.rows(r)
        k0, k1 = self.depth(k)
        h0, h1 = self.hidden(u)
        e.add(cost.compute(x, w, sums, k == 0, m1 - m0, k1 - k0, h1 - h0))

    def _activate(self, e: Emitter, r: int, u: int) -> None:
        g, cost = self.group, self.costs
        sums, act = self._h(u)
        extra: tuple[int, ...] = ()
        steps: tuple[str, ...] = (g.activation,)
        if g.bias:
            bias = self.b10 + u % self.s.h_buffers
            e.add(cost.link("load", "b", bias, "B1", (0, 1), self.hidden(u)))
            extra, steps = (bias,), ("bias", g.activation)
        m0, m1 = self.rows(r)
        h0, h1 = self.hidden(u)
        e.add(cost.elementwise(steps, sums, act, extra, m1 - m0, h1 - h0, "c", "a"))

    def _down(self, e: Emitter, r: int, u: int) -> None:
        if self.s.y_resident:  # each n block accumulates in a slot of its own
            for n in range(self.Nb):
                self._down_step(e, r, u, n)
            return
        self._down_step(e, r, u, 0)
        self._loop(e, r, 1, self.Nb - 1, lambda n: self._down_step(e, r, u, n))
        if self.Nb > 1:
            self._down_step(e, r, u, self.Nb - 1)

    def _down_step(self, e: Emitter, r: int, u: int, n: int) -> None:
        cost, s = self.costs, self.s
        if s.w_resident:  # each (u, n) block of W2 has a slot of its own
            w = self.w20 + u * self.Nb + n
        else:
            w = self.w2_ring.take()
        if r == 0 or not s.w_resident:
            e.add(cost.link("load", "b", w, "W2", self.hidden(u), self.cols(n)))
        if s.y_resident:
            y = self.y0 + n
        else:
            y = self.y_ring.take()
            if u > 0:
                e.add(cost.link("back", "c-back", y, "Y.partial", self.rows(r), self.cols(n)))
        _, act = self._h(u)
        m0, m1 = self.rows(r)
        h0, h1 = self.hidden(u)
        n0, n1 = self.cols(n)
        e.add(cost.compute(act, w, y, u == 0, m1 - m0, h1 - h0, n1 - n0))
        if not s.y_resident:
            if u < self.Hb - 1:
                e.add(cost.link("spill", "c-partial", y, "Y.partial", self.rows(r), self.cols(n)))
            else:
                self._finish_y(e, r, n, y)

    def _finish_y(self, e: Emitter, r: int, n: int, y: int) -> None:
        cost = self.costs
        if isinstance(self.b2_ring, Ring):
            bias = self.b2_ring.take()
            e.add(cost.link("load", "b", bias, "B2", (0, 1), self.cols(n)))
            m0, m1 = self.rows(r)
            n0, n1 = self.cols(n)
            e.add(cost.elementwise(("bias",), y, y, (bias,), m1 - m0, n1 - n0, "c", "c"))
        e.add(cost.link("drain", "c-final", y, "Y", self.rows(r), self.cols(n)))
