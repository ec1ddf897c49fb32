"""What every vector kernel declares: its passes over a row band, its slots and its arithmetic.

A program visits tiles pass by pass. A pass's visit may load the tile (streamed passes, and the
first pass of a resident band), a second operand and, at a column's first visit, the column's
parameter tiles; the kernel's `compute` then works on the slots the plan gives it, and an output
pass leaves its result in the tile's own slot, which the plan stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from simcore.ga1.vector.ops import VectorOp
from simcore.ga1.vector.params import VectorParams

if TYPE_CHECKING:
    from simcore.ga1.vector.emit import Emitter
    from simcore.ga1.vector.plan import Plan, Visit


@dataclass(frozen=True)
class PassSpec:
    """One pass over a band's tiles. `loads`: the pass reads its tiles from DRAM; `output`: it
    stores them; `params`: per-column tensors it reads; `second`: it reads a second operand."""

    name: str
    loads: bool
    output: bool = False
    params: tuple[str, ...] = ()
    second: bool = False


@dataclass(frozen=True)
class Const:
    """A tile kept in a slot for the whole program: "ones", "zero", "scaled" (ones times
    `value`), or "dram" (loaded once from the tensor `name`)."""

    name: str
    source: str
    value: float = 0.0


class Kernel:
    """Base of the kernels (one file per family)."""

    band_output: bool = False  # stores a statistic per band (row sums, row maxima)

    def stats(self, op: VectorOp, params: VectorParams) -> int:
        """Statistic slots per band."""
        return 0

    def passes(self, op: VectorOp, params: VectorParams) -> tuple[PassSpec, ...]:
        raise NotImplementedError

    def temps(self, op: VectorOp, params: VectorParams) -> int:
        return 0

    def consts(self, op: VectorOp, cols_in_last_tile: int, tile: int) -> tuple[Const, ...]:
        return ()

    def period(self, params: VectorParams, bands: int) -> int:
        """Visits of a pass after which the kernel's own choices repeat (an alternating slot)."""
        return 1

    def compute(self, e: Emitter, plan: Plan, v: Visit) -> None:
        raise NotImplementedError


def accumulate(
    e: Emitter, func: str, acc: int, x: int, first: bool, last: bool, reduce: str
) -> None:
    """acc := acc func x elementwise over a band's tiles; at the last tile, the row reduction
    broadcast across acc (a one-tile band is reduced at once)."""
    if first and last:
        e.rowred(reduce, acc, x)
        return
    if first:
        e.copy(acc, x)
    else:
        e.vop(func, acc, acc, x)
    if last:
        e.rowred(reduce, acc, acc)
