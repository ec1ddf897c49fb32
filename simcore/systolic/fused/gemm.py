"""One product C = A B under a block schedule, with its epilogue on the vector unit, as an event
schedule; and an elementwise pass over a tensor in DRAM (an unfused epilogue step).

The product walks its blocks in the loop order, as a block schedule of the memory system does:
before a step the A block comes in when it changed from the previous step, then the B block;
when the C block changes the previous one leaves (as partial sums when its last k block is not
the product's last, else finished), and a C block entering with k > 0 reads its partial sums
back. A finished block goes through the epilogue first: its bias block and residual block come
in, the vector unit works on it in the accumulators, and it drains at output width.

An elementwise pass loads a block of whole rows, lets the vector unit work on it in place and
drains it (the unfused form of one epilogue step).
"""

from __future__ import annotations

from simcore.fusion.groups import EpilogueGemm
from simcore.systolic.fused.ops import Emitter
from simcore.systolic.fused.schedule import GemmSchedule
from simcore.systolic.fused.slots import Costs, Slots

Index = tuple[int, int, int]  # (i, k, j) block indices


def _span(index: int, block: int, size: int) -> tuple[int, int]:
    return index * block, min((index + 1) * block, size)


class GemmBuild:
    """C = A B (m x k times k x n), tensors named `names` (A, B, C; then BIAS and R)."""

    def __init__(
        self,
        costs: Costs,
        group: EpilogueGemm,
        schedule: GemmSchedule,
        names: tuple[str, str, str] = ("A", "B", "C"),
        bias: str = "BIAS",
        residual: str = "R",
    ) -> None:
        if group.batch != 1:
            raise ValueError("systolic fused groups take batch 1")
        _no_gate(group.epilogue)
        self.costs, self.group, self.names = costs, group, names
        self.bias_name, self.residual_name = bias, residual
        g = group
        s = self.s = schedule.clipped(g.m, g.k, g.n)
        self.grid = {"m": -(-g.m // s.bm), "k": -(-g.k // s.bk), "n": -(-g.n // s.bn)}
        self.counts = [self.grid[d] for d in s.order]
        slots = self.slots = Slots(costs.machine)
        ba, bb, bc = s.buffering
        self.a0 = slots.take("A blocks", "a", s.bm * s.bk, ba)
        self.b0 = slots.take("B blocks", "b", s.bk * s.bn, bb)
        self.c0 = slots.take("C blocks", "c", s.bm * s.bn, bc)
        steps = g.epilogue
        self.bias0 = slots.take("bias blocks", "b", s.bn, bc) if "bias" in steps else -1
        self.res0 = (
            slots.take("residual blocks", "a", s.bm * s.bn, bc) if "residual" in steps else -1
        )

    # ---- geometry
    def index(self, levels: list[int]) -> Index:
        where = dict(zip(self.s.order, levels))
        return where["m"], where["k"], where["n"]

    def previous(self, at: Index) -> Index | None:
        levels = [at["mkn".index(d)] for d in self.s.order]
        for level in (2, 1, 0):
            if levels[level] > 0:
                levels[level] -= 1
                for inner in range(level + 1, 3):
                    levels[inner] = self.counts[inner] - 1
                return self.index(levels)
        return None

    def rows(self, i: int) -> tuple[int, int]:
        return _span(i, self.s.bm, self.group.m)

    def depth(self, k: int) -> tuple[int, int]:
        return _span(k, self.s.bk, self.group.k)

    def cols(self, j: int) -> tuple[int, int]:
        return _span(j, self.s.bn, self.group.n)

    # ---- the schedule
    def emit(self, e: Emitter) -> None:
        s = self.s
        self.ring_a = e.ring(self.a0, s.buffering[0])
        self.ring_b = e.ring(self.b0, s.buffering[1])
        self.ring_c = e.ring(self.c0, s.buffering[2])
        self.ring_bias = e.ring(self.bias0, s.buffering[2]) if self.bias0 >= 0 else None
        self.ring_res = e.ring(self.res0, s.buffering[2]) if self.res0 >= 0 else None
        self.slot = {"a": -1, "b": -1, "c": -1}
        self._level(e, 0, [])
        last = self.index([n - 1 for n in self.counts])
        self._finish_c(e, last, self.slot["c"])

    def _level(self, e: Emitter, level: int, prefix: list[int]) -> None:
        n = self.counts[level]
        self._unit(e, level, prefix, 0)
        e.cycle(1, n - 1, lambda x: self._unit(e, level, prefix, x))
        if n > 1:
            self._unit(e, level, prefix, n - 1)

    def _unit(self, e: Emitter, level: int, prefix: list[int], x: int) -> None:
        if level == 2:
            self._step(e, self.index(prefix + [x]))
        else:
            self._level(e, level + 1, prefix + [x])

    def _step(self, e: Emitter, at: Index) -> None:
        i, k, j = at
        prev = self.previous(at)
        a_name, b_name, _c = self.names
        cost = self.costs
        if prev is None or (prev[0], prev[1]) != (i, k):
            self.slot["a"] = self.ring_a.take()
            e.add(cost.link("load", "a", self.slot["a"], a_name, self.rows(i), self.depth(k)))
        if prev is None or (prev[1], prev[2]) != (k, j):
            self.slot["b"] = self.ring_b.take()
            e.add(cost.link("load", "b", self.slot["b"], b_name, self.depth(k), self.cols(j)))
        fresh = False
        if prev is None or (prev[0], prev[2]) != (i, j):
            if prev is not None:
                self._finish_c(e, prev, self.slot["c"])
            self.slot["c"] = self.ring_c.take()
            if k > 0:
                back = cost.link(
                    "back", "c-back", self.slot["c"], f"{_c}.partial", self.rows(i), self.cols(j)
                )
                e.add(back)
            fresh = k == 0
        m0, m1 = self.rows(i)
        k0, k1 = self.depth(k)
        n0, n1 = self.cols(j)
        e.add(
            cost.compute(
                self.slot["a"], self.slot["b"], self.slot["c"], fresh, m1 - m0, k1 - k0, n1 - n0
            )
        )

    def _finish_c(self, e: Emitter, at: Index, slot: int) -> None:
        """The C block's drain: partial sums, or the finished block after its epilogue."""
        i, k, j = at
        c_name = self.names[2]
        if k < self.grid["k"] - 1:
            e.add(
                self.costs.link(
                    "spill", "c-partial", slot, f"{c_name}.partial", self.rows(i), self.cols(j)
                )
            )
            return
        steps = self.group.epilogue
        if steps:
            extra = []
            if self.ring_bias is not None:
                bias = self.ring_bias.take()
                e.add(self.costs.link("load", "b", bias, self.bias_name, (0, 1), self.cols(j)))
                extra.append(bias)
            if self.ring_res is not None:
                res = self.ring_res.take()
                e.add(
                    self.costs.link(
                        "load", "a", res, self.residual_name, self.rows(i), self.cols(j)
                    )
                )
                extra.append(res)
            m0, m1 = self.rows(i)
            n0, n1 = self.cols(j)
            e.add(
                self.costs.elementwise(steps, slot, slot, tuple(extra), m1 - m0, n1 - n0, "c", "c")
            )
        e.add(self.costs.link("drain", "c-final", slot, c_name, self.rows(i), self.cols(j)))


def _no_gate(steps: tuple[str, ...]) -> None:
    if "gate" in steps:
        raise ValueError("the systolic fused engine has no 'gate' epilogue step (GA-1's has)")


class PassBuild:
    """One elementwise step over an m x n tensor in DRAM, `rows` rows a block: load the block
    (and its residual block, and the bias), the vector unit's step in place, drain."""

    def __init__(
        self,
        costs: Costs,
        step: str,
        m: int,
        n: int,
        rows: int,
        names: tuple[str, str],
        bias: str = "BIAS",
    ) -> None:
        _no_gate((step,))
        self.costs, self.step, self.m, self.n, self.names = costs, step, m, n, names
        self.bias_name = bias
        self.rows = max(1, min(rows, m))
        slots = self.slots = Slots(costs.machine)
        self.x0 = slots.take("blocks", "a", self.rows * n, 2)
        self.res0 = (
            slots.take("residual blocks", "a", self.rows * n, 2) if step == "residual" else -1
        )
        self.bias0 = slots.take("bias", "b", n) if step == "bias" else -1

    def emit(self, e: Emitter) -> None:
        ring = e.ring(self.x0, 2)
        res = e.ring(self.res0, 2) if self.res0 >= 0 else None
        if self.bias0 >= 0:
            e.add(self.costs.link("load", "b", self.bias0, self.bias_name, (0, 1), (0, self.n)))
        blocks = -(-self.m // self.rows)
        e.cycle(0, blocks - 1, lambda b: self._block(e, b, ring, res))
        self._block(e, blocks - 1, ring, res)

    def _block(self, e: Emitter, b: int, ring: object, res: object) -> None:
        from simcore.systolic.fused.ops import Ring

        assert isinstance(ring, Ring)
        src, out = self.names
        rows = _span(b, self.rows, self.m)
        slot = ring.take()
        e.add(self.costs.link("load", "a", slot, src, rows, (0, self.n)))
        extra: list[int] = []
        if isinstance(res, Ring):
            r = res.take()
            e.add(self.costs.link("load", "a", r, "R", rows, (0, self.n)))
            extra.append(r)
        if self.bias0 >= 0:
            extra.append(self.bias0)
        count = rows[1] - rows[0]
        e.add(
            self.costs.elementwise((self.step,), slot, slot, tuple(extra), count, self.n, "a", "a")
        )
        e.add(self.costs.link("drain", "c-final", slot, out, rows, (0, self.n)))
