"""The schedules of the systolic fused groups, and their parameters declared as data.

`GemmSchedule` (a product with its epilogue, and every product of an unfused group): block sides
bm, bk, bn, the loop order over the blocks (outermost first) and each operand's buffering, as a
block schedule of the memory system has them (one block of each operand on chip).

`MlpSchedule` (Y = act(X W1 + b1) W2 + b2 fused): row blocks of bm rows of X; for each hidden
block of bh columns, the up projection over k blocks of bk, the vector unit's bias and
activation, and the down projection into Y over n blocks of bn. `x_resident` keeps the row
block of X on chip for all hidden blocks (else it is loaded again for each); `y_resident` keeps
the row block of Y in the accumulators across the hidden blocks (else its partial sums are
spilled to DRAM and read back between hidden blocks); `buffering` is the slots of each streamed
block (X when streamed, W1, W2); `h_buffers` = 2 holds two hidden blocks, so that the up
projection of the next runs on the array while the vector unit works on this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from simcore.fusion.groups import EpilogueGemm, FusedMlp
from simcore.systolic.blocked.schedule import LOOP_ORDERS
from simcore.systolic.blocked.space import ParamSpec


def _positive(owner: object, *names: str) -> None:
    for name in names:
        value = getattr(owner, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _choice(name: str, value: object, allowed: tuple[object, ...]) -> None:
    if isinstance(value, bool) and not all(isinstance(a, bool) for a in allowed):
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


@dataclass(frozen=True)
class GemmSchedule:
    bm: int
    bk: int
    bn: int
    order: str = "mnk"
    buffering: tuple[int, int, int] = (2, 2, 2)

    def __post_init__(self) -> None:
        _positive(self, "bm", "bk", "bn")
        _choice("order", self.order, LOOP_ORDERS)
        if len(self.buffering) != 3 or any(b not in (1, 2) for b in self.buffering):
            raise ValueError(f"buffering must be three of 1 or 2, got {self.buffering!r}")

    def clipped(self, m: int, k: int, n: int) -> GemmSchedule:
        return GemmSchedule(
            min(self.bm, m), min(self.bk, k), min(self.bn, n), self.order, self.buffering
        )

    def describe(self) -> str:
        names = "".join("sd"[b - 1] for b in self.buffering)
        return f"{self.bm}x{self.bk}x{self.bn} {self.order} {names}"


@dataclass(frozen=True)
class MlpSchedule:
    bm: int
    bk: int
    bh: int
    bn: int
    x_resident: bool = False
    y_resident: bool = True
    buffering: int = 2
    h_buffers: int = 1

    def __post_init__(self) -> None:
        _positive(self, "bm", "bk", "bh", "bn")
        _choice("x_resident", self.x_resident, (False, True))
        _choice("y_resident", self.y_resident, (False, True))
        _choice("buffering", self.buffering, (1, 2))
        _choice("h_buffers", self.h_buffers, (1, 2))

    def clipped(self, group: FusedMlp) -> MlpSchedule:
        g = group
        return MlpSchedule(
            min(self.bm, g.m),
            min(self.bk, g.d),
            min(self.bh, g.hidden),
            min(self.bn, g.d_out),
            self.x_resident,
            self.y_resident,
            self.buffering,
            self.h_buffers,
        )

    def describe(self) -> str:
        x = "X resident" if self.x_resident else "X streamed"
        y = "Y resident" if self.y_resident else "Y spilled"
        return (
            f"rows {self.bm}, k {self.bk}, hidden {self.bh}, n {self.bn}, {x}, {y}, "
            f"buffering {self.buffering}, hidden sets {self.h_buffers}"
        )


def gemm_params(group: EpilogueGemm) -> tuple[ParamSpec, ...]:
    return (
        ParamSpec("bm", "rows of A and C in a block", 1, group.m, group.m > 1),
        ParamSpec("bk", "the reduction's share of a block", 1, group.k, group.k > 1),
        ParamSpec("bn", "columns of B and C in a block", 1, group.n, group.n > 1),
        ParamSpec("order", "loop order over the blocks, outermost first", choices=LOOP_ORDERS),
        ParamSpec("buffer_a", "slots of A's block (2: double buffered)", choices=(1, 2)),
        ParamSpec("buffer_b", "slots of B's block", choices=(1, 2)),
        ParamSpec("buffer_c", "slots of C's block", choices=(1, 2)),
    )


def mlp_params(group: FusedMlp) -> tuple[ParamSpec, ...]:
    g = group
    return (
        ParamSpec("bm", "rows of X in a row block", 1, g.m, g.m > 1),
        ParamSpec("bk", "the up projection's reduction share", 1, g.d, g.d > 1),
        ParamSpec("bh", "hidden columns in a hidden block", 1, g.hidden, g.hidden > 1),
        ParamSpec("bn", "columns of Y in a block of the down projection", 1, g.d_out, g.d_out > 1),
        ParamSpec("x_resident", "X's row block stays on chip", choices=(False, True)),
        ParamSpec("y_resident", "Y's row block stays in the accumulators", choices=(False, True)),
        ParamSpec("buffering", "slots of each streamed block", choices=(1, 2)),
        ParamSpec("h_buffers", "hidden blocks on chip (2: pipelined)", choices=(1, 2)),
    )


def _int(point: Mapping[str, object], name: str) -> int:
    if name not in point:
        raise ValueError(f"schedule point lacks {name}")
    value = point[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return value


def gemm_schedule_of(point: Mapping[str, object]) -> GemmSchedule:
    a, b, c = (_int(point, f"buffer_{x}") for x in "abc")
    order = point.get("order", "mnk")
    return GemmSchedule(
        _int(point, "bm"), _int(point, "bk"), _int(point, "bn"), str(order), (a, b, c)
    )


def mlp_schedule_of(point: Mapping[str, object]) -> MlpSchedule:
    flags = {name: bool(point.get(name, False)) for name in ("x_resident", "y_resident")}
    return MlpSchedule(
        _int(point, "bm"),
        _int(point, "bk"),
        _int(point, "bh"),
        _int(point, "bn"),
        flags["x_resident"],
        flags["y_resident"],
        _int(point, "buffering"),
        _int(point, "h_buffers"),
    )
