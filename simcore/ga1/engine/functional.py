"""Functional mode, compiled, for the instructions the generators emit: load, store, zero and
the matrix unit's product (simcore/ga1/functional.py is the reference, for every opcode).

The scratchpad is a (slots, T, T) array; tensors 0, 1 and 2 (A, B and C, as the rows name them)
are 2-D arrays; `scratch` holds one tile, for a product whose accumulator is also an operand.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import callee, kernel
from simcore.ga1.program import LOAD, MXU, STORE, ZERO

COMPILED_OPS = frozenset({LOAD, STORE, ZERO, MXU})


@callee
def _product(spad: np.ndarray, scratch: np.ndarray, c: int, a: int, b: int) -> None:
    T = spad.shape[1]
    for r in range(T):
        for col in range(T):
            total = 0.0
            for q in range(T):
                total += spad[a, r, q] * spad[b, q, col]
            scratch[r, col] = total
    for r in range(T):
        for col in range(T):
            spad[c, r, col] = spad[c, r, col] + scratch[r, col]


@callee
def _zero(spad: np.ndarray, s: int) -> None:
    T = spad.shape[1]
    for r in range(T):
        for col in range(T):
            spad[s, r, col] = 0.0


@callee
def _load(spad: np.ndarray, s: int, matrix: np.ndarray, x: int, y: int) -> None:
    T = spad.shape[1]
    # the part of the tile inside the tensor; the rest is zero padding
    rows = min(T, max(0, matrix.shape[0] - x * T))
    cols = min(T, max(0, matrix.shape[1] - y * T))
    _zero(spad, s)
    for r in range(rows):
        for col in range(cols):
            spad[s, r, col] = matrix[x * T + r, y * T + col]


@callee
def _store(spad: np.ndarray, s: int, matrix: np.ndarray, x: int, y: int) -> None:
    T = spad.shape[1]
    rows = min(T, max(0, matrix.shape[0] - x * T))
    cols = min(T, max(0, matrix.shape[1] - y * T))
    for r in range(rows):
        for col in range(cols):
            matrix[x * T + r, y * T + col] = spad[s, r, col]


@kernel
def execute_rows(
    spad: np.ndarray,
    scratch: np.ndarray,
    tensor_a: np.ndarray,
    tensor_b: np.ndarray,
    tensor_c: np.ndarray,
    rows: np.ndarray,
    n: int,
) -> None:
    """The arithmetic of rows[0:n], in program order."""
    for index in range(n):
        op, s0, t, x, y = (
            rows[index, 0],
            rows[index, 2],
            rows[index, 5],
            rows[index, 6],
            rows[index, 7],
        )
        if op == MXU:
            _product(spad, scratch, s0, rows[index, 3], rows[index, 4])
        elif op == ZERO:
            _zero(spad, s0)
        elif op == LOAD or op == STORE:
            matrix = tensor_a if t == 0 else tensor_b if t == 1 else tensor_c
            if op == LOAD:
                _load(spad, s0, matrix, x, y)
            else:
                _store(spad, s0, matrix, x, y)
