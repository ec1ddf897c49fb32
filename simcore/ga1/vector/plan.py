"""The plan of a vector program: its tiles, bands, passes and slots, and every visit's
description computed from the visit's coordinates alone.

Visits are numbered (matrix h, band group k, pass p, position i); in a pass, position
i = j * bands + b visits column j of the group's band b (column order; a group of one band is
row order). Slots, in order: constants, temporaries, statistics (per band of a group; two sets
alternating by group when a band's statistic is stored), parameter tiles (a ring of sets, one
set per column), the second operand's ring, then the tile ring. A streamed tile takes the next
ring slot; a resident band's tiles stay in theirs until stored. A stored tile is stored
`buffers - 1` visits after its own, so the loads of the next visits go first.

Every quantity below is closed-form arithmetic on the coordinates: a visit is described without
walking the visits before it (what lets a timing tree describe a program of millions of tiles).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from simcore.ga1.machine import Machine
from simcore.ga1.schedules import ScheduleError
from simcore.ga1.vector.kernels.base import Const, Kernel, PassSpec
from simcore.ga1.vector.ops import VectorOp
from simcore.ga1.vector.params import VectorParams, check_applicable

X, SECOND, OUT = "X", "W", "Y"  # the input, a binary operation's second input, the output


class Visit(NamedTuple):
    """One visit: where it is, what it loads, which slots it works on."""

    h: int
    k: int
    p: int
    i: int
    j: int  # column tile
    b: int  # band within the group
    band: int  # band (row tile) within the matrix
    first: bool  # the band's first tile in this pass
    last: bool  # the band's last tile in this pass
    masked: bool  # every entry masked (causal): nothing to load, zeros stored
    cols: int  # valid columns of this tile
    pad: bool  # the tile sticks out of the row (cols < T)
    diag: int  # causal mask tile crossing this tile: 0 or 1, -1 for none
    x: int  # the tile's slot
    second: int  # the second operand's slot, -1 for none
    params: tuple[int, ...]  # this column's parameter slots
    stats: tuple[int, ...]  # the band's statistic slots
    stats_cols: int  # tiles of the band the statistics passes visit
    x_load: bool
    second_load: bool
    param_load: bool
    output: bool  # the tile is stored after this visit


class Plan:
    """Geometry, slots and visits of one operation, schedule and machine."""

    def __init__(
        self, op: VectorOp, params: VectorParams, machine: Machine, kernel: Kernel
    ) -> None:
        check_applicable(op, params)
        self.op, self.params, self.machine, self.kernel = op, params, machine, kernel
        T = self.T = machine.T
        self.passes: tuple[PassSpec, ...] = kernel.passes(op, params)
        self.matrices = op.batch if op.per_matrix else 1
        rows = op.rows if op.per_matrix else op.batch * op.rows
        self.Rt, self.Ct = -(-rows // T), -(-op.cols // T)
        self.cv = op.cols - (self.Ct - 1) * T  # valid columns of the last tile column
        self.g = min(params.group, self.Rt)
        self.G = -(-self.Rt // self.g)
        self.G_full = self.Rt // self.g
        self.delay = params.buffers - 1
        self.resident = params.reduction == "resident" and op.family == "rows"
        self._loading = sum(1 for spec in self.passes if spec.loads)
        self._layout_slots()
        self._matrix_tiles = self._band_tiles_before(self.G)
        self._pass_bases: dict[tuple[int, int, int], int] = {}  # _x_before's, by pass

    # ---- geometry
    def bands(self, k: int) -> int:
        return min(self.g, self.Rt - k * self.g)

    def stats_cols(self, k: int) -> int:
        """Tiles of band group k a statistics pass visits (causal: up to the diagonal)."""
        if not self.op.causal:
            return self.Ct
        T, off = self.T, self.op.causal_offset
        return min(self.Ct, k + 1 + (T - 1 + off) // T)

    def pass_cols(self, k: int, p: int) -> int:
        return self.Ct if self.passes[p].output else self.stats_cols(k)

    def pass_visits(self, k: int, p: int) -> int:
        return self.pass_cols(k, p) * self.bands(k)

    def group_visits(self, k: int) -> int:
        return sum(self.pass_visits(k, p) for p in range(len(self.passes)))

    def matrix_visits(self) -> int:
        return self._visits_before(self.G)

    def _visits_before(self, k: int) -> int:
        """Visits of the band groups before k in a matrix."""
        outputs = sum(1 for spec in self.passes if spec.output)
        stats = len(self.passes) - outputs
        return stats * self._band_tiles_before(k) + outputs * min(k * self.g, self.Rt) * self.Ct

    # ---- slots
    def _layout_slots(self) -> None:
        op, params, kernel = self.op, self.params, self.kernel
        consts = kernel.consts(op, self.cv, self.T)
        self.consts: dict[str, int] = {c.name: n for n, c in enumerate(consts)}
        self.const_list: tuple[Const, ...] = consts
        self.temp0 = len(consts)
        self.stats0 = self.temp0 + kernel.temps(op, params)
        self.sets = 2 if kernel.band_output and params.buffers > 1 else 1
        self.spb = kernel.stats(op, params)
        self.params0 = self.stats0 + self.sets * self.g * self.spb
        self.param_names = next((s.params for s in self.passes if s.params), ())
        self.kp = len(self.param_names)
        self.S = 1 + -(-(params.buffers - 1) // self.g) if self.kp else 0
        self.second0 = self.params0 + self.S * self.kp
        self.R_y = params.buffers if any(s.second for s in self.passes) else 0
        self.x0 = self.second0 + self.R_y
        held = self.g * self.Ct if self.resident else 1
        self.R_x = held + params.buffers - 1
        self.slots_needed = self.x0 + self.R_x
        if self.slots_needed > self.machine.slots:
            raise ScheduleError(
                f"{op.kind} with {params} needs {self.slots_needed} slots, the scratchpad has "
                f"{self.machine.slots}"
            )

    # ---- tensors
    def _named(self, base: str, h: int) -> str:
        return f"{base}_{h}" if self.matrices > 1 else base

    def x_name(self, h: int) -> str:
        return self._named(X, h)

    def out_name(self, h: int) -> str:
        return self._named(OUT, h)

    def temp(self, n: int) -> int:
        return self.temp0 + n

    def const(self, name: str) -> int:
        return self.consts[name]

    # ---- counts before a visit (closed forms)
    def _stats_cols_before(self, k: int) -> int:
        """Sum of stats_cols over the band groups before k in a matrix."""
        if not self.op.causal:
            return k * self.Ct
        c0 = 1 + (self.T - 1 + self.op.causal_offset) // self.T
        rising = max(0, min(k, self.Ct - c0 + 1))  # groups whose count is k' + c0 <= Ct
        return rising * c0 + rising * (rising - 1) // 2 + (k - rising) * self.Ct

    def _band_tiles_before(self, k: int) -> int:
        """Tiles a statistics pass visits in the band groups before k (all of them: k = G)."""
        if self.op.causal:  # one band per group
            return self._stats_cols_before(k)
        return min(k * self.g, self.Rt) * self.Ct

    def _x_before(self, h: int, k: int, p: int, i: int) -> int:
        """Tiles loaded into the ring before visit (h, k, p, i)."""
        base = self._pass_bases.get((h, k, p))
        if base is None:
            done = self._loading * (h * self._matrix_tiles + self._band_tiles_before(k))
            tiles = self.bands(k) * self.stats_cols(k)
            base = done + sum(tiles for s in self.passes[:p] if s.loads)
            self._pass_bases[(h, k, p)] = base
        return base + min(i, self.bands(k) * self.stats_cols(k))

    def _params_before(self, h: int, k: int, i: int) -> int:
        """Parameter sets loaded before visit (h, k, output pass, i)."""
        return (h * self.G + k) * self.Ct + -(-i // self.bands(k))

    def _second_before(self, h: int, k: int, i: int) -> int:
        return (h * self.Rt + k * self.g) * self.Ct + i

    # ---- visits
    def visit(self, h: int, k: int, p: int, i: int) -> Visit:
        spec, nb = self.passes[p], self.bands(k)
        j, b = divmod(i, nb)
        band = k * self.g + b
        n = self.stats_cols(k)
        masked = j >= n
        last_col = self.pass_cols(k, p) - 1
        diag = self._diag(band, j) if self.op.causal and not masked else -1
        x_load = spec.loads and not masked
        if self.resident and not spec.loads:
            x = self.x0 + self._x_before(h, k, 0, j * nb + b) % self.R_x
        else:
            x = self.x0 + self._x_before(h, k, p, i) % self.R_x
        second = self.second0 + self._second_before(h, k, i) % self.R_y if spec.second else -1
        params: tuple[int, ...] = ()
        if spec.params:
            at = self.params0 + (self._params_before(h, k, j * nb) % self.S) * self.kp
            params = tuple(range(at, at + self.kp))
        st = self.stats0 + (((h * self.G + k) % self.sets) * self.g + b) * self.spb
        return Visit(
            h, k, p, i, j, b, band,
            first=j == 0,
            last=j == last_col,
            masked=masked,
            cols=self.cv if j == self.Ct - 1 else self.T,
            pad=j == self.Ct - 1 and self.cv < self.T,
            diag=diag,
            x=x,
            second=second,
            params=params,
            stats=tuple(range(st, st + self.spb)),
            stats_cols=n,
            x_load=x_load,
            second_load=spec.second,
            param_load=bool(spec.params) and b == 0,
            output=spec.output and not masked and not self.kernel.band_output,
        )  # fmt: skip

    def stored(self, h: int, k: int, p: int, i: int) -> tuple[int, int, int] | None:
        """The slot and output tile an output visit's result is stored from and to."""
        if not self.passes[p].output or self.kernel.band_output:
            return None
        nb = self.bands(k)
        j, b = divmod(i, nb)
        if j >= self.stats_cols(k):  # masked: zeros, stored at once
            return None
        at = (h, k, 0, i) if self.resident else (h, k, p, i)
        band = k * self.g + b
        ti, tj = (j, band) if self.op.kind == "transpose" else (band, j)
        return self.x0 + self._x_before(*at) % self.R_x, ti, tj

    def _diag(self, band: int, j: int) -> int:
        """The causal mask tile for (band, column j): 0 or 1 where the diagonal crosses it."""
        t = (band - j) * self.T + self.op.causal_offset
        if t >= self.T - 1:
            return -1
        return 0 if t >= 0 else 1

    def earlier(
        self, h: int, k: int, p: int, i: int, back: int
    ) -> tuple[int, int, int, int] | None:
        """The visit `back` visits before (h, k, p, i), or None before the first."""
        while i < back:
            back -= i
            if p > 0:
                p -= 1
            elif k > 0:
                k, p = k - 1, len(self.passes) - 1
            elif h > 0:
                h, k, p = h - 1, self.G - 1, len(self.passes) - 1
            else:
                return None
            i = self.pass_visits(k, p)
        return h, k, p, i - back

    def group_key(self, h: int, k: int) -> tuple[int, ...]:
        """What a band group's instructions depend on besides k: the rings' and the statistic
        sets' phases at its start, and how many earlier visits its delayed stores may reach."""
        before = h * self._visits_before(self.G) + self._visits_before(k)
        return (
            k,
            self._x_before(h, k, 0, 0) % self.R_x,
            self._params_before(h, k, 0) % self.S if self.S else 0,
            self._second_before(h, k, 0) % self.R_y if self.R_y else 0,
            (h * self.G + k) % self.sets,
            min(before, self.delay),
        )

    # ---- periods (what a timing tree may repeat)
    def runs(self, k: int, p: int) -> list[tuple[int, int, int]]:
        """Runs [lo, hi) of pass p's positions whose visits repeat, each with its period: the
        pass's middle tiles, and (causal) its tiles above the diagonal."""
        nb, spec = self.bands(k), self.passes[p]
        specials = [self.pass_cols(k, p) - 1]
        if self.cv < self.T:
            specials.append(self.Ct - 1)
        if self.op.causal:
            specials.append(max(0, self.stats_cols(k) - 2))  # the diagonal's tiles, masked ones
        lo = max(nb, self.delay)
        hi = max(lo, min(specials) * nb)
        period = nb
        if spec.loads or self.resident:
            period = math.lcm(period, self.R_x)
        if spec.second:
            period = math.lcm(period, self.R_y)
        if spec.params:
            period = math.lcm(period, self.S * nb)
        found = [(lo, hi, math.lcm(period, self.kernel.period(self.params, nb)))]
        if self.op.causal and spec.output:  # zero stores only, once the last output is stored
            found.append((max(hi, self.stats_cols(k) + self.delay), self.Ct, 1))
        return found

    def advance_period(self, loads: int, params: int, seconds: int, stages: int) -> int:
        """Units after which every ring is back at its phase, given one unit's counts."""
        period = self.R_x // math.gcd(self.R_x, loads)
        if self.S:
            period = math.lcm(period, self.S // math.gcd(self.S, params))
        if self.R_y:
            period = math.lcm(period, self.R_y // math.gcd(self.R_y, seconds))
        return math.lcm(period, self.sets // math.gcd(self.sets, stages))

    def group_period(self) -> int:
        """Full band groups after which the rings and statistic sets are back at their phase."""
        g = self.g
        loads = self._loading * g * self.Ct
        return self.advance_period(loads, self.Ct, g * self.Ct, 1)

    def matrix_period(self) -> int:
        """Matrices after which the rings and statistic sets are back at their phase."""
        loads = self._loading * self._matrix_tiles
        return self.advance_period(loads, self.G * self.Ct, self.Rt * self.Ct, self.G)
