"""The MLP's two products fused over row blocks of the activations: Y = act(X W1 + b1) W2 + b2,
the hidden row block never leaving the scratchpad.

A row block of bm tile rows keeps its output Y (bm x d_out tiles) in the scratchpad. For each
hidden block of bh tile columns: the up projection accumulates H = X W1 over the k steps
(phase 1: the X and W1 tiles of a step come into the ring, then its products), the vector unit
adds b1 and applies the activation to H's tiles (the epilogue), and the down projection adds
H W2 into Y column by column (phase 2: the W2 tiles of an output column, then its products).
After the last hidden block Y gets b2 and is stored. With two hidden sets (`h_buffers` = 2) the
phases are pipelined: hidden block u's up projection is issued before block u - 1's down
projection, and the next set is zeroed once the down projection has read it, so the matrix
unit works on one block while the vector unit finishes the other.
"""

from __future__ import annotations

import numpy as np

from simcore.fusion.groups import FusedMlp
from simcore.ga1.fused.emit import FusedEmitter, Layout, activation, make_ones, needs_ones, tiles
from simcore.ga1.fused.gemm import apply_step
from simcore.ga1.fused.params import MlpParams
from simcore.ga1.machine import Machine


class MlpBuilder:
    def __init__(self, group: FusedMlp, params: MlpParams, machine: Machine) -> None:
        self.group, self.params, self.machine = group, params, machine
        T = self.T = machine.T
        self.Mt, self.Dt = tiles(group.m, T), tiles(group.d, T)
        self.Ht, self.Ot = tiles(group.hidden, T), tiles(group.d_out, T)
        self.bm, self.bh = min(params.bm, self.Mt), min(params.bh, self.Ht)
        self.Rb, self.Hb = -(-self.Mt // self.bm), -(-self.Ht // self.bh)
        layout = self.layout = Layout()
        ones = needs_ones((group.activation,), group.gelu)
        self.ones = layout.take("ones", 1) if ones else -1
        self.temp = layout.take("temporary", 1) if ones else -1
        self.y0 = layout.take("output row block", self.bm * self.Ot)
        self.h0 = layout.take("hidden blocks", params.h_buffers * self.bm * self.bh)
        self.ring0 = layout.take("ring", params.buffers * (self.bm + self.bh))
        layout.check(f"{group.describe()} with {params}", machine)

    def extent(self, r: int, u: int) -> tuple[int, int]:
        return min(self.bm, self.Mt - r * self.bm), min(self.bh, self.Ht - u * self.bh)

    def h_slot(self, u: int, x: int, y: int) -> int:
        hset = u % self.params.h_buffers
        return self.h0 + (hset * self.bm + x) * self.bh + y

    def y_slot(self, x: int, n: int) -> int:
        return self.y0 + x * self.Ot + n

    # ---- the program
    def emit(self, e: FusedEmitter) -> None:
        self.ring = e.ring(self.ring0, self.params.buffers * (self.bm + self.bh))
        if self.ones >= 0:
            make_ones(e, self.ones)
        e.cycle(0, self.Rb - 1, lambda r: self._row_block(e, r))
        self._row_block(e, self.Rb - 1)

    def _row_block(self, e: FusedEmitter, r: int) -> None:
        self.ring.align()  # every row block starts at the ring's first slot
        mo, _ = self.extent(r, 0)
        for x in range(mo):
            for n in range(self.Ot):
                e.zero(self.y_slot(x, n))
        last = self.Hb - 1
        if self.params.h_buffers == 1:
            e.cycle(0, last, lambda u: self._unit(e, r, u))
            self._unit(e, r, last)
        else:
            self._zero_hidden(e, r, 0)
            self._up(e, r, 0)
            if last > 0:
                self._zero_hidden(e, r, 1)
            self._epilogue(e, r, 0)
            # the unit before the last zeroes the last (maybe narrower) block: emitted apart
            e.cycle(1, last - 1, lambda u: self._pipelined(e, r, u), 2)
            for u in range(max(1, last - 1), last + 1):
                self._pipelined(e, r, u)
            self._down(e, r, last)
        self._store(e, r)
        self.ring.align()

    def _unit(self, e: FusedEmitter, r: int, u: int) -> None:
        self._zero_hidden(e, r, u)
        self._up(e, r, u)
        self._epilogue(e, r, u)
        self._down(e, r, u)

    def _pipelined(self, e: FusedEmitter, r: int, u: int) -> None:
        self._up(e, r, u)
        self._down(e, r, u - 1)
        if u + 1 < self.Hb:
            self._zero_hidden(e, r, u + 1)
        self._epilogue(e, r, u)

    def _zero_hidden(self, e: FusedEmitter, r: int, u: int) -> None:
        mo, ho = self.extent(r, u)
        for x in range(mo):
            for y in range(ho):
                e.zero(self.h_slot(u, x, y))

    def _up(self, e: FusedEmitter, r: int, u: int) -> None:
        e.cycle(0, self.Dt, lambda k: self._up_step(e, r, u, k))

    def _up_step(self, e: FusedEmitter, r: int, u: int, k: int) -> None:
        mo, ho = self.extent(r, u)
        a = [self.ring.take() for _ in range(mo)]
        for x, slot in enumerate(a):
            e.load(slot, "X", r * self.bm + x, k)
        w = [self.ring.take() for _ in range(ho)]
        for y, slot in enumerate(w):
            e.load(slot, "W1", k, u * self.bh + y)
        for x in range(mo):
            for y in range(ho):
                e.mxu(self.h_slot(u, x, y), a[x], w[y])

    def _epilogue(self, e: FusedEmitter, r: int, u: int) -> None:
        mo, ho = self.extent(r, u)
        g = self.group
        for y in range(ho):
            bias = self.ring.take() if g.bias else -1
            if bias >= 0:
                e.load(bias, "B1", 0, u * self.bh + y)
            for x in range(mo):
                h = self.h_slot(u, x, y)
                if bias >= 0:
                    e.vop("add", h, h, bias)
                activation(e, g.activation, h, self.temp, self.ones, g.gelu)

    def _down(self, e: FusedEmitter, r: int, u: int) -> None:
        for n in range(self.Ot):  # each output column accumulates in slots of its own
            self._down_step(e, r, u, n)

    def _down_step(self, e: FusedEmitter, r: int, u: int, n: int) -> None:
        mo, ho = self.extent(r, u)
        w = [self.ring.take() for _ in range(ho)]
        for y, slot in enumerate(w):
            e.load(slot, "W2", u * self.bh + y, n)
        for x in range(mo):
            for y in range(ho):
                e.mxu(self.y_slot(x, n), self.h_slot(u, x, y), w[y])

    def _store(self, e: FusedEmitter, r: int) -> None:
        for n in range(self.Ot):
            self._store_column(e, r, n)

    def _store_column(self, e: FusedEmitter, r: int, n: int) -> None:
        mo, _ = self.extent(r, 0)
        bias = self.ring.take() if self.group.bias else -1
        if bias >= 0:
            e.load(bias, "B2", 0, n)
        for x in range(mo):
            y = self.y_slot(x, n)
            if bias >= 0:
                e.vop("add", y, y, bias)
            e.store(y, "Y", r * self.bm + x, n)

    # ---- numbers
    def inputs(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        g, T = self.group, self.T
        dram = {
            "X": rng.standard_normal((g.m, g.d)),
            "W1": rng.standard_normal((g.d, g.hidden)) / np.sqrt(g.d),
            "W2": rng.standard_normal((g.hidden, g.d_out)) / np.sqrt(g.hidden),
            "Y": np.zeros((g.m, g.d_out)),
        }
        if g.bias:
            dram["B1"] = np.tile(rng.standard_normal(g.hidden), (T, 1))
            dram["B2"] = np.tile(rng.standard_normal(g.d_out), (T, 1))
        return dram

    def expected(self, dram: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        g = self.group
        h = dram["X"] @ dram["W1"]
        if g.bias:
            h = h + dram["B1"][0]
        h = apply_step(g.activation, h, dram, "", 1.0, g.gelu)
        y = h @ dram["W2"]
        if g.bias:
            y = y + dram["B2"][0]
        return {"Y": y}
