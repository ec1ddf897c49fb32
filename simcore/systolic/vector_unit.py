"""A minimal vector unit beside the systolic array, for the elementwise work of a fused group
(a bias, an activation, a residual add, a scale) on a block that stays on chip.

It has `lanes` lanes; an operation on E elements takes ceil(E / lanes) passes of the
operation's cycles per pass. The compound operations are composed as GA-1's vector programs
compose them (docs/vector.md): GELU in tanh form as x / (1 + exp(-2u)) with u = sqrt(2/pi)
(x + 0.044715 x^3), SiLU as x / (1 + exp(-x)), each exp and divide on a special-function path
`special` times slower than a lane pass. The unit reads and writes the on-chip stores through
its own share of their ports (`port_words` words a cycle each way), so a block also takes at
least its words over that width. Energy: each lane operation at the technology table's
vector_add/mul/div and sfu energies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

# Lane operations each elementwise step takes, by kind: add (add, subtract, max, negate, relu),
# mul, div, and sfu (exp)
STEP_LANE_OPS: dict[str, dict[str, int]] = {
    "bias": {"add": 1},
    "residual": {"add": 1},
    "relu": {"add": 1},
    "scale": {"mul": 1},
    "gelu": {"mul": 4, "add": 2, "sfu": 1, "div": 1},
    "silu": {"add": 2, "sfu": 1, "div": 1},
}


@dataclass(frozen=True)
class VectorUnit:
    """lanes: elements a pass works on; special: cycles of an exp or a divide per pass (a
    plain lane operation takes one); port_words: its share of a store's read and write
    ports, in words a cycle (None: as many as it has lanes)."""

    lanes: int
    special: int = 4
    port_words: Fraction | None = None

    def __post_init__(self) -> None:
        for name in ("lanes", "special"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"vector unit: {name} must be a positive integer, got {value!r}")
        if self.port_words is not None:
            port = Fraction(self.port_words)
            if port <= 0:
                raise ValueError(f"vector unit: port_words must be positive, got {port}")
            object.__setattr__(self, "port_words", port)

    @property
    def port(self) -> Fraction:
        return Fraction(self.lanes) if self.port_words is None else Fraction(self.port_words)

    def pass_cycles(self, steps: tuple[str, ...]) -> int:
        """Cycles of one pass of every step over `lanes` elements."""
        total = 0
        for step in steps:
            ops = STEP_LANE_OPS[step]
            total += ops.get("add", 0) + ops.get("mul", 0)
            total += self.special * (ops.get("div", 0) + ops.get("sfu", 0))
        return total

    def cycles(
        self, steps: tuple[str, ...], elements: int, read_words: Fraction, write_words: Fraction
    ) -> int:
        """A block's time: its passes, or its words at the unit's port share if longer."""
        passes = math.ceil(elements / self.lanes) * self.pass_cycles(steps)
        ports = max(math.ceil(read_words / self.port), math.ceil(write_words / self.port))
        return max(passes, ports)


def lane_ops(steps: tuple[str, ...], elements: int) -> dict[str, int]:
    """Lane operations by kind of `steps` over `elements` elements."""
    found: dict[str, int] = {}
    for step in steps:
        for kind, count in STEP_LANE_OPS[step].items():
            found[kind] = found.get(kind, 0) + count * elements
    return found


def default_vector_unit(cols: int) -> VectorUnit:
    """One lane per array column (the outputs leave the array a row of `cols` at a time), an
    exp or a divide four times a lane pass (GA-1's exp path is a quarter of its lanes)."""
    return VectorUnit(lanes=cols)
