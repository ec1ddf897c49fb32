"""What a vector operation must compute, in numpy, and the DRAM a program of it runs on.

Inputs are drawn to stress what each program must get right: softmax rows carry offsets of
hundreds (exp overflows unless the row maximum is subtracted), norm rows offsets of tens (the
variance must be of x - mean), so a program missing either step fails by far more than the
tolerance.

Tolerance: the programs and numpy both compute in float64; they differ only in the order of
additions (a row is summed tile by tile, then across a tile's columns; numpy sums pairwise), in
the way a division or tanh is composed (x / (1 + exp(-2u)) for 0.5 x (1 + tanh u)), and in
where a reciprocal square root is taken. Each costs a few units in the last place per
operation, growing with the log of the row length, far below RTOL = 1e-9 (relative) and
ATOL = 1e-12 (absolute, for results that are zero up to rounding, such as GELU's far negative
tail, where 1 + tanh(u) in numpy's formula has itself cancelled to nothing).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from simcore.ga1.vector.kernels.maps import GELU_CUBIC, GELU_TANH_SCALE
from simcore.ga1.vector.ops import BINARY, VectorOp
from simcore.ga1.vector.plan import SECOND, Plan

RTOL = 1e-9
ATOL = 1e-12
_ERF = np.vectorize(math.erf, otypes=[np.float64])


def _matrix_inputs(op: VectorOp, rng: np.random.Generator, rows: int) -> np.ndarray:
    x = rng.standard_normal((rows, op.cols)) * 2.0
    if op.kind == "softmax":
        x += rng.uniform(-800.0, 800.0, size=(rows, 1))
    elif op.kind in ("layernorm", "rmsnorm"):
        x += rng.uniform(-30.0, 30.0, size=(rows, 1))
    elif op.kind in ("clip", "tanh"):  # past ReLU6's upper bound; tanh's exp past overflow
        x *= rng.choice([1.0, 5.0, 400.0], size=(rows, 1))
    return x


def mask_tile(T: int, t: int) -> np.ndarray:
    """0 where column c - row r <= t within a tile, -inf elsewhere."""
    r, c = np.indices((T, T))
    return np.where(c - r <= t, 0.0, -np.inf)


def program_inputs(plan: Plan, seed: int = 1) -> dict[str, np.ndarray]:
    """DRAM for the plan's program: inputs, parameters (T identical rows), constants, and a zero
    output."""
    op, T, rng = plan.op, plan.T, np.random.default_rng(seed)
    dram: dict[str, np.ndarray] = {}
    rows = op.rows if op.per_matrix else op.batch * op.rows
    out_rows, out_cols = op.out_shape()
    if not op.per_matrix:
        out_rows = op.batch * out_rows
    for h in range(plan.matrices):
        dram[plan.x_name(h)] = _matrix_inputs(op, rng, rows)
        dram[plan.out_name(h)] = np.zeros((out_rows, out_cols))
    if op.kind in BINARY:
        dram[SECOND] = rng.standard_normal((rows, op.cols))
    for name in plan.param_names:
        vector = rng.standard_normal(op.cols) + (1.0 if name == "GAMMA" else 0.0)
        dram[name] = np.tile(vector, (T, 1))
    r = op.causal_offset % T
    constants = {"MASK0": mask_tile(T, r), "MASK1": mask_tile(T, r - T)}
    constants["PAD"] = np.where(np.arange(T) < plan.cv, 0.0, -np.inf)[None, :].repeat(T, 0)
    for const in plan.const_list:
        if const.source == "dram":
            dram[const.name] = constants[const.name]
    return dram


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(GELU_TANH_SCALE * (x + GELU_CUBIC * x**3)))


def gelu_erf(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _ERF(x / math.sqrt(2.0)))


def softmax(op: VectorOp, x: np.ndarray) -> np.ndarray:
    z = x * op.scale
    if op.causal:
        r, c = np.indices(z.shape)
        z = np.where(c <= r + op.causal_offset, z, -np.inf)
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def _row_op(op: VectorOp, x: np.ndarray, dram: dict[str, np.ndarray]) -> np.ndarray:
    if op.kind == "softmax":
        return softmax(op, x)
    if op.kind == "layernorm":
        centred = x - x.mean(axis=1, keepdims=True)
        rstd = 1.0 / np.sqrt((centred**2).mean(axis=1, keepdims=True) + op.eps)
        return centred * rstd * dram["GAMMA"][0] + dram["BETA"][0]
    if op.kind == "rmsnorm":
        return x / np.sqrt((x**2).mean(axis=1, keepdims=True) + op.eps) * dram["GAMMA"][0]
    if op.kind == "rowsum":
        return x.sum(axis=1, keepdims=True)
    return x.max(axis=1, keepdims=True)


def _map_op(op: VectorOp, x: np.ndarray, dram: dict[str, np.ndarray]) -> np.ndarray:
    with np.errstate(over="ignore"):
        table: dict[str, Callable[[], np.ndarray]] = {
            "relu": lambda: np.maximum(x, 0.0),
            "gelu": lambda: gelu_erf(x) if op.gelu == "erf" else gelu_tanh(x),
            "silu": lambda: x / (1.0 + np.exp(-x)),
            "tanh": lambda: np.tanh(x),
            "clip": lambda: np.clip(x, 0.0, 6.0),
            "scale": lambda: x * op.scale,
            "add": lambda: x + dram[SECOND],
            "mul": lambda: x * dram[SECOND],
            "bias": lambda: x + dram["BIAS"][0],
            "copy": lambda: x.copy(),
            "transpose": lambda: x.T.copy(),
        }
        return table[op.kind]()


def expected_outputs(plan: Plan, dram: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The output tensors numpy computes from the program's DRAM."""
    op = plan.op
    found = {}
    for h in range(plan.matrices):
        x = dram[plan.x_name(h)]
        run = _row_op if op.family == "rows" else _map_op
        found[plan.out_name(h)] = run(op, x, dram)
    return found


def within_tolerance(got: np.ndarray, want: np.ndarray) -> tuple[bool, float]:
    """Whether got equals want within RTOL and ATOL everywhere, and the largest error relative
    to the tolerance's allowance there (1.0 is the edge)."""
    if got.shape != want.shape:
        return False, math.inf
    if want.size == 0:
        return True, 0.0
    with np.errstate(invalid="ignore"):
        error = np.abs(got - want)
    error = np.where(got == want, 0.0, error)  # equal infinities
    worst = float(np.max(np.where(np.isnan(error), np.inf, error / (ATOL + RTOL * np.abs(want)))))
    return worst <= 1.0, worst
