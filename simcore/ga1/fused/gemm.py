"""A GEMM with its epilogue fused: each block of bm x bn output tiles is accumulated in the
scratchpad over the k steps, then every tile goes through the epilogue (bias, activation,
residual add, scale, gate multiply) on the vector unit and is stored once: no store and reload between the
product and the elementwise work.

Blocks are visited along a row of blocks (order "row") or down a column ("col"), batch after
batch. A k step loads the block's A tiles and B tiles into the ring and runs the block's tile
products. The epilogue walks the block column by column: the column's bias tile and residual
tiles (and gate tiles) come into the ring, then each tile is finished and stored. With two output sets
(`c_buffers` = 2) a block's epilogue is issued after the next block's first k step, so the
vector unit and the stores overlap the next block's products.
"""

from __future__ import annotations

import math

import numpy as np

from simcore.fusion.groups import EpilogueGemm
from simcore.ga1.fused.emit import FusedEmitter, Layout, activation, make_ones, needs_ones, tiles
from simcore.ga1.fused.params import GemmParams
from simcore.ga1.machine import Machine
from simcore.ga1.vector.reference import gelu_erf, gelu_tanh

Block = tuple[int, int, int]  # batch, block row, block column


class GemmBuilder:
    def __init__(self, group: EpilogueGemm, params: GemmParams, machine: Machine) -> None:
        self.group, self.params, self.machine = group, params, machine
        T = self.T = machine.T
        self.Mt, self.Kt, self.Nt = tiles(group.m, T), tiles(group.k, T), tiles(group.n, T)
        self.bm, self.bn = min(params.bm, self.Mt), min(params.bn, self.Nt)
        self.Mb, self.Nb = -(-self.Mt // self.bm), -(-self.Nt // self.bn)
        self.lines, self.per_line = (
            (self.Mb, self.Nb) if params.order == "row" else (self.Nb, self.Mb)
        )
        self.deferred = params.c_buffers == 2
        steps = group.epilogue
        layout = self.layout = Layout()
        ones = needs_ones(steps, group.gelu)
        self.ones = layout.take("ones", 1) if ones else -1
        self.temp = layout.take("temporary", 1) if ones else -1
        self.c0 = layout.take("output blocks", params.c_buffers * self.bm * self.bn)
        self.ring_size = max(params.buffers * (self.bm + self.bn), self.epilogue_tiles())
        self.ring0 = layout.take("ring", self.ring_size)
        layout.check(f"{group.describe()} with {params}", machine)

    def epilogue_tiles(self) -> int:
        """Tiles one output column's epilogue holds in the ring at once: its bias tile, its
        residual tiles and its gate tiles."""
        steps = self.group.epilogue
        per_row = ("residual" in steps) + ("gate" in steps)
        return ("bias" in steps) + per_row * self.bm

    # ---- names and geometry
    def name(self, base: str, h: int) -> str:
        return f"{base}_{h}" if self.group.batch > 1 else base

    def block(self, h: int, line: int, at: int) -> Block:
        return (h, line, at) if self.params.order == "row" else (h, at, line)

    def extent(self, block: Block) -> tuple[int, int]:
        _h, I, J = block
        return min(self.bm, self.Mt - I * self.bm), min(self.bn, self.Nt - J * self.bn)

    def index(self, block: Block) -> int:
        h, I, J = block
        line, at = (I, J) if self.params.order == "row" else (J, I)
        return (h * self.lines + line) * self.per_line + at

    def previous(self, block: Block) -> Block | None:
        h, I, J = block
        line, at = (I, J) if self.params.order == "row" else (J, I)
        if at > 0:
            return self.block(h, line, at - 1)
        if line > 0:
            return self.block(h, line - 1, self.per_line - 1)
        if h > 0:
            return self.block(h - 1, self.lines - 1, self.per_line - 1)
        return None

    def c_slot(self, block: Block, x: int, y: int) -> int:
        cset = self.index(block) % self.params.c_buffers
        return self.c0 + (cset * self.bm + x) * self.bn + y

    # ---- the program
    def emit(self, e: FusedEmitter) -> None:
        self.ring = e.ring(self.ring0, self.ring_size)
        if self.ones >= 0:
            make_ones(e, self.ones)
        c = self.params.c_buffers
        blocks = self.lines * self.per_line
        self._batch(e, 0)
        e.cycle(1, self.group.batch, lambda h: self._batch(e, h), c // math.gcd(c, blocks))
        if self.deferred:
            self._epilogue(e, self.block(self.group.batch - 1, self.lines - 1, self.per_line - 1))

    def _batch(self, e: FusedEmitter, h: int) -> None:
        c = self.params.c_buffers
        self._line(e, h, 0)
        e.cycle(1, self.lines - 1, lambda o: self._line(e, h, o), c // math.gcd(c, self.per_line))
        if self.lines > 1:
            self._line(e, h, self.lines - 1)

    def _line(self, e: FusedEmitter, h: int, o: int) -> None:
        self._block(e, self.block(h, o, 0))
        last = self.per_line - 1
        e.cycle(1, last, lambda i: self._block(e, self.block(h, o, i)), self.params.c_buffers)
        if last > 0:
            self._block(e, self.block(h, o, last))

    def _block(self, e: FusedEmitter, block: Block) -> None:
        self.ring.align()  # every block starts at the ring's first slot
        mo, no = self.extent(block)
        for x in range(mo):
            for y in range(no):
                e.zero(self.c_slot(block, x, y))
        self._step(e, block, 0)
        before = self.previous(block)
        if self.deferred and before is not None:
            self._epilogue(e, before)
        e.cycle(1, self.Kt, lambda k: self._step(e, block, k))
        if not self.deferred:
            self._epilogue(e, block)
        self.ring.align()

    def _step(self, e: FusedEmitter, block: Block, k: int) -> None:
        h, I, J = block
        mo, no = self.extent(block)
        a = [self.ring.take() for _ in range(mo)]
        for x, slot in enumerate(a):
            e.load(slot, self.name("A", h), I * self.bm + x, k)
        b = [self.ring.take() for _ in range(no)]
        for y, slot in enumerate(b):
            e.load(slot, self.name("B", h), k, J * self.bn + y)
        for x in range(mo):
            for y in range(no):
                e.mxu(self.c_slot(block, x, y), a[x], b[y])

    def _epilogue(self, e: FusedEmitter, block: Block) -> None:
        h, I, J = block
        mo, no = self.extent(block)
        steps = self.group.epilogue
        for y in range(no):
            col = J * self.bn + y
            bias = self.ring.take() if "bias" in steps else -1
            if bias >= 0:
                e.load(bias, "BIAS", 0, col)
            extra = {}
            for step, tensor in (("residual", "R"), ("gate", "G")):
                extra[step] = [self.ring.take() if step in steps else -1 for _ in range(mo)]
                for x, slot in enumerate(extra[step]):
                    if slot >= 0:
                        e.load(slot, self.name(tensor, h), I * self.bm + x, col)
            for x in range(mo):
                c = self.c_slot(block, x, y)
                self._finish(e, c, bias, extra["residual"][x], extra["gate"][x])
                e.store(c, self.name("C", h), I * self.bm + x, col)

    def _finish(self, e: FusedEmitter, c: int, bias: int, residual: int, gate: int) -> None:
        for step in self.group.epilogue:
            if step == "bias":
                e.vop("add", c, c, bias)
            elif step == "residual":
                e.vop("add", c, c, residual)
            elif step == "gate":
                e.vop("mul", c, c, gate)
            elif step == "scale":
                e.vscale(c, c, self.group.scale)
            else:
                activation(e, step, c, self.temp, self.ones, self.group.gelu)

    # ---- numbers
    def inputs(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        g, dram = self.group, {}
        for h in range(g.batch):
            dram[self.name("A", h)] = rng.standard_normal((g.m, g.k))
            dram[self.name("B", h)] = rng.standard_normal((g.k, g.n)) / np.sqrt(g.k)
            dram[self.name("C", h)] = np.zeros((g.m, g.n))
            if "residual" in g.epilogue:
                dram[self.name("R", h)] = rng.standard_normal((g.m, g.n))
            if "gate" in g.epilogue:
                dram[self.name("G", h)] = rng.standard_normal((g.m, g.n))
        if "bias" in g.epilogue:
            dram["BIAS"] = np.tile(rng.standard_normal(g.n), (self.T, 1))
        return dram

    def expected(self, dram: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        g, out = self.group, {}
        for h in range(g.batch):
            c = dram[self.name("A", h)] @ dram[self.name("B", h)]
            for step in g.epilogue:
                c = apply_step(step, c, dram, self.name("R", h), g.scale, g.gelu, self.name("G", h))
            out[self.name("C", h)] = c
        return out


def apply_step(
    step: str,
    c: np.ndarray,
    dram: dict[str, np.ndarray],
    residual: str,
    scale: float,
    gelu: str,
    gate: str = "",
) -> np.ndarray:
    """One epilogue step in numpy, as the programs define it."""
    with np.errstate(over="ignore"):
        if step == "bias":
            done = c + dram["BIAS"][0]
        elif step == "residual":
            done = c + dram[residual]
        elif step == "gate":
            done = c * dram[gate]
        elif step == "scale":
            done = c * scale
        elif step == "relu":
            done = np.maximum(c, 0.0)
        elif step == "silu":
            done = c / (1.0 + np.exp(-c))
        else:
            done = gelu_erf(c) if gelu == "erf" else gelu_tanh(c)
    return np.asarray(done, dtype=np.float64)
