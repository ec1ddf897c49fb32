"""What each non-GEMM operation asks of a systolic machine's vector unit (one declaration).

An operation works on `batch` matrices of `rows` x `cols`, the last axis `cols` (the axis
softmax, the norms and a reduction run along). Its work is declared per element and per row:

* `lane_ops`: lane operations per element by class: `add` (add, subtract, max, min, compare,
  relu, a masked add, a reduction's accumulate), `mul`, `div`, `sfu` (exp, rsqrt, erf, tanh,
  log: the special-function path) and `move` (a word moved across lanes, a transpose);
* `row_ops`: scalar steps per row (a mean's 1/n, a norm's eps and rsqrt), each a lane pass;
* `reductions`: cross-lane reductions per row (a tree of log2(min(lanes, cols)) steps each);
* `streams` and `params`: the words it loads from DRAM per element (two for a residual add) and
  the parameter vectors of `cols` words it loads with each chunk (a bias; gamma and beta);
* `sweeps` and `writes`: how often the unit reads and writes a chunk's elements in the store;
* `reduced`: one output per row (a reduction, a pool) instead of one per element;
* `dma`: a copy through the store with no lane work (copy, concat, gather, kv_append).

The compound operations are composed as GA-1's vector programs compose them (docs/vector.md):
softmax in two passes over the row with its exponentials kept (max; exp(s (x - max)) and their
sum; a divide), layer norm in three (the mean; the variance of x - mean; the output), RMS norm
in two, GELU in tanh form as x / (1 + exp(-2u)), SiLU as x / (1 + exp(-x)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

LANE_CLASSES: tuple[str, ...] = ("add", "mul", "div", "sfu", "move")
Counts = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Work:
    """One operation's demands on the vector unit (module doc)."""

    lane_ops: Counts = ()
    row_ops: Counts = ()
    reductions: int = 0
    streams: int = 1
    params: int = 0
    sweeps: int = 1
    writes: int = 1
    reduced: bool = False
    dma: bool = False


def _w(**lane: int) -> Work:
    return Work(tuple(lane.items()))


# Elementwise functions by name (an ONNX op's): their lane operations per element.
FUNCTIONS: dict[str, Counts] = {
    **{f: (("add", 1),) for f in ("Neg", "Abs", "Floor", "Ceil", "Round", "Max", "Min", "Add")},
    **{f: (("add", 1),) for f in ("Sub", "Equal", "Less", "Greater", "Not", "And", "Or")},
    **{f: (("add", 1),) for f in ("Where", "Cast", "Relu")},
    **{f: (("sfu", 1),) for f in ("Tanh", "Erf", "Exp", "Log", "Sqrt", "Sin", "Cos")},
    "Mul": (("mul", 1),),
    "Pow": (("mul", 1),),  # a square, the exponent ONNX exports use
    "Div": (("div", 1),),
    "Reciprocal": (("div", 1),),
    "Clip": (("add", 2),),  # ReLU6: a max and a min
    "Sigmoid": (("add", 2), ("sfu", 1), ("div", 1)),
    "LeakyRelu": (("add", 1), ("mul", 1)),
    "HardSigmoid": (("add", 3), ("mul", 1)),
    "HardSwish": (("add", 3), ("mul", 2)),
    "Softplus": (("add", 1), ("sfu", 2)),
    "Elu": (("add", 2), ("mul", 1), ("sfu", 1)),
    "Mish": (("add", 1), ("mul", 1), ("sfu", 3)),
    "BatchNormalization": (("add", 1), ("mul", 1)),
}
REDUCTIONS = frozenset({"sum", "mean", "max", "min"})
POOLS = {"MaxPool": "max", "GlobalMaxPool": "max", "AveragePool": "mean"}
POOLS["GlobalAveragePool"] = "mean"
COPIES = frozenset({"copy", "concat", "gather", "kv_append"})


class VectorTaskError(ValueError):
    """An operation the vector unit has no program for (an unknown kind or function)."""


@dataclass(frozen=True)
class VectorTask:
    """One operation for the vector unit: kind, shape and the options that change its work
    (`fn` of a reduction, a pool or an elementwise function; softmax's `scaled` and
    `causal`; gelu's `form`)."""

    kind: str
    batch: int
    rows: int
    cols: int
    fn: str = ""
    scaled: bool = False
    causal: bool = False
    form: str = "tanh"

    def __post_init__(self) -> None:
        for name in ("batch", "rows", "cols"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise VectorTaskError(f"{self.kind}: {name} must be a positive integer")
        self.work()  # refuses what it cannot do

    @property
    def total_rows(self) -> int:
        return self.batch * self.rows

    @property
    def elements(self) -> int:
        return self.batch * self.rows * self.cols

    def work(self) -> Work:
        kind = self.kind
        if kind in SIMPLE:
            return SIMPLE[kind]
        if kind in COPIES:
            return Work(dma=True, sweeps=0, writes=0)
        if kind == "gelu":
            if self.form == "erf":  # vscale, sfu erf, add, mul, vscale
                return _w(add=1, mul=3, sfu=1)
            return _w(add=2, mul=4, sfu=1, div=1)
        if kind == "softmax":
            lanes = {"add": 3 + self.causal, "mul": int(self.scaled), "sfu": 1, "div": 1}
            counts = tuple((k, v) for k, v in lanes.items() if v)
            return Work(counts, (), 2, sweeps=3, writes=2)
        if kind in ("reduce", "pool"):
            fn = POOLS.get(self.fn, self.fn) if kind == "pool" else self.fn
            if fn not in REDUCTIONS:
                raise VectorTaskError(f"{kind}: no vector program for {self.fn or 'it'}")
            row = (("mul", 1),) if fn == "mean" else ()
            return Work((("add", 1),), row, 1, reduced=True)
        if kind == "elementwise":
            if self.fn not in FUNCTIONS:
                raise VectorTaskError(f"elementwise: no vector program for {self.fn or 'it'}")
            return Work(FUNCTIONS[self.fn])
        raise VectorTaskError(f"no vector program for a {kind} operation")

    def pass_cycles(self, special: int) -> int:
        """Cycles of one lane pass of every per-element step (special: an sfu or divide's)."""
        return class_cycles(self.work().lane_ops, special)

    def row_cycles(self, lanes: int, special: int) -> int:
        """Cycles per row outside the passes: its scalar steps and its reduction trees."""
        work = self.work()
        tree = math.ceil(math.log2(min(lanes, self.cols))) if self.cols > 1 else 0
        return class_cycles(work.row_ops, special) + work.reductions * tree

    def lane_counts(self, lanes: int) -> dict[str, int]:
        """Lane operations by class over the whole operation (a tree step counts as one add
        per lane it combines)."""
        work = self.work()
        found = dict.fromkeys(LANE_CLASSES, 0)
        for name, count in work.lane_ops:
            found[name] += count * self.elements
        for name, count in work.row_ops:
            found[name] += count * self.total_rows
        found["add"] += work.reductions * self.total_rows * (min(lanes, self.cols) - 1)
        return found


def class_cycles(counts: Counts, special: int) -> int:
    return sum(count * (special if name in ("div", "sfu") else 1) for name, count in counts)


SIMPLE: dict[str, Work] = {
    "relu": _w(add=1),
    "scale": _w(mul=1),
    "silu": _w(add=2, sfu=1, div=1),
    "add": Work((("add", 1),), streams=2, sweeps=2),
    "mul": Work((("mul", 1),), streams=2, sweeps=2),
    "bias": Work((("add", 1),), params=1, sweeps=2),
    "transpose": _w(move=1),
    # mean: a sum and its 1/n; var: (x - mean)^2 summed and its 1/n, + eps, rsqrt; out:
    # (x - mean) rstd gamma + beta
    "layernorm": Work(
        (("add", 5), ("mul", 3)), (("mul", 2), ("add", 1), ("sfu", 1)), 2, params=2, sweeps=5
    ),
    # x^2 summed, its 1/n, + eps, rsqrt; out: x rstd gamma
    "rmsnorm": Work(
        (("add", 1), ("mul", 3)), (("mul", 1), ("add", 1), ("sfu", 1)), 1, params=1, sweeps=3
    ),
}
